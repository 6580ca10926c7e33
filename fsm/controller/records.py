"""Small immutable records the controller keeps: state-change log entries, the decision
for one partition state write, and the round of writes it awaits (``Round``, part of a
snapshot so a world may be copied while a write is in flight)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from fsm.effects import ZkOp
from fsm.partition_states import partition_label
from fsm.replica_states import replica_label
from fsm.values import LeaderAndIsr, TopicPartition


class StateChange(NamedTuple):
    """One line of the state-change log. ``entity`` is a topic-partition, a
    ``(topic-partition, broker)`` pair, a topic name, a broker id or None; ``label`` prints it."""

    kind: str  # "partition", "replica", "leader", "rejected", "illegal", "gave-up", "info"
    entity: object
    source: object  # a state enum member, a value or ""
    target: object
    reason: str

    @property
    def label(self) -> str:
        e = self.entity
        if isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], tuple):
            (t, p), b = e
            return replica_label(t, p, b)
        if isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str):
            return partition_label(e[0], e[1])
        return "" if e is None else str(e)

    def __str__(self) -> str:
        src = getattr(self.source, "value", self.source)
        dst = getattr(self.target, "value", self.target)
        return f"[{self.kind}] {self.label}: {src} -> {dst} ({self.reason})"


# Decision kinds (what to re-decide when a write meets a BadVersion).
INIT = "init"  # new partition: leader = first live replica, ISR = live replicas
OFFLINE = "offline"  # repair against dead brokers / elect for offline partitions
SHUTDOWN = "shutdown"  # controlled shutdown of broker ``arg``
PREFERRED = "preferred"  # move leadership to the preferred replica
REASSIGN_EPOCH = "reassign-epoch"  # reassignment expansion: bump the leader epoch
REASSIGN_DONE = "reassign-done"  # reassignment contraction: leader in target, ISR within target


class Decision(NamedTuple):
    """A partition state write: the new value, the expected znode version (``create``: the
    state znode does not exist yet) and what was decided, to decide again on BadVersion."""

    kind: str
    arg: int
    leader_and_isr: LeaderAndIsr
    expected_version: int
    create: bool = False


@dataclass(frozen=True, slots=True)
class Round:
    """The write the controller awaits. ``followups`` are small tuples naming the requests
    and replies to produce once it committed (see ``fsm.controller.request_batch``)."""

    token: int
    kind: str  # "election" | "partitions"
    decisions: tuple[tuple[TopicPartition, Decision], ...] = ()
    ops: tuple[ZkOp, ...] = ()
    followups: tuple[tuple, ...] = ()
    retry: bool = False
    election: tuple[int, int] = (0, 0)  # (epoch, epoch_version) read before the attempt
