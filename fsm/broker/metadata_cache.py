"""The metadata cache: what a broker answers to a MetadataRequest (seed 000, "cluster
metadata updates"), fed only by UpdateMetadata.

An UpdateMetadata *replaces* the entries it names (leader -2 removes the partition: it is
being deleted), replaces the live brokers wholesale and sets the controller id, as Kafka's
``MetadataCache.updateMetadata`` does. A malformed request changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fsm.broker.snapshot_codec import (
    decode_brokers,
    decode_metadata_partition,
    encode_broker,
    encode_metadata_partition,
)
from fsm.broker.validation import duplicate, live_brokers_reason, update_metadata_reason
from fsm.broker.views import MetadataPartition
from fsm.errors import ErrorCode
from fsm.requests import UpdateMetadataRequest
from fsm.values import LEADER_DURING_DELETE, BrokerInfo, TopicPartition

NO_CONTROLLER = -1  # what the Metadata API says when no controller is known


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """One topic of a Metadata answer: an error and its partitions (by partition id)."""

    topic: str
    error: ErrorCode
    partitions: tuple[tuple[int, MetadataPartition], ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataView:
    """An immutable copy of the whole cache (sorted: canonical)."""

    controller_id: int | None
    live_brokers: tuple[BrokerInfo, ...]
    partitions: tuple[tuple[TopicPartition, MetadataPartition], ...]


MetadataSnapshot = tuple[tuple[tuple[TopicPartition, tuple], ...], tuple[tuple[int, tuple], ...],
                         int | None]
"""Builtins only (``snapshot_codec``): sorted partitions, sorted brokers, controller id."""


class MetadataCache:
    __slots__ = ("partitions", "live_brokers", "controller_id", "_snap")

    def __init__(self) -> None:
        self.partitions: dict[TopicPartition, MetadataPartition] = {}
        self.live_brokers: dict[int, BrokerInfo] = {}
        self.controller_id: int | None = None
        self._snap: MetadataSnapshot | None = None  # cached until the next apply

    # ------------------------------------------------------------------ update

    def reject_reason(self, req: UpdateMetadataRequest) -> str | None:
        """Why ``req`` is malformed, or None."""
        if not isinstance(req.partitions, tuple):
            return "partitions is not a list"
        for p in req.partitions:
            reason = update_metadata_reason(p)
            if reason:
                return f"{p.topic}-{p.partition}: {reason}"
        dup = duplicate(p.tp for p in req.partitions)
        if dup is not None:
            return f"{dup[0]}-{dup[1]} named twice"
        return live_brokers_reason(req.live_brokers)

    def apply(self, req: UpdateMetadataRequest) -> None:
        """Apply a request that ``reject_reason`` accepted."""
        self._snap = None
        for p in req.partitions:
            if p.leader == LEADER_DURING_DELETE:
                self.partitions.pop(p.tp, None)
            else:
                self.partitions[p.tp] = MetadataPartition(
                    p.leader, p.leader_epoch, p.isr, p.replicas, p.offline_replicas)
        self.live_brokers = {b.broker_id: b for b in req.live_brokers}
        self.controller_id = req.controller_id

    # ------------------------------------------------------------------ queries

    def view(self) -> MetadataView:
        return MetadataView(self.controller_id,
                            tuple(b for _, b in sorted(self.live_brokers.items())),
                            tuple(sorted(self.partitions.items())))

    def topic_metadata(self, topics: Iterable[str] | None = None) -> tuple[TopicMetadata, ...]:
        """The topics part of a Metadata answer; ``None`` asks for every topic. A topic the
        cache does not hold is answered UNKNOWN_TOPIC_OR_PARTITION."""
        by_topic: dict[str, list[tuple[int, MetadataPartition]]] = {}
        for (topic, partition), mp in self.partitions.items():
            by_topic.setdefault(topic, []).append((partition, mp))
        names = sorted(by_topic) if topics is None else list(dict.fromkeys(topics))
        out = []
        for name in names:
            parts = by_topic.get(name)
            if parts is None:
                out.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                out.append(TopicMetadata(name, ErrorCode.NONE, tuple(sorted(parts))))
        return tuple(out)

    # ------------------------------------------------------------------ snapshot

    def snapshot(self) -> MetadataSnapshot:
        if self._snap is None:
            self._snap = (tuple(sorted((tp, encode_metadata_partition(m))
                                       for tp, m in self.partitions.items())),
                          tuple(sorted((i, encode_broker(b))
                                       for i, b in self.live_brokers.items())),
                          self.controller_id)
        return self._snap

    @classmethod
    def restore(cls, snap: MetadataSnapshot) -> MetadataCache:
        cache = cls()
        cache.partitions = {tp: decode_metadata_partition(m) for tp, m in snap[0]}
        cache.live_brokers = decode_brokers(snap[1])  # shared: only ever rebound, never mutated
        cache.controller_id = snap[2]
        cache._snap = snap
        return cache
