"""The KRaft world: quorum controllers on one in-memory, totally ordered metadata log,
KRaft brokers, the channels between them, and abstract time.

* **The log**: a list of records in batches. ``commit`` commits the next batch: the active
  controller hears ``Committed``, the standbys ``Replayed`` (they stay hot). ``failover``
  takes the log's leadership to the next controller: the uncommitted tail is truncated, the
  old one hears ``LeadershipLost``, the new one ``LeadershipGained`` with the log end.
* **Brokers** run the real ``KRaftBroker``; ``fetch`` hands one the committed records it has
  not replayed (brokers see committed records only: the log's rule, not the core's).
* **Channels**: one FIFO queue of requests per broker to the controller, one of answers
  back. ``lose-request`` / ``lose-answer`` drop the head (the broker hears it is lost: its
  timer retries); a request reaches whichever controller is active when it is delivered.
* **Time** is a count of units: ``tick`` adds one; a lease lasts ``SESSION`` units; the
  brokers' heartbeat timers fire as actions of their own (``heartbeat``) whenever armed --
  a running broker's steady heartbeat only while its lease was not renewed in this unit (the
  interval is shorter than the session; more beats in one unit change nothing but the
  interleavings).
* **Faults** (budgets from the scenario): ticks, broker crash (the dying core hears
  ``Crashed`` -- as one that exits hears ``Exited`` -- its move to NOT_RUNNING, and a fresh
  core takes its place; requests already sent may still arrive; answers to the dead process
  are dropped), restart (a new incarnation, with the replicas it had on disk), message loss,
  failover, ISR changes (a leader's follower catches up, or a follower that is down is
  dropped: ``IsrChangeWanted``).

Both cores are driven by their drivers (``fsm.kraft.driver``, ``fsm.kraft.broker_driver``)
over this world's ports, as the live processes will drive them over theirs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsm.errors import ErrorCode
from fsm.kraft.broker.config import KRaftBrokerConfig
from fsm.kraft.broker.core import KRaftBroker
from fsm.kraft.broker.effects import Exit, ScheduleHeartbeat, SendToController
from fsm.kraft.broker.events import (
    ControllerResponse,
    ControllerUnreachable,
    Crashed,
    Exited,
    HeartbeatDue,
    IsrChangesWanted,
    IsrChangeWanted,
    MetadataFetched,
    SigTerm,
    Start,
)
from fsm.kraft.broker.replicas import Role
from fsm.kraft.broker_driver import KRaftBrokerDriver
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.brokers import REGISTRATION_REASONS
from fsm.kraft.controller.config import QuorumControllerConfig
from fsm.kraft.controller.events import (
    AppendRecords,
    Committed,
    ControllerRequest,
    LeadershipGained,
    LeadershipLost,
    MembershipChange,
    Replayed,
    Reply,
    Tick,
)
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.driver import QuorumControllerDriver
from fsm.kraft.image import MetadataImage, snapshot_records
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import BrokerEndpoint
from model_check.kraft import coverage
from model_check.kraft.scenario import AdminSpec, KRaftScenario

CLUSTER_ID = "kraft-world-cluster"
SESSION = 2
"""A lease lasts this many time units."""
NOT_ALIVE = (KRaftBrokerState.NOT_RUNNING, KRaftBrokerState.SHUTTING_DOWN)
MAX_QUEUE = 8
"""Requests or answers queued on one channel: more is a bug (a core that floods)."""


@dataclass(frozen=True)
class KAction:
    kind: str
    target: int = 0  # a broker id, an admin index, or 0
    arg: tuple = ()

    def describe(self, scenario: KRaftScenario | None = None) -> str:
        if self.kind == "admin" and scenario is not None:
            return f"admin: {scenario.admin[self.target].describe()}"
        if self.kind == "isr-change":
            return f"isr-change: broker {self.target} asks isr {list(self.arg[2])} for " \
                   f"partition {self.arg[1]}"
        if self.kind in ("commit", "tick", "failover", "replicate"):
            return self.kind
        if self.kind in ("elect", "crash-controller", "restart-controller"):
            return f"{self.kind} {self.target}"
        return f"{self.kind} broker {self.target}"


@dataclass
class KRaftWorld:
    scenario: KRaftScenario
    controllers: list[QuorumController] = field(default_factory=list)
    active: int = 0
    epoch: int = 1
    log: list[Any] = field(default_factory=list)
    batch_ends: list[int] = field(default_factory=list)  # offset after each batch
    hw: int = -1  # the last committed offset
    brokers: dict[int, KRaftBroker] = field(default_factory=dict)
    to_controller: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    to_broker: dict[int, tuple[tuple[Any, Any], ...]] = field(default_factory=dict)
    timer: dict[int, bool] = field(default_factory=dict)
    disk: dict[int, frozenset] = field(default_factory=dict)
    starts: dict[int, int] = field(default_factory=dict)
    now: int = 0
    budgets: dict[str, int] = field(default_factory=dict)
    admin_done: frozenset[int] = frozenset()
    admin_answers: tuple[tuple[int, Any], ...] = ()
    topic_ids: int = 0
    membership_moves: tuple[tuple[int, str, str], ...] = ()
    reached: set[tuple[str, ...]] | None = field(default=None, compare=False)
    """What the run reached (``coverage``): the search's own set, shared by every copy and
    no part of the state (``key`` leaves it out)."""
    trace: Callable[[str, Any, Sequence[Any]], None] | None = field(default=None,
                                                                   compare=False)
    """Told, when set, of every event a core handles and the effects it answered with, as
    ``trace("c0" | "b1", event, effects)``, and of a broker core's notes as
    ``trace("b1", note, ())`` (the transcript tests print them). Like ``reached``: shared
    by every copy, no part of the state."""

    # -- construction ----------------------------------------------------------------------
    @staticmethod
    def fresh(scenario: KRaftScenario, reached: set[tuple[str, ...]] | None = None
              ) -> KRaftWorld:
        w = KRaftWorld(scenario, budgets=dict(scenario.faults), reached=reached)
        for i in range(scenario.controllers):
            w.controllers.append(new_controller(i))
        w._add_brokers()
        w._controller(0, LeadershipGained(w.epoch, 0, 0))
        return w

    def _add_brokers(self) -> None:
        for b in range(1, self.scenario.brokers + 1):
            self.brokers[b] = self._new_broker(b)
            self.to_controller[b] = ()
            self.to_broker[b] = ()
            self.timer[b] = False
            self.disk[b] = frozenset()
            self.starts[b] = 0

    def _new_broker(self, b: int) -> KRaftBroker:
        return KRaftBroker(KRaftBrokerConfig(
            b, CLUSTER_ID, (BrokerEndpoint("PLAINTEXT", f"broker-{b}", 9092),),
            heartbeat_interval_ms=1, initial_registration_timeout_ms=1_000_000,
            starting_heartbeat_ms=1, shutdown_heartbeat_ms=1,
            controlled_shutdown_enable=self.scenario.controlled_shutdown))

    # -- snapshots -------------------------------------------------------------------------
    def snapshot(self) -> KRaftWorld:
        """An independent copy to keep (the search keeps worlds, and applies each action to
        a copy of its own): the cores copy themselves, the world's parts are tuples."""
        return KRaftWorld(controllers=[c.copy() for c in self.controllers],
                          **self._copied_fields())

    def _copied_fields(self) -> dict[str, Any]:
        """The world's own parts, copied (the controllers are the caller's)."""
        return dict(
            scenario=self.scenario, active=self.active, epoch=self.epoch, log=list(self.log),
            batch_ends=list(self.batch_ends), hw=self.hw,
            brokers={b: c.copy() for b, c in self.brokers.items()},
            to_controller=dict(self.to_controller), to_broker=dict(self.to_broker),
            timer=dict(self.timer), disk=dict(self.disk),
            starts=dict(self.starts), now=self.now, budgets=dict(self.budgets),
            admin_done=self.admin_done, admin_answers=self.admin_answers,
            topic_ids=self.topic_ids, membership_moves=self.membership_moves,
            reached=self.reached, trace=self.trace)

    @staticmethod
    def restore(snap: KRaftWorld) -> KRaftWorld:
        return snap.snapshot()

    def key(self) -> int:
        """The state's identity: what the cores and the world hold, written canonically
        (images as their snapshots, maps sorted), never their memos -- hashed to 64 bits
        (Python's tuple hash; a collision would merge two states: at 10^6 states its odds are
        about 10^-7)."""
        canon = (self.active, self.epoch, tuple(self.log), tuple(self.batch_ends), self.hw,
                 tuple(_controller_key(c) for c in self.controllers),
                 tuple(_broker_key(self.brokers[b]) for b in sorted(self.brokers)),
                 _value(self.to_controller), _value(self.to_broker), _value(self.timer),
                 _value(self.disk), _value(self.starts), self.now, _value(self.budgets),
                 tuple(sorted(self.admin_done)), self.admin_answers, self.topic_ids)
        return hash(canon)

    # -- reading -----------------------------------------------------------------------------
    def alive(self, b: int) -> bool:
        return self.brokers[b].state not in NOT_ALIVE

    @property
    def controller(self) -> QuorumController:
        return self.controllers[self.active]

    def committed_image(self) -> MetadataImage:
        return self.controller.committed

    def log_end(self) -> int:
        return len(self.log)

    def pending(self) -> bool:
        """Something is still on its way: a message, an uncommitted batch, a live broker
        behind the committed log."""
        return (any(self.to_controller.values()) or any(self.to_broker.values())
                or self.hw < len(self.log) - 1
                or any(self.alive(b) and self.brokers[b].metadata_offset < self.hw
                       for b in self.brokers))

    # -- actions ---------------------------------------------------------------------------
    def enabled_actions(self) -> list[KAction]:
        out = self._log_actions()
        reachable = self._reachable()
        for b in sorted(self.brokers):
            if self.to_controller[b] and reachable:
                out.append(KAction("deliver-request", b))
            if self.to_broker[b]:
                out.append(KAction("deliver-answer", b))
            if self.alive(b) and self.brokers[b].metadata_offset < self._fetchable():
                out.append(KAction("fetch", b))
            if self.alive(b) and self.timer[b] and (
                    self.brokers[b].state is not KRaftBrokerState.RUNNING
                    or self._lease_stale(b)):
                out.append(KAction("heartbeat", b))
        for i in range(len(self.scenario.admin)):
            if i not in self.admin_done and (reachable or self._admin_local(i)):
                out.append(KAction("admin", i))
        budget = self.budgets.get
        if budget("ticks", 0) > 0:
            out.append(KAction("tick"))
        if budget("failover", 0) > 0 and self._can_fail_over():
            out.append(KAction("failover"))
        for b in sorted(self.brokers):
            if budget("message_loss", 0) > 0:
                if self.to_controller[b]:
                    out.append(KAction("lose-request", b))
                if self.to_broker[b]:
                    out.append(KAction("lose-answer", b))
            if budget("broker_crash", 0) > 0 and self.alive(b):
                out.append(KAction("crash", b))
            if budget("broker_restart", 0) > 0 and not self.alive(b) and self.starts[b] > 0:
                out.append(KAction("restart", b))
            if self.scenario.init == "empty" and self.starts[b] == 0:
                out.append(KAction("start", b))
        if budget("isr_changes", 0) > 0:
            out += self._isr_changes()
        return out + self._controller_faults()

    # -- what the log decides (the Raft-backed world, ``raft_world``, answers otherwise) ------
    def _log_actions(self) -> list[KAction]:
        return [KAction("commit")] if self.hw < len(self.log) - 1 else []

    def _reachable(self) -> bool:
        """A request delivered now reaches an active controller."""
        return True

    def _admin_local(self, i: int) -> bool:
        """Admin step ``i`` needs no controller (a SIGTERM to a broker)."""
        return self.scenario.admin[i].op == "controlled-shutdown"

    def _fetchable(self) -> int:
        """The last offset a broker's fetch can get."""
        return self.hw

    def _can_fail_over(self) -> bool:
        return len(self.controllers) > 1

    def _controller_faults(self) -> list[KAction]:
        return []

    def _isr_changes(self) -> list[KAction]:
        """A leader's follower caught up (alive, replayed everything, usable in the
        leader's image), or a follower in the ISR is down."""
        out = []
        for b in sorted(self.brokers):
            core = self.brokers[b]
            if not self.alive(b):
                continue
            for (tid, pid), rep in core.replicas():
                if rep.role is not Role.LEADER:
                    continue
                p = core.image.partition(tid, pid)
                if p is None:
                    continue
                for r in p.replicas:
                    if r in rep.isr:
                        continue
                    reg = core.image.brokers.get(r)
                    if (self.alive(r) and self.brokers[r].metadata_offset >= self.hw
                            and reg is not None and not reg.fenced
                            and not reg.in_controlled_shutdown):
                        out.append(KAction("isr-change", b, (tid, pid, rep.isr + (r,))))
                for r in rep.isr:
                    if r != b and not self.alive(r):
                        out.append(KAction("isr-change", b, (tid, pid, tuple(
                            x for x in rep.isr if x != r))))
        return out

    def _lease_stale(self, b: int) -> bool:
        """A running broker's steady heartbeat is worth sending: the active controller has
        it fenced (or not at all), or has not renewed its lease in this time unit. (Derived
        from the cores, so it adds nothing to the state.)"""
        c = self.controller
        reg = c.image.brokers.get(b)
        return reg is None or reg.fenced or c.leases.get(b, -1) < self.now + SESSION

    def apply(self, a: KAction) -> None:
        getattr(self, _APPLY[a.kind])(a)

    # -- the steps ---------------------------------------------------------------------------
    def _commit(self, _a: KAction) -> None:
        end = next(e for e in self.batch_ends if e > self.hw + 1)
        base, records = self.hw + 1, tuple(self.log[self.hw + 1:end])
        self.hw = end - 1
        for i in range(len(self.controllers)):
            if i == self.active:
                self._controller(i, Committed(self.hw))
            else:
                self._controller(i, Replayed(base, records))

    def _deliver_request(self, a: KAction) -> None:
        request, *rest = self.to_controller[a.target]
        self.to_controller[a.target] = tuple(rest)
        self._controller(self.active, ControllerRequest(("broker", a.target, request), request))

    def _deliver_answer(self, a: KAction) -> None:
        (request, response), *rest = self.to_broker[a.target]
        self.to_broker[a.target] = tuple(rest)
        self._broker(a.target, ControllerResponse(request, response))

    def _fetch(self, a: KAction) -> None:
        core = self.brokers[a.target]
        base = core.metadata_offset + 1
        self._broker(a.target, MetadataFetched(base, tuple(self.log[base:self.hw + 1])))

    def _heartbeat(self, a: KAction) -> None:
        self.timer[a.target] = False
        self._broker(a.target, HeartbeatDue(self.now))

    def _admin(self, a: KAction) -> None:
        self.admin_done = self.admin_done | {a.target}
        spec = self.scenario.admin[a.target]
        if spec.op == "controlled-shutdown":
            if self.alive(spec.broker):
                self._broker(spec.broker, SigTerm())
            return
        self._controller(self.active, ControllerRequest(("admin", a.target),
                                                        self._admin_request(spec)))

    def _admin_request(self, spec: AdminSpec) -> Any:
        if spec.op == "create-topic":
            self.topic_ids += 1
            return rq.CreateTopicsRequest((rq.CreatableTopic(spec.topic, spec.partitions,
                                                             spec.replication_factor),),
                                          (uuid_of(self.topic_ids),))
        if spec.op == "delete-topic":
            return rq.DeleteTopicsRequest((spec.topic,))
        if spec.op == "reassign":
            return rq.AlterPartitionReassignmentsRequest(
                (rq.ReassignablePartition(spec.topic, spec.partition, spec.replicas),))
        if spec.op == "add-partitions":
            return rq.CreatePartitionsRequest((rq.CreatePartitionsTopic(spec.topic,
                                                                        spec.partitions),))
        if spec.op == "cancel-reassignment":
            return rq.AlterPartitionReassignmentsRequest(
                (rq.ReassignablePartition(spec.topic, spec.partition, None),))
        if spec.op == "list-reassignments":
            return rq.ListPartitionReassignmentsRequest()
        if spec.op == "elect-preferred":
            return rq.ElectLeadersRequest(rq.PREFERRED, ((spec.topic, spec.partition),))
        if spec.op == "elect-unclean":
            return rq.ElectLeadersRequest(rq.UNCLEAN, ((spec.topic, spec.partition),))
        if spec.op == "unregister":
            return rq.UnregisterBrokerRequest(spec.broker)
        raise ValueError(f"unknown admin op {spec.op!r}")

    def _tick(self, _a: KAction) -> None:
        self._spend("ticks")
        self.now += 1
        self._controller(self.active, Tick(self.now))

    def _failover(self, _a: KAction) -> None:
        self._spend("failover")
        old = self.active
        self.epoch += 1
        self._controller(old, LeadershipLost(self.epoch))
        del self.log[self.hw + 1:]
        self.batch_ends = [e for e in self.batch_ends if e <= self.hw + 1]
        self.active = (old + 1) % len(self.controllers)
        self._controller(self.active, LeadershipGained(self.epoch, self.hw + 1, self.now))

    def _lose_request(self, a: KAction) -> None:
        self._spend("message_loss")
        request, *rest = self.to_controller[a.target]
        self.to_controller[a.target] = tuple(rest)
        if self.alive(a.target):
            self._broker(a.target, ControllerUnreachable(request))

    def _lose_answer(self, a: KAction) -> None:
        self._spend("message_loss")
        (request, _), *rest = self.to_broker[a.target]
        self.to_broker[a.target] = tuple(rest)
        self._broker(a.target, ControllerUnreachable(request))

    def _crash(self, a: KAction) -> None:
        self._spend("broker_crash")
        self._gone(a.target, Crashed())

    def _gone(self, b: int, end: Crashed | Exited) -> None:
        """Broker ``b``'s process ends: its replicas stay on disk, the dying core hears
        ``end`` (its move to NOT_RUNNING, after which it holds what a fresh core does), and
        a fresh core takes its place, as the next process's."""
        self.disk[b] = frozenset(k for k, _ in self.brokers[b].replicas()) | self.disk[b]
        self._broker(b, end)
        self.brokers[b] = self._new_broker(b)
        self.to_broker[b] = ()
        self.timer[b] = False

    def _restart(self, a: KAction) -> None:
        self._spend("broker_restart")
        self._start(a)

    def _start(self, a: KAction) -> None:
        b = a.target
        self.starts[b] += 1
        incarnation = uuid_of(100_000 * b + self.starts[b])
        self._broker(b, Start(incarnation, self.now, tuple(sorted(self.disk[b]))))

    def _isr_change(self, a: KAction) -> None:
        self._spend("isr_changes")
        tid, pid, isr = a.arg
        self._broker(a.target, IsrChangesWanted((IsrChangeWanted(tid, pid, isr),)))

    def _spend(self, budget: str) -> None:
        self.budgets[budget] -= 1

    # -- the cores, through their drivers ---------------------------------------------------
    def _reach(self, *item: str) -> None:
        if self.reached is not None:
            self.reached.add(item)

    def _controller(self, i: int, event: Any) -> None:
        if isinstance(event, ControllerRequest) and self.controllers[i].active:
            self._reach_request(event.request)
        QuorumControllerDriver(self._traced(f"c{i}", self.controllers[i].handle),
                               _ControllerPort(self, i)).process(event)

    def _reach_request(self, request: object) -> None:
        if self.reached is not None:
            self.reached.update(coverage.request_items(request))

    def _broker(self, b: int, event: Any) -> None:
        if self.reached is not None:
            self.reached.update(coverage.broker_event_items(event))
        core = self.brokers[b]
        KRaftBrokerDriver(self._traced(f"b{b}", core.handle), _BrokerPort(self, b)).process(
            event)
        notes = core.drain_notes()
        if self.trace is not None:
            for note in notes:
                self.trace(f"b{b}", note, ())

    def _traced(self, who: str, step: Callable[[Any], Sequence[Any]]
                ) -> Callable[[Any], Sequence[Any]]:
        trace = self.trace
        if trace is None:
            return step

        def traced(event: Any) -> Sequence[Any]:
            effects = step(event)
            trace(who, event, effects)
            return effects
        return traced


