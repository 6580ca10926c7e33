"""ControllerContext: all cluster state the active controller holds, and its canonical
snapshot.

Containers are one level deep and hold immutable values (tuples, frozen dataclasses,
enum members). Absent keys mean the table's initial state (``NonExistentPartition`` /
``NonExistentReplica``).

Snapshot: only plain builtins (tuples, ints, strs, bools, None), each dict a tuple sorted
by key: ``BrokerInfo`` -> ``(id, epoch, endpoints, rack)`` (endpoints as tuples),
``PartitionStateZk`` -> ``(leader, leader_epoch, isr, controller_epoch, version)``, state
enums -> their value string. Pickling builtins is all C; pickling dataclasses and enums
goes through Python-level ``__reduce_ex__`` (about 10x slower). Restore rebuilds the dicts
with ``dict(...)`` where the values are already builtins, and turns the flat tuples back
into values through small caches (``_decode_*``): the same few ``LeaderAndIsr`` /
``BrokerInfo`` / replica-state tuples recur across the millions of copies a model
checker makes, and sharing immutable values is safe.

Memory: one ``(topic, partition)`` tuple per partition, interned through ``topics``
(``topics[t][p]`` is *the* key used in every dict) by ``ClusterLoaded`` and topic
creation; replica lists, ISRs and ``(broker, ReplicaState)`` pairs are interned too
(``intern``), so a partition costs a few dict slots plus its ``PartitionStateZk`` and
``LeaderAndIsr``. Nothing relies on key identity (only on equality): a restored context
uses the keys of the snapshot and skips interning.
"""

from __future__ import annotations

from fsm.partition_states import PARTITION_TABLE, PartitionState
from fsm.replica_states import REPLICA_TABLE, ReplicaState
from fsm.values import BrokerInfo, Endpoint, LeaderAndIsr, PartitionStateZk, TopicPartition

ReplicaStates = tuple[tuple[int, ReplicaState], ...]

P_BY_VALUE: dict[str, PartitionState] = {m._value_: m for m in PartitionState}
R_BY_VALUE: dict[str, ReplicaState] = {m._value_: m for m in ReplicaState}
_NON_EXISTENT_REPLICA = ReplicaState.NonExistentReplica

# The transition tables compiled for the hot paths: state value -> the targets it may move
# to, as a tuple (``target in P_NEXT[cur._value_]`` compares enum members by identity in C;
# ``PARTITION_TABLE.is_valid`` hashes them through Python-level ``Enum.__hash__``).
P_NEXT: dict[str, tuple[PartitionState, ...]] = {
    s._value_: tuple(t for t in PartitionState if PARTITION_TABLE.is_valid(s, t))
    for s in PartitionState}
R_NEXT: dict[str, tuple[ReplicaState, ...]] = {
    s._value_: tuple(t for t in ReplicaState if REPLICA_TABLE.is_valid(s, t))
    for s in ReplicaState}
_CACHE_MAX = 1 << 16  # entries per decode cache; cleared when full (values are immutable)

_psz_cache: dict[tuple, PartitionStateZk] = {}
_broker_cache: dict[tuple, BrokerInfo] = {}
_rs_cache: dict[tuple, ReplicaStates] = {}


def _decode_psz(flat: tuple) -> PartitionStateZk:
    """``(leader, leader_epoch, isr, controller_epoch, version)`` -> ``PartitionStateZk``."""
    got = _psz_cache.get(flat)
    if got is None:
        if len(_psz_cache) >= _CACHE_MAX:
            _psz_cache.clear()
        leader, leader_epoch, isr, controller_epoch, version = flat
        got = _psz_cache[flat] = PartitionStateZk(
            LeaderAndIsr(leader, leader_epoch, isr, controller_epoch), version)
    return got


def _encode_endpoints(eps: tuple[Endpoint, ...]) -> tuple:
    return tuple((e.listener, e.host, e.port, e.security_protocol) for e in eps)


def _decode_broker(flat: tuple) -> BrokerInfo:
    got = _broker_cache.get(flat)
    if got is None:
        if len(_broker_cache) >= _CACHE_MAX:
            _broker_cache.clear()
        b, epoch, eps, rack = flat
        got = _broker_cache[flat] = BrokerInfo(b, epoch, tuple(Endpoint(*e) for e in eps), rack)
    return got


def _decode_rs(flat: tuple) -> ReplicaStates:
    """``((broker, state value), ...)`` -> ``((broker, ReplicaState), ...)``."""
    got = _rs_cache.get(flat)
    if got is None:
        if len(_rs_cache) >= _CACHE_MAX:
            _rs_cache.clear()
        got = _rs_cache[flat] = tuple((b, R_BY_VALUE[v]) for b, v in flat)
    return got


