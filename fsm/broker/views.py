"""The broker core's per-entity values: immutable, cheap to copy, canonical in snapshots."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fsm.values import LeaderAndIsr, TopicPartition


class ReplicaRole(enum.Enum):
    """What a local replica does (seed 001 section C)."""

    LEADER = "leader"  # takes writes, maintains the ISR, may change it in ZooKeeper
    FOLLOWER = "follower"  # fetches from ``leader`` (none when the leader is -1)
    STOPPED = "stopped"  # StopReplica(delete=false): neither fetches nor leads


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One local replica: what the broker believes about its partition.

    ``leader_epoch``/``zk_version`` are ``-1`` for a replica started before the partition had
    a state (startup recovery of a partition the controller has not initialised yet).
    ``controller_epoch`` is the partition state's controller epoch as last told (the one an
    ISR write carries). ``fenced`` is set when this broker's own ISR write failed: it keeps
    the role for the record but no longer acts as leader until the controller (or startup
    recovery) tells it what to be. ``zk_seen`` is the partition state the failed write found,
    when the executor gave it (informational; it does not change the role).
    """

    role: ReplicaRole
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    controller_epoch: int
    fenced: bool = False
    zk_seen: tuple[LeaderAndIsr, int] | None = None

    @property
    def freshness(self) -> tuple[int, int]:
        """``(leader_epoch, zk_version)``: the order in which partition states supersede."""
        return (self.leader_epoch, self.zk_version)


@dataclass(frozen=True, slots=True)
class CommitView:
    """What ``can_commit_view`` exposes: a broker that believes it leads and is not fenced.

    A commit needs every member of ``isr`` to have the record; the invariant module combines
    these views with the followers' ``replica(tp)`` to decide who can actually commit."""

    broker_id: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


@dataclass(frozen=True, slots=True)
class MetadataPartition:
    """One partition in the metadata cache (what a MetadataRequest answers)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AppliedMark:
    """The last controller request applied in this incarnation (kept in the snapshot).

    ``highest_before`` is the highest controller epoch applied before it, so that the
    invariant "no request from an older controller epoch, none for another broker epoch" is
    checkable on one snapshot: ``controller_epoch >= highest_before`` and
    ``broker_epoch == BrokerCore.epoch``."""

    controller_epoch: int
    broker_epoch: int
    highest_before: int


@dataclass(frozen=True, slots=True)
class AppliedRecord:
    """An entry of the bounded ``applied_log`` (not in the snapshot)."""

    api: str
    controller_epoch: int
    broker_epoch: int
    correlation: int


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """A ``BrokerZkWrite`` awaiting its ``BrokerWriteResult``.

    ``kind`` is ``"isr"`` (a leader's conditional ISR update, made on the replica's
    ``base`` = ``(leader_epoch, zk_version)``) or ``"notify"`` (an ISR change notification);
    or ``"notify-owed"``: a notification that failed on a lost connection, not in flight,
    written again when ISR_CHANGE_PROPAGATION fires (``fsm.broker.isr``).
    """

    kind: str
    tp: TopicPartition
    isr: tuple[int, ...] = ()
    base: tuple[int, int] = (-1, -1)


@dataclass(frozen=True, slots=True)
class BrokerLogRecord:
    """A state-change log record (in memory, drained by the adapters, not in snapshots)."""

    kind: str  # "transition", "applied", "rejected", "ignored", "isr"
    entity: str
    detail: str