class _ControllerPort:
    def __init__(self, world: KRaftWorld, index: int) -> None:
        self.w, self.i = world, index

    def append(self, e: AppendRecords) -> None:
        w = self.w
        if self.i != w.active or e.epoch != w.epoch or e.base_offset != len(w.log):
            raise AssertionError(f"controller {self.i} appended at {e.base_offset} in epoch "
                                 f"{e.epoch}; the log is at {len(w.log)} in epoch {w.epoch}")
        w.log += e.records
        w.batch_ends.append(len(w.log))
        for r in e.records:
            w._reach("record", type(r).__name__)

    def reply(self, e: Reply) -> None:
        w = self.w
        kind, who, *rest = e.token
        if kind == "admin":
            w.admin_answers = w.admin_answers + ((who, e.response),)
            return
        if kind == "setup":
            return
        if isinstance(e.response, rq.BrokerRegistrationResponse) and \
                e.response.error == ErrorCode.DUPLICATE_BROKER_REGISTRATION:
            w._reach("kraft-registration", "refused: DUPLICATE_BROKER_REGISTRATION")
        queue = w.to_broker[who] + ((rest[0], e.response),)
        if len(queue) > MAX_QUEUE:
            raise AssertionError(f"{len(queue)} answers queued to broker {who}")
        w.to_broker[who] = queue

    def membership_changed(self, e: MembershipChange) -> None:
        self.w._reach("kraft-broker-membership", e.source, e.target)
        if e.reason in REGISTRATION_REASONS:
            self.w._reach("kraft-registration", e.reason)
        self.w.membership_moves = (self.w.membership_moves + ((e.broker_id, e.source,
                                                                e.target),))[-4:]


