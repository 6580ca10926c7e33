"""ControllerContext: all cluster state the active controller holds, and its canonical
snapshot.

Containers are one level deep and hold immutable values (tuples, frozen dataclasses,
enum members), so a snapshot is a handful of ``tuple(sorted(d.items()))`` and a restore
a handful of ``dict(...)``. Absent keys mean the table's initial state
(``NonExistentPartition`` / ``NonExistentReplica``).

Memory: one ``(topic, partition)`` tuple per partition, interned through ``topics``
(``topics[t][p]`` is *the* key used in every dict); replica lists, ISRs and
``(broker, ReplicaState)`` pairs are interned too (``intern``), so a partition costs a
few dict slots plus its ``PartitionStateZk`` and ``LeaderAndIsr``.
"""

from __future__ import annotations

from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.values import BrokerInfo, PartitionStateZk, TopicPartition

ReplicaStates = tuple[tuple[int, ReplicaState], ...]


class ControllerContext:
    __slots__ = ("live", "shutting_down", "topics", "assignment", "states", "partition_state",
                 "replica_states", "reassignments", "to_delete", "ineligible", "_interned")

    def __init__(self) -> None:
        self.live: dict[int, BrokerInfo] = {}
        self.shutting_down: set[int] = set()
        self.topics: dict[str, tuple[TopicPartition, ...]] = {}
        self.assignment: dict[TopicPartition, tuple[int, ...]] = {}
        self.states: dict[TopicPartition, PartitionStateZk] = {}
        """leader, ISR, leader epoch, controller epoch and the state znode's version."""
        self.partition_state: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[TopicPartition, ReplicaStates] = {}
        self.reassignments: dict[TopicPartition, tuple[int, ...]] = {}
        """Target replica lists of reassignments in flight (hard state: /admin/reassign_partitions)."""
        self.to_delete: set[str] = set()
        self.ineligible: set[str] = set()
        self._interned: dict[object, object] = {}

    # ------------------------------------------------------------------ interning

    def intern(self, value):  # noqa: ANN001, ANN201 - any hashable immutable value
        got = self._interned.get(value)
        if got is None:
            self._interned[value] = value
            return value
        return got

    def tp(self, topic: str, partition: int) -> TopicPartition | None:
        tps = self.topics.get(topic)
        if tps is None or not 0 <= partition < len(tps):
            return None
        return tps[partition]

    # ------------------------------------------------------------------ queries

    def eligible(self) -> set[int]:
        return {b for b in self.live if b not in self.shutting_down}

    def replica_state(self, tp: TopicPartition, broker: int) -> ReplicaState:
        for b, s in self.replica_states.get(tp, ()):
            if b == broker:
                return s
        return ReplicaState.NonExistentReplica

    def set_replica_state_raw(self, tp: TopicPartition, broker: int,
                              state: ReplicaState) -> None:
        old = self.replica_states.get(tp, ())
        pairs = [p for p in old if p[0] != broker]
        if state is not ReplicaState.NonExistentReplica:
            pairs.append(self.intern((broker, state)))
            pairs.sort()
        if pairs:
            self.replica_states[tp] = self.intern(tuple(pairs)) if len(pairs) <= 4 else tuple(pairs)
        else:
            self.replica_states.pop(tp, None)

    def remove_topic(self, topic: str) -> None:
        for tp in self.topics.pop(topic, ()):
            self.assignment.pop(tp, None)
            self.states.pop(tp, None)
            self.partition_state.pop(tp, None)
            self.replica_states.pop(tp, None)
            self.reassignments.pop(tp, None)
        self.to_delete.discard(topic)
        self.ineligible.discard(topic)

    # ------------------------------------------------------------------ snapshot

    def snapshot(self) -> tuple:
        return (
            tuple(sorted(self.live.items())),
            tuple(sorted(self.shutting_down)),
            tuple(sorted((t, len(tps)) for t, tps in self.topics.items())),
            tuple(sorted(self.assignment.items())),
            tuple(sorted(self.states.items())),
            tuple(sorted((tp, s.value) for tp, s in self.partition_state.items())),
            tuple(sorted((tp, tuple((b, s.value) for b, s in rs))
                         for tp, rs in self.replica_states.items())),
            tuple(sorted(self.reassignments.items())),
            tuple(sorted(self.to_delete)),
            tuple(sorted(self.ineligible)),
        )

    @classmethod
    def restore(cls, snap: tuple) -> ControllerContext:
        (live, shutting, topics, assignment, states, pstates, rstates, reassign, to_delete,
         ineligible) = snap
        ctx = cls()
        ctx.live = dict(live)
        ctx.shutting_down = set(shutting)
        for t, n in topics:
            ctx.topics[t] = tuple((t, p) for p in range(n))
        tp = ctx.tp
        ctx.assignment = {tp(*k): ctx.intern(v) for k, v in assignment}
        ctx.states = {tp(*k): v for k, v in states}
        P, R = PartitionState, ReplicaState
        ctx.partition_state = {tp(*k): P(v) for k, v in pstates}
        ctx.replica_states = {
            tp(*k): ctx.intern(tuple(ctx.intern((b, R(s))) for b, s in v)) for k, v in rstates}
        ctx.reassignments = {tp(*k): v for k, v in reassign}
        ctx.to_delete = set(to_delete)
        ctx.ineligible = set(ineligible)
        return ctx