class ControllerContext:
    __slots__ = ("live", "shutting_down", "topics", "assignment", "states", "partition_state",
                 "replica_states", "reassignments", "to_delete", "ineligible", "owed",
                 "_interned", "_rs_next")

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
        self.owed: dict[TopicPartition, tuple[str, int, bool]] = {}
        """Partition decisions whose state write failed its version condition twice in a row
        (the round and its retry round): ``(kind, arg, due)``, decided again in the
        follow-on rounds once ``due`` -- from the next event on (``Controller.handle``)."""
        self._interned: dict[object, object] = {}
        # (id(old replica states), broker, id(target)) -> (old, new): replica_states_with
        # without re-sorting and re-hashing enum members; ``old`` is held so its id stays
        # unique while the entry lives (never snapshotted).
        self._rs_next: dict[tuple[int, int, int], tuple[ReplicaStates, ReplicaStates]] = {}

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

    def replica_states_with(self, old: ReplicaStates, broker: int,
                            state: ReplicaState) -> ReplicaStates:
        """``old`` with ``broker`` in ``state`` (absent for NonExistentReplica), sorted."""
        key = (id(old), broker, id(state))
        hit = self._rs_next.get(key)
        if hit is not None and hit[0] is old:
            return hit[1]
        pairs = [p for p in old if p[0] != broker]
        if state is not _NON_EXISTENT_REPLICA:
            pairs.append(self.intern((broker, state)))
            pairs.sort()
        new = (self.intern(tuple(pairs)) if len(pairs) <= 4 else tuple(pairs)) if pairs else ()
        if len(self._rs_next) >= _CACHE_MAX:
            self._rs_next.clear()
        self._rs_next[key] = (old, new)
        return new

    def remove_topic(self, topic: str) -> None:
        """Forget the topic; its partition and replica states must have left already (they
        are written only by the controller's setters: ``Controller._move_partitions`` /
        ``_move_replicas``)."""
        for tp in self.topics.pop(topic, ()):
            self.assignment.pop(tp, None)
            self.states.pop(tp, None)
            self.reassignments.pop(tp, None)
            self.owed.pop(tp, None)
        self.to_delete.discard(topic)
        self.ineligible.discard(topic)

    # ------------------------------------------------------------------ snapshot

    def snapshot(self) -> tuple:
        """Plain builtins only, canonical (see the module docstring)."""
        live, sd, rea, td, inel, owed = (self.live, self.shutting_down, self.reassignments,
                                         self.to_delete, self.ineligible, self.owed)
        return (
            tuple([(i.broker_id, i.epoch, _encode_endpoints(i.endpoints) if i.endpoints else (),
                    i.rack) for _, i in sorted(live.items())]),
            tuple(sorted(sd)) if sd else (),
            tuple(sorted([(t, len(tps)) for t, tps in self.topics.items()])),
            tuple(sorted(self.assignment.items())),
            tuple(sorted([(tp, (st.leader_and_isr.leader, st.leader_and_isr.leader_epoch,
                                st.leader_and_isr.isr, st.leader_and_isr.controller_epoch,
                                st.version))
                          for tp, st in self.states.items()])),
            tuple(sorted([(tp, s._value_) for tp, s in self.partition_state.items()])),
            tuple(sorted([(tp, tuple([(b, s._value_) for b, s in rs]))
                          for tp, rs in self.replica_states.items()])),
            tuple(sorted(rea.items())) if rea else (),
            tuple(sorted(td)) if td else (),
            tuple(sorted(inel)) if inel else (),
            tuple(sorted(owed.items())) if owed else (),
        )

    @classmethod
    def restore(cls, snap: tuple) -> ControllerContext:
        (live, shutting, topics, assignment, states, pstates, rstates, reassign, to_delete,
         ineligible, owed) = snap
        ctx = cls.__new__(cls)
        bc, pc, rc, P = _broker_cache, _psz_cache, _rs_cache, P_BY_VALUE
        ctx.live = {f[0]: bc.get(f) or _decode_broker(f) for f in live}
        ctx.shutting_down = set(shutting)
        ctx.topics = {t: tuple([(t, p) for p in range(n)]) for t, n in topics}
        ctx.assignment = dict(assignment)
        ctx.states = {tp: pc.get(f) or _decode_psz(f) for tp, f in states}
        ctx.partition_state = {tp: P[v] for tp, v in pstates}
        ctx.replica_states = {tp: rc.get(f) or _decode_rs(f) for tp, f in rstates}
        ctx.reassignments = dict(reassign)
        ctx.to_delete = set(to_delete)
        ctx.ineligible = set(ineligible)
        ctx.owed = dict(owed)
        ctx._interned = {}
        ctx._rs_next = {}
        return ctx