class _BrokerPort:
    def __init__(self, world: KRaftWorld, broker: int) -> None:
        self.w, self.b = world, broker

    def send_to_controller(self, e: SendToController) -> None:
        queue = self.w.to_controller[self.b] + (e.request,)
        if len(queue) > MAX_QUEUE:
            raise AssertionError(f"{len(queue)} requests queued from broker {self.b}")
        self.w.to_controller[self.b] = queue

    def schedule_heartbeat(self, e: ScheduleHeartbeat) -> None:
        self.w.timer[self.b] = True

    def replica_role(self, e: object) -> None:
        pass  # the roles are the core's; the invariants read them there

    def reply_metadata(self, e: object) -> None:
        pass

    def exit(self, e: Exit) -> None:
        self.w._gone(self.b, Exited())

    def lifecycle_changed(self, e: Any) -> None:
        self.w._reach("kraft-broker-lifecycle", e.source.value, e.target.value)


_APPLY = {
    "commit": "_commit", "deliver-request": "_deliver_request",
    "deliver-answer": "_deliver_answer", "fetch": "_fetch", "heartbeat": "_heartbeat",
    "admin": "_admin", "tick": "_tick", "failover": "_failover",
    "lose-request": "_lose_request", "lose-answer": "_lose_answer", "crash": "_crash",
    "restart": "_restart", "start": "_start", "isr-change": "_isr_change",
    "replicate": "_replicate", "elect": "_elect", "crash-controller": "_crash_controller",
    "restart-controller": "_restart_controller",
}
"""Action kind -> the method that takes it (looked up on the world: the Raft-backed world
overrides the log's)."""

