"""The controller object: the seed's ControllerContext plus the code that decides, checks
(against the transition tables), performs and logs every state change, and returns effects.

This file holds the core: event dispatch, the write protocol (decide -> ``ZkWrite`` ->
``WriteResult`` -> requests, one BadVersion retry round, then the decision is owed to the
next event), the state setters (``_move_partitions`` / ``_move_replicas``: the only
writers of the partition and replica states, each move checked against its table),
resignation, queries and snapshots. Events reach their handlers through ``_DISPATCH``, a
table of functions. Each protocol lives in its own mixin module:

* ``election.py`` -- controller election, the ZooKeeper session table, resignation triggers;
* ``failover.py`` -- ``ClusterLoaded``: load everything, full state to every broker;
* ``brokers.py`` -- broker join / failure / bounce, the broker-epoch check, controlled shutdown;
* ``topics.py`` -- topic creation and partition expansion;
* ``deletion.py`` -- topic deletion (TopicDeletionManager);
* ``reassignment.py`` -- partition reassignment;
* ``preferred.py`` -- preferred replica election, manual and automatic;
* ``isr_notifications.py`` -- ISR change notifications.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

from fsm import zk_paths
from fsm.controller.brokers import BrokersMixin
from fsm.controller.config import ControllerConfig
from fsm.controller.context import P_BY_VALUE, P_NEXT, R_BY_VALUE, R_NEXT, ControllerContext
from fsm.controller.deletion import DeletionMixin
from fsm.controller.election import ElectionMixin
from fsm.controller.failover import FailoverMixin
from fsm.controller.isr_notifications import IsrNotificationsMixin
from fsm.controller.leader_selection import decide
from fsm.controller.plan import Plan
from fsm.controller.preferred import PreferredMixin
from fsm.controller.reassignment import ReassignmentMixin
from fsm.controller.records import (
    INIT,
    OFFLINE,
    REASSIGN_DONE,
    REASSIGN_EPOCH,
    SHUTDOWN,
    Decision,
    Entities,
    Round,
    StateChange,
    decode_round,
    encode_round,
    new_record,
)
from fsm.controller.request_batch import RequestBatch
from fsm.controller.topics import TopicsMixin
from fsm.effects import (
    CancelTimer,
    ControllerEffect,
    CreateOp,
    ReplyControlledShutdown,
    Resigned,
    SetDataOp,
    ZkOp,
    ZkWrite,
)
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerChange,
    BrokerResponseReceived,
    ClusterLoaded,
    ControlledShutdown,
    ControllerChange,
    ControllerEvent,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    SessionStateChange,
    Startup,
    TimerFired,
    TimerKind,
    TopicChange,
    TopicDeletionRequest,
    WriteResult,
)
from fsm.partition_states import PARTITION_TABLE, PartitionState, partition_label
from fsm.replica_states import REPLICA_TABLE, ReplicaState, replica_label
from fsm.requests import ControlledShutdownResponse
from fsm.transition_table import IllegalTransition, TransitionTable
from fsm.values import NO_LEADER, LeaderAndIsr, PartitionStateZk, TopicPartition
from fsm.zk_session_states import ZkClientState

_P = PartitionState
_R = ReplicaState
_ONLINE = _P.OnlinePartition
_OFFLINE = _P.OfflinePartition
_NON_EXISTENT = _P.NonExistentPartition
_NON_EXISTENT_REPLICA = _R.NonExistentReplica
_NO_STATE = LeaderAndIsr(NO_LEADER, -1, (), -1)
_CONNECTING = ZkClientState.CONNECTING
_SESSION_BY_VALUE = {s.value: s for s in ZkClientState}
_PREFIX_MAX = 1 << 14
_state_prefix: dict[str, str] = {}


def state_path(topic: str, partition: int) -> str:
    """``zk_paths.partition_state`` with the per-topic prefix computed once."""
    pre = _state_prefix.get(topic)
    if pre is None:
        if len(_state_prefix) >= _PREFIX_MAX:
            _state_prefix.clear()
        pre = _state_prefix[topic] = zk_paths.partitions(topic) + "/"
    return f"{pre}{partition}/state"
_MAX_CHAINED = 4  # bound on follow-on rounds planned without a write in between
_CONDITIONAL = ("expand", "expanded", "complete")  # followups applied only if committed

_DISPATCH: dict[type, Callable[[Controller, Any], None]] = {
    Startup: ElectionMixin._on_startup,
    ControllerChange: ElectionMixin._on_controller_change,
    SessionStateChange: ElectionMixin._on_session_state_change,
    ClusterLoaded: FailoverMixin._on_cluster_loaded,
    BrokerChange: BrokersMixin._on_broker_change,
    TopicChange: TopicsMixin._on_topic_change,
    PartitionModification: TopicsMixin._on_partition_modification,
    TopicDeletionRequest: DeletionMixin._on_topic_deletion_request,
    ReassignmentRequest: ReassignmentMixin._on_reassignment_request,
    PreferredElectionRequest: PreferredMixin._on_preferred_election_request,
    IsrChangeNotification: IsrNotificationsMixin._on_isr_change_notification,
    ControlledShutdown: BrokersMixin._on_controlled_shutdown,
    BrokerResponseReceived: DeletionMixin._on_broker_response,
    TimerFired: DeletionMixin._on_timer,
}
"""The handler of each event type (``WriteResult`` is the write protocol's own, handled
before this table is consulted), as the broker core's ``_DISPATCH``: functions taking the
controller and the event, looked up by the event's exact type. A patch of a handler (a
mutant, a test) replaces this module global, not a method of ``Controller``."""
HANDLED_EVENTS: tuple[str, ...] = ("WriteResult", *(t.__name__ for t in _DISPATCH))
"""The events a controller acts on (``last_handled`` names one of them after ``handle``)."""
_NEEDS_LOADED = {
    BrokerChange, TopicChange, PartitionModification, TopicDeletionRequest,
    ReassignmentRequest, PreferredElectionRequest, IsrChangeNotification,
    BrokerResponseReceived, TimerFired,
}


class Controller(ElectionMixin, FailoverMixin, BrokersMixin, TopicsMixin, DeletionMixin,
                 ReassignmentMixin, PreferredMixin, IsrNotificationsMixin):
    """One controller candidate. ``handle(event) -> list[ControllerEffect]``."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self.ctx = ControllerContext()
        self.state_change_log: list[StateChange] = []
        self._active = False
        self._loaded = False
        self._epoch = 0
        self._fence_version: int | None = None
        self._seen: tuple[int, int] = (0, 0)  # /controller_epoch value and version last read
        self._session = ZkClientState.NOT_CONNECTED  # moved only through ZK_SESSION_TABLE
        self._pending: Round | None = None
        self._last_token = 0
        # transient, per handle() call (the batch exists only while handle() runs)
        self._effects: list[ControllerEffect] = []
        self._batch: RequestBatch = None  # type: ignore[assignment]
        self._write: ZkWrite | None = None
        self._held: set[TopicPartition] = set()  # reassignments not to retry in this call
        self.last_handled: str | None = None  # the event type the last handle() acted on

    # ------------------------------------------------------------------ queries

    @property
    def is_active(self) -> bool:
        return self._active

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def fence_version(self) -> int | None:
        return self._fence_version

    @property
    def awaiting_write(self) -> int | None:
        return None if self._pending is None else self._pending.token

    @property
    def session_state(self) -> ZkClientState:
        """The controller's ZooKeeper client session (``fsm.zk_session_states``)."""
        return self._session

    @property
    def paused(self) -> bool:
        """CONNECTING: the connection is lost; no decision until CONNECTED (the adapters
        hold the events meanwhile)."""
        return self._session is _CONNECTING

    def topic_names(self) -> frozenset[str]:
        return frozenset(self.ctx.topics)

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.ctx.partition_state.get(tp, _P.NonExistentPartition)

    def replica_state(self, tp: TopicPartition, broker: int) -> ReplicaState:
        return self.ctx.replica_state(tp, broker)

    def leader_and_isr(self, tp: TopicPartition) -> LeaderAndIsr | None:
        st = self.ctx.states.get(tp)
        return None if st is None else st.leader_and_isr

    def partition_zk_version(self, tp: TopicPartition) -> int | None:
        st = self.ctx.states.get(tp)
        return None if st is None else st.version

    def replicas(self, tp: TopicPartition) -> tuple[int, ...] | None:
        return self.ctx.assignment.get(tp)

    def live_brokers(self) -> dict[int, int]:
        """Live broker id -> broker epoch."""
        return {b: i.epoch for b, i in self.ctx.live.items()}

    def shutting_down(self) -> frozenset[int]:
        return frozenset(self.ctx.shutting_down)

    def reassignments(self) -> dict[TopicPartition, tuple[int, ...]]:
        return dict(self.ctx.reassignments)

    def topics_to_delete(self) -> frozenset[str]:
        return frozenset(self.ctx.to_delete)

    def topics_ineligible(self) -> frozenset[str]:
        return frozenset(self.ctx.ineligible)

    def drain_state_change_log(self) -> list[StateChange]:
        out, self.state_change_log = self.state_change_log, []
        return out

    # ------------------------------------------------------------------ snapshots

    def snapshot(self) -> tuple:
        """Canonical and made of plain builtins only (tuples, ints, strs, bools, None)."""
        return (self._active, self._loaded, self._epoch, self._fence_version, self._seen,
                self._session._value_, encode_round(self._pending), self._last_token,
                self.ctx.snapshot())

    @classmethod
    def restore(cls, snap: tuple, config: ControllerConfig) -> Controller:
        c = cls.__new__(cls)  # every attribute of __init__ is set below
        (c._active, c._loaded, c._epoch, c._fence_version, c._seen, session, pending,
         c._last_token, ctx) = snap
        c._session = _SESSION_BY_VALUE[session]
        c.config = config
        c.ctx = ControllerContext.restore(ctx)
        c._pending = decode_round(pending)
        c.state_change_log = []
        c._effects = []
        c._batch = None  # type: ignore[assignment]  # made by handle()
        c._write = None
        c._held = set()
        c.last_handled = None
        return c

    # ------------------------------------------------------------------ dispatch

    def handle(self, event: ControllerEvent) -> list[ControllerEffect]:
        if self._pending is not None and not isinstance(event, WriteResult):
            raise AssertionError(
                f"controller {self.config.broker_id} awaits WriteResult({self._pending.token}) "
                f"but was handed {type(event).__name__}")
        self._effects = []
        self._batch = RequestBatch()
        self._write = None
        self._held = set()
        self.last_handled = None
        if isinstance(event, WriteResult):
            self.last_handled = "WriteResult"
            self._on_write_result(event)
        elif self._session is _CONNECTING and not isinstance(event, SessionStateChange):
            self._log("info", None, "", "", f"paused: {type(event).__name__} not handled")
        else:
            if self.ctx.owed:
                self._owed_due()  # a new event: owed decisions are decided again
            handler = _DISPATCH.get(type(event))
            if handler is None:
                self._log("rejected", None, "", "", f"unknown event {type(event).__name__}")
            elif type(event) in _NEEDS_LOADED and not (self._active and self._loaded):
                pass  # not the (loaded) controller: a candidate ignores cluster events
            else:
                self.last_handled = type(event).__name__
                handler(self, event)
        out = self._effects
        if self._active:
            out.extend(self._batch.finish(self.ctx, self.config.broker_id, self._epoch))
        if self._write is not None:
            out.append(self._write)
        self._effects = []
        self._batch = None  # type: ignore[assignment]
        self._write = None
        return out

    # ------------------------------------------------------------------ logging

    def _log(self, kind: str, entity: object, source: object, target: object,
             reason: str) -> None:
        self.state_change_log.append(StateChange(kind, entity, source, target, reason))

    def _reject(self, entity: object, reason: str) -> None:
        self._log("rejected", entity, "", "", reason)

    # ------------------------------------------------------------------ the state setters

    def _move_partitions(self, moves: Iterable[tuple[TopicPartition, PartitionState]],
                         reason: str, *, load: bool = False) -> None:
        """The one place a partition's state is written (``ctx.partition_state``).

        Every move ``(tp, target)`` is checked against PARTITION_TABLE (through ``P_NEXT``,
        compiled from it: no enum hashing) in the order given, from the state memory holds
        at that moment (so a batch may move one partition twice). An allowed move is applied
        (``NonExistentPartition`` leaves the dict) and logged: one ``partition`` record per
        group of identical transitions (same source and target; its entity an ``Entities``
        when the group has several), the groups in the order they first appear, after any
        ``illegal`` record of the batch. A move the table forbids changes nothing and is
        logged as ``illegal`` -- never raised: outside input may lead to one.

        ``load=True``: not a transition but the controller's memory following ZooKeeper --
        it begins (the failover load: Kafka's ``initializePartitionState``; ZooKeeper, not a
        decision of this controller, says the state, and the table has no move from
        NonExistent to Online or Offline) or ends (a topic whose znode vanished without a
        deletion: Kafka's ``removeTopic``). Not checked against the table; a move must start
        from nothing in memory or end in nothing (else ``illegal``), and is logged as kind
        ``loaded`` or ``forgotten`` (not a transition: ``--coverage`` does not count it)."""
        states = self.ctx.partition_state
        groups: dict[tuple[str, str], list] = {}
        last_cur = last_target = None
        group: list = []
        for tp, target in moves:
            cur = states.get(tp, _NON_EXISTENT)
            if cur is not last_cur or target is not last_target:
                if not ((cur is _NON_EXISTENT) is not (target is _NON_EXISTENT) if load
                        else target in P_NEXT[cur._value_]):
                    self._illegal(PARTITION_TABLE, tp, partition_label(*tp), cur, target, load)
                    continue
                last_cur, last_target = cur, target
                key = (cur._value_, target._value_)
                group = groups.get(key)  # type: ignore[assignment]
                if group is None:
                    group = groups[key] = []
            if target is _NON_EXISTENT:
                del states[tp]
            else:
                states[tp] = target
            group.append(tp)
        if groups:
            self._log_groups("partition", P_BY_VALUE, groups, reason,
                             _NON_EXISTENT if load else None)

    def _move_replicas(self, moves: Iterable[tuple[TopicPartition, int, ReplicaState]],
                       reason: str, *, load: bool = False) -> None:
        """The one place a replica's state is written (``ctx.replica_states``): as
        ``_move_partitions``, for moves ``(tp, broker, target)`` against REPLICA_TABLE
        (``R_NEXT``), records of kind ``replica``; a self-transition is checked and logged
        and leaves memory as it is. ``load=True``: the failover load (Kafka's
        ``initializeReplicaState``) or a vanished topic forgotten, as there.

        Bulk path (a broker in 50,000 replica sets): a move is worked out once per
        (partition's replica states, broker, target) -- the replica-state tuples are
        interned, so a few distinct ones serve every partition -- and then only applied."""
        ctx = self.ctx
        rstates = ctx.replica_states
        get = rstates.get
        with_state = ctx.replica_states_with
        groups: dict[tuple[str, str], list] = {}
        # (id(replica states), broker, id(target)) -> (replica states, the states after the
        # move or None when it is illegal, the append of its log group or the source state);
        # the entry holds the replica states, so their id is not reused while the batch runs
        memo: dict[tuple[int, int, int], tuple] = {}
        remember = memo.get
        ident = id
        for tp, b, target in moves:
            rs = get(tp, ())
            hit = remember((ident(rs), b, ident(target)))
            if hit is None:
                cur = _NON_EXISTENT_REPLICA
                for x, s in rs:
                    if x == b:
                        cur = s
                        break
                if (cur is _NON_EXISTENT_REPLICA) is not (target is _NON_EXISTENT_REPLICA) \
                        if load else target in R_NEXT[cur._value_]:
                    k = (cur._value_, target._value_)
                    g = groups.get(k)
                    if g is None:
                        g = groups[k] = []
                    hit = (rs, rs if cur is target else with_state(rs, b, target), g.append)
                else:
                    hit = (rs, None, cur)
                memo[(ident(rs), b, ident(target))] = hit
            new = hit[1]
            if new is not rs:
                if new is None:
                    self._illegal(REPLICA_TABLE, (tp, b), replica_label(tp[0], tp[1], b),
                                  hit[2], target, load)
                    continue
                if new:
                    rstates[tp] = new
                else:
                    del rstates[tp]
            hit[2]((tp, b))
        if groups:
            self._log_groups("replica", R_BY_VALUE, groups, reason,
                             _NON_EXISTENT_REPLICA if load else None)

    def _illegal(self, table: TransitionTable, entity: object, label: str, cur: enum.Enum,
                 target: enum.Enum, load: bool) -> None:
        if load:
            self._log("illegal", entity, cur.value, target.value,
                      f"{label}: memory holds {cur.value}: neither loaded nor forgotten")
            return
        try:
            table.check(label, cur, target)
        except IllegalTransition as e:
            self._log("illegal", entity, cur.value, target.value, str(e))

    def _log_groups(self, kind: str, by_value: dict, groups: dict, reason: str,
                    nothing: enum.Enum | None) -> None:
        """One record per group ``(source value, target value) -> [entities]``, in order
        (keyed by the enum values: hashing a str is C, hashing an enum member is not).
        ``nothing``: the table's initial state when the groups are a load (``loaded``, or
        ``forgotten`` for a group whose target it is), None for transitions (``kind``)."""
        log = self.state_change_log
        for (cur, target), entities in groups.items():
            cur, target = by_value[cur], by_value[target]
            k = kind if nothing is None else "forgotten" if target is nothing else "loaded"
            log.append(new_record(StateChange, (k, entities[0] if len(entities) == 1
                                                else Entities(entities), cur, target, reason)))

    # ------------------------------------------------------------------ deciding

    def _current(self, plan: Plan, tp: TopicPartition) -> LeaderAndIsr:
        d = plan.writes.get(tp)
        if d is not None:
            return d.leader_and_isr
        st = self.ctx.states.get(tp)
        return _NO_STATE if st is None else st.leader_and_isr

    def _plan_decision(self, plan: Plan, tp: TopicPartition, kind: str, arg: int,
                       alive: Iterable[int], eligible: Iterable[int],
                       target: tuple[int, ...] = (), unclean: bool | None = None) -> bool:
        """Decide ``tp`` once more for ``kind`` and plan the write; False when nothing changes.
        ``unclean``: whether the last resort may elect outside the ISR (None: the config's)."""
        d0 = plan.writes.get(tp)
        if d0 is not None:
            cur, version, create = d0.leader_and_isr, d0.expected_version, d0.create
        else:
            st = self.ctx.states.get(tp)
            if st is None:
                if kind != INIT:
                    return False
                cur, version, create = _NO_STATE, -1, True
            else:
                cur, version, create = st.leader_and_isr, st.version, False
        if unclean is None:
            unclean = self.config.unclean_leader_election_enable
        new = decide(kind, arg, self.ctx.assignment[tp], cur, alive, eligible, unclean,
                     self._epoch, target)
        if new is None:
            return False
        if create:
            kind = INIT  # still a create: committed at version 0
        plan.writes[tp] = new_record(Decision, (kind, arg, new, version, create))
        return True

    def _next_token(self) -> int:
        # One write is outstanding at a time and its result comes back before any other
        # event, so two alternating tokens suffice (and keep snapshots free of a counter).
        self._last_token = 2 if self._last_token == 1 else 1
        return self._last_token

    def _run(self, plan: Plan, retry: bool = False, depth: int = 0) -> None:
        """Write what ``plan`` decided (one ``ZkWrite``), or produce its requests now."""
        if not plan.writes and not plan.ops:
            self._apply_followups(plan.followups)
            if not retry:
                self._continue(depth + 1)
            return
        decisions = tuple(sorted(plan.writes.items()))  # mostly sorted already: linear
        ops: list[ZkOp] = []
        append = ops.append
        prefix = _state_prefix
        last_t, pre = None, ""
        for (t, p), d in decisions:
            if t != last_t:
                last_t, pre = t, prefix.get(t) or state_path(t, 0)[:-len("0/state")]
            if d.create:
                append(CreateOp(f"{pre}{p}/state", d.leader_and_isr, make_parents=True))
            else:
                append(SetDataOp(f"{pre}{p}/state", d.leader_and_isr, d.expected_version))
        ops.extend(plan.ops)
        token = self._next_token()
        self._pending = Round(token, "partitions", decisions, tuple(plan.ops),
                              tuple(plan.followups), retry)
        self._write = ZkWrite(token, tuple(ops), self._fence_version)

    def _continue(self, depth: int = 0, ops: Iterable[ZkOp] = ()) -> None:
        """Follow-on work after a round: ``ops`` (the znodes of reassignments whose
        completion just committed), reassignment phases, deletion progress."""
        if self._pending is not None or not (self._active and self._loaded) \
                or depth > _MAX_CHAINED:
            return
        plan = Plan()
        plan.ops.extend(ops)
        self._plan_owed(plan)
        self._plan_reassignment_progress(plan)
        self._plan_deletion_progress(plan)
        if not plan.empty():
            self._run(plan, depth=depth)

    # ------------------------------------------------------------------ write results

    def _on_write_result(self, ev: WriteResult) -> None:
        r = self._pending
        if r is None or ev.token != r.token:
            self._reject(None, f"WriteResult({ev.token}) answers no write in flight")
            return
        self._pending = None
        if r.kind == "election":
            self._on_election_result(r, ev)
            return
        if ev.fenced:
            self._resign("fenced: /controller_epoch changed (another controller took over)")
            return
        failures = {f.path: f for f in ev.failures}
        failed_paths = set(failures)
        retry = Plan()
        alive = set(self.ctx.live)
        eligible = self.ctx.eligible()
        committed: tuple | list = r.decisions
        failed: list[tuple] = []
        if failures:
            committed = []
            for tp, d in r.decisions:
                f = failures.pop(state_path(*tp), None)
                if f is None:
                    committed.append((tp, d))
                else:
                    failed.append((tp, d, f))
        # Reassignment phases conditional on this round's writes (see reassignment.py):
        # applied only for what committed, before the requests are built from memory.
        conditional = [x for x in r.followups if x[0] in _CONDITIONAL]
        followups = [x for x in r.followups if x[0] not in _CONDITIONAL]
        ok = {tp for tp, _ in committed}
        completed_topics: set[str] = set()
        for x in conditional:
            k, tp = x[0], x[1]
            if k == "expand":
                if zk_paths.topic(tp[0]) in failed_paths:
                    self._held.add(tp)
                    self._log("gave-up", tp, "", "", "reassignment: topic znode write failed")
                else:
                    self._reassignment_expanded(tp, x[2])
            elif tp in ok:
                if k == "expanded":
                    self._reassignment_started(tp)
                else:
                    t = self._reassignment_completed(tp)
                    if t is not None:
                        completed_topics.add(t)
        after: list[ZkOp] = [SetDataOp(zk_paths.topic(t), self._topic_znode(t), -1)
                             for t in sorted(completed_topics) if t in self.ctx.topics]
        if completed_topics:
            after.append(self._reassignment_znode_op())
        self._commit(committed)
        for tp, d, f in failed:
            current = f.current if isinstance(f.current, LeaderAndIsr) else None
            if current is not None and tp in self.ctx.assignment:
                self.ctx.states[tp] = PartitionStateZk(current, f.current_version)
            moved = f.code in ("BadVersion", "NodeExists") and current is not None \
                and tp in self.ctx.assignment
            kind = d.kind if d.kind != INIT else OFFLINE
            if moved and not r.retry:
                if not self._plan_decision(retry, tp, kind, d.arg, alive, eligible,
                                           self.ctx.reassignments.get(tp, ())):
                    self._after_give_up(tp, "nothing to change after re-reading")
            elif moved and kind not in (REASSIGN_EPOCH, REASSIGN_DONE):
                self._owe(tp, kind, d.arg)
                self._after_give_up(tp, f"{f.code} after retry")
            else:
                self._log("gave-up", tp, "", "", f"state write failed: {f.code}"
                          + (" after retry" if r.retry else ""))
                self._after_give_up(tp, f.code)
        for f in failures.values():
            self._log("gave-up", f.path, "", "", f"write failed: {f.code}")
        for x in conditional:
            tp = x[1]
            if x[0] == "expand" or tp in ok:
                continue
            if tp in retry.writes:
                retry.followups.append(x)  # decided once more: still conditional on it
            else:
                self._held.add(tp)  # left in flight: tried again on the next ISR change
                self._log("info", tp, "", "", f"reassignment {x[0]} postponed: state write "
                          "failed")
        if retry.writes:
            retry.followups.extend(x for x in followups if x[0] == "reply")
            retry.ops.extend(after)
            self._apply_followups([x for x in followups if x[0] != "reply"])
            self._run(retry, retry=True)
        else:
            self._apply_followups(followups)
            self._continue(ops=after)

    def _owe(self, tp: TopicPartition, kind: str, arg: int) -> None:
        """The version moved under the retry round too: the decision is owed, decided again
        from the next event on (never dropped: seed 001 retries until the write succeeds;
        the writer that moved the version -- the partition's leader -- announces its change
        with an ISR change notification, so a next event comes). An owed OFFLINE decision
        (the partition's leader or ISR members are dead) is not replaced by another kind."""
        owed = self.ctx.owed
        prev = owed.get(tp)
        if prev is not None and prev[0] == OFFLINE:
            kind, arg = OFFLINE, prev[1]
        owed[tp] = (kind, arg, False)
        self._held.add(tp)
        self._log("gave-up", tp, "", "", f"{kind} decision: state write failed twice; "
                  "decided again on the next event")

    def _owed_due(self) -> None:
        """A new event: owed decisions may be decided again (once per event)."""
        owed = self.ctx.owed
        for tp, (kind, arg, due) in list(owed.items()):
            if not due:
                owed[tp] = (kind, arg, True)

    def _plan_owed(self, plan: Plan) -> None:
        """Decide the due owed decisions again on what memory holds now (the failure's data,
        or newer states learnt since); each leaves ``owed`` (a failure owes it again)."""
        ctx = self.ctx
        owed = ctx.owed
        if not owed:
            return
        alive = set(ctx.live)
        eligible = ctx.eligible()
        for tp in sorted(owed):
            kind, arg, due = owed[tp]
            if not due or tp in self._held:
                continue
            del owed[tp]
            if tp not in ctx.assignment or tp not in ctx.states or tp[0] in ctx.to_delete:
                continue
            if kind == SHUTDOWN and arg not in ctx.shutting_down:
                continue  # it failed meanwhile: the failure decided the partition again
            if self._plan_decision(plan, tp, kind, arg, alive, eligible):
                self._log("info", tp, "", "", f"owed {kind} decision decided again")
            else:
                self._after_give_up(tp, f"owed {kind} decision: nothing to change")

    def _after_give_up(self, tp: TopicPartition, reason: str) -> None:
        """Keep the partition state consistent with what ZooKeeper holds now."""
        st = self.ctx.states.get(tp)
        if st is None:
            return
        leader = st.leader_and_isr.leader
        target = _P.OnlinePartition if leader in self.ctx.live else _P.OfflinePartition
        if self.ctx.partition_state.get(tp) is not target:
            self._move_partitions(((tp, target),), f"re-read after failed write ({reason})")
        self._batch.announce(tp)

    def _commit(self, decisions: Iterable[tuple[TopicPartition, Decision]]) -> None:
        """Take the written states; partitions -> Online (live leader) or Offline (through
        ``_move_partitions``, one batch per decision kind, the kind its reason), one "leader"
        record per partition; an INIT partition's live NewReplicas -> Online; LeaderAndIsr
        to the replicas and UpdateMetadata to all."""
        ctx = self.ctx
        live = ctx.live
        assignment = ctx.assignment
        states = ctx.states
        log = self.state_change_log
        batch = self._batch
        lai = batch.lai
        um = batch.um
        by_kind: dict[str, list] = {}  # decision kind -> partition moves
        moves: list = []
        last_kind = None
        started: list = []  # the replicas of INIT partitions: NewReplica -> OnlineReplica
        for tp, d in decisions:
            replicas = assignment.get(tp)
            if replicas is None:
                continue
            li = d.leader_and_isr
            kind = d.kind
            leader = li.leader
            if kind is not last_kind:
                last_kind = kind
                moves = by_kind.get(kind)  # type: ignore[assignment]
                if moves is None:
                    moves = by_kind[kind] = []
            moves.append((tp, _ONLINE if leader != NO_LEADER and leader in live else _OFFLINE))
            before = states.get(tp)
            states[tp] = PartitionStateZk(li, 0 if d.create else d.expected_version + 1)
            log.append(new_record(StateChange, ("leader", tp, None if before is None
                                                else before.leader_and_isr, li, kind)))
            if kind == INIT:
                for b in replicas:
                    if b in live and ctx.replica_state(tp, b) is _R.NewReplica:
                        started.append((tp, b, _R.OnlineReplica))
            s = lai.get(replicas)  # RequestBatch.leader_and_isr, inlined
            if s is None:
                lai[replicas] = {tp: None}
            else:
                s[tp] = None
            um[tp] = None
        for kind, moves in by_kind.items():
            self._move_partitions(moves, kind)
        if started:
            self._move_replicas(started, "partition online")

    def _apply_followups(self, followups: Iterable[tuple]) -> None:
        batch = self._batch
        for f in followups:
            k = f[0]
            if k == "stop":
                batch.stop_replica(f[1], f[2], f[3])
            elif k == "reply":
                self._reply_shutdown(f[1], f[2])
            elif k == "full":
                batch.lai_full.update(self.ctx.live)
                batch.um_all_partitions_to.update(self.ctx.live)
                batch.um_everyone = True  # the live brokers (and so the controller), always
            elif k == "join":
                batch.lai_full.add(f[1])
                batch.um_all_partitions_to.add(f[1])
                batch.um_everyone = True
            elif k == "um-everyone":
                batch.um_everyone = True
            elif k == "deleting":
                batch.um.update(dict.fromkeys(self.ctx.topics.get(f[1], ())))
            elif k == "online":
                tp = f[1]
                self._move_replicas([(tp, b, _R.OnlineReplica)
                                     for b in self.ctx.assignment.get(tp, ())
                                     if b in self.ctx.live
                                     and self.ctx.replica_state(tp, b) is _R.NewReplica],
                                    "partition online")

    def _reply_shutdown(self, broker: int, correlation: int) -> None:
        remaining = tuple(sorted(
            tp for tp, st in self.ctx.states.items()
            if st.leader_and_isr.leader == broker and len(self.ctx.assignment.get(tp, ())) > 1))
        self._effects.append(ReplyControlledShutdown(
            broker, correlation, ControlledShutdownResponse(ErrorCode.NONE, remaining)))

    # ------------------------------------------------------------------ resignation

    def _resign(self, reason: str) -> None:
        """Discard everything: state, pending writes, requests not yet returned. The session
        state is the client's, not the controller's: it stays as it is (a fenced write
        leaves the client connected; CLOSED moved it already)."""
        self.ctx = ControllerContext()
        self._active = False
        self._loaded = False
        self._fence_version = None
        self._pending = None
        self._batch = RequestBatch()
        self._write = None
        self._effects = [e for e in self._effects if isinstance(e, Resigned)]
        self._effects.append(Resigned(reason))
        self._effects.append(CancelTimer(TimerKind.DELETION_RETRY))
        self._effects.append(CancelTimer(TimerKind.AUTO_REBALANCE))
        self._log("info", None, "active", "resigned", reason)
