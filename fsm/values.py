"""Plain values shared by the controller, the broker core, the adapters and the world.

All are frozen dataclasses (hashable, comparable, cheap to copy). Replica
lists are tuples: order matters, the first replica is the preferred one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NO_LEADER = -1
"""Kafka's ``leader: -1``: the partition has no live leader."""

LEADER_DURING_DELETE = -2
"""Kafka's marker leader in UpdateMetadata for a partition being deleted."""

TopicPartition = tuple[str, int]
"""``(topic, partition)``; printed as ``topic-0`` (see ``fsm.partition_states.partition_label``)."""


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """The data of ``/brokers/topics/<t>/partitions/<p>/state``."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int


@dataclass(frozen=True, slots=True)
class PartitionStateZk:
    """A partition state as read from ZooKeeper: the data and its znode version."""

    leader_and_isr: LeaderAndIsr
    version: int


@dataclass(frozen=True, slots=True)
class Endpoint:
    listener: str  # e.g. "PLAINTEXT", "CONTROLLER"
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A registered broker: ``/brokers/ids/<id>``; ``epoch`` is that znode's czxid."""

    broker_id: int
    epoch: int
    endpoints: tuple[Endpoint, ...] = ()
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class TopicAssignment:
    """The data of ``/brokers/topics/<topic>`` (both Kafka versions).

    ``partitions`` maps partition id to its replica list. Version 2 adds the
    replicas being added and removed by a reassignment in flight.
    """

    partitions: tuple[tuple[int, tuple[int, ...]], ...]
    adding: tuple[tuple[int, tuple[int, ...]], ...] = ()
    removing: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @staticmethod
    def of(partitions: dict[int, list[int] | tuple[int, ...]]) -> TopicAssignment:
        return TopicAssignment(tuple(sorted((p, tuple(r)) for p, r in partitions.items())))

    def as_dict(self) -> dict[int, tuple[int, ...]]:
        return dict(self.partitions)


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything a new controller loads on failover, as read from ZooKeeper."""

    live_brokers: tuple[BrokerInfo, ...] = ()
    topics: tuple[tuple[str, TopicAssignment], ...] = ()
    partition_states: tuple[tuple[TopicPartition, PartitionStateZk], ...] = ()
    topics_to_delete: frozenset[str] = frozenset()
    reassignments: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()
    preferred_elections: frozenset[TopicPartition] = frozenset()
    isr_change_notifications: tuple[str, ...] = ()
    bad_input: tuple[str, ...] = field(default=())
    """Reasons for znodes the reader skipped (malformed JSON and the like)."""