def new_controller(i: int) -> QuorumController:
    """Controller ``i`` (node id 3000 + i), fresh."""
    return QuorumController(QuorumControllerConfig(
        node_id=3000 + i, cluster_id=CLUSTER_ID, session_timeout_ms=SESSION,
        default_replication_factor=3))


def _value(x: Any) -> Any:
    """A hashable, canonical form of one field of a core: images as their snapshots, maps
    and sets sorted; everything else in a core is an immutable value already."""
    if isinstance(x, MetadataImage):
        return tuple(snapshot_records(x))
    if isinstance(x, dict):
        return tuple(sorted(x.items(), key=_by_key))
    if isinstance(x, (set, frozenset)):
        return tuple(sorted(x, key=repr))
    if isinstance(x, (list, deque)):
        return tuple(x)
    return x


def _by_key(kv: tuple[Any, Any]) -> Any:
    return kv[0]


def _broker_key(core: KRaftBroker) -> tuple:
    return tuple(_value(getattr(core, n)) for n in _BROKER_FIELDS)


def _controller_key(c: QuorumController) -> tuple:
    return (c.active, c.epoch, c.next_offset, c.committed_offset, c.now_ms, _value(c.leases),
            _value(c.shutdown_offsets), _value(c.reported),
            _value(c.committed), None if c.image is c.committed else _value(c.image),
            tuple(c._uncommitted), tuple(c._waiting))


_BROKER_FIELDS = tuple(n for n in KRaftBroker.__slots__ if n not in ("config", "_notes"))
