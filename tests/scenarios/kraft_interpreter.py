"""The transcript language of KRaft mode (issue 23 item 7), over the checker's KRaft world
(``model_check.kraft.world.KRaftWorld``): every step is one of the world's own actions, run
by the real cores through their real drivers; the world's trace hook tells this interpreter
what the cores handled and what they answered, and it prints that. Transcripts are the
``kraft_*.txt`` files beside this module (``test_transcripts`` picks the interpreter by the
prefix); the format is the ZooKeeper mode's (``interpreter.parse``). Commands:

    world brokers=3 [controllers=2]
    start all | start B      a broker process starts (a new incarnation)
    run [quiet]              the setup's fixed progress policy (commit, deliver, fetch, the
                             heartbeats of brokers not RUNNING) until nothing is left
                             (``quiet``: one summary line instead of the steps)
    step [N]                 N steps of that policy
    do <action>              the enabled action whose ``describe()`` is <action>
    enabled                  every enabled action
    commit | tick [N] | failover
    advance [N] [quiet]      N time units in which every live RUNNING broker heartbeats (a
                             tick, their steady heartbeats, then ``run``)
    deliver-request B | deliver-answer B | fetch B | heartbeat B | lose-request B |
    lose-answer B | crash B | restart B          (each must be enabled)
    isr B T-P R,R            the replication layer of leader B wants ISR R,R (IsrChangeWanted)
    create-topic T P:R,R,R ... [partitions=N] [rf=N] [; T ...]   one CreateTopics request
    delete-topic T [T ...]   add-partitions T N   reassign T-P R,R   cancel-reassignment T-P
    list-reassignments       elect preferred|unclean T-P   unregister B
    shutdown B               SIGTERM: a controlled shutdown
    expect <query> = <value> fails the test (also under --rewrite) when it does not hold
    expect invariants        the KRaft catalogue holds now (state invariants, and the
                             quiescent ones when nothing is pending)
    show partitions|brokers|log|queues|controllers

Admin requests go to the active controller; their answers print when the controller sends
them (``c0 -> admin ...``), which is only once what they were decided on is committed.
Every step is also checked like a step of the search: it must not raise, and the transition
and state invariants must hold after it (a violation fails the command).

Queries (``T-P`` read from the active controller's committed image; ``future-...`` from its
image with the uncommitted records): ``leader``, ``isr``, ``leader-epoch``,
``partition-epoch``, ``replicas``, ``adding``, ``removing`` of ``T-P``; ``membership B``
(the active controller's view, uncommitted records included), ``fenced B`` (committed),
``registered-epoch B`` (committed), ``state B``, ``broker-epoch B`` (the broker's own),
``metadata-offset B``, ``role B T-P`` (the broker's local replica), ``last-response B`` (the
last answer broker B received), ``last-answer`` (the last admin answer), ``committed-offset``,
``log-end`` (the offset the next record takes), ``active`` (the active controller),
``last-errors`` (its per-item error codes, ``topic[-partition]:CODE ...``),
``waiting`` (answers the active controller holds), ``topics`` (committed), ``pending``, ``now``.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import re
from collections.abc import Sequence
from typing import Any

from fsm.errors import ErrorCode
from fsm.kraft.broker import effects as be
from fsm.kraft.broker import events as bv
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller import events as cv
from fsm.kraft.controller import requests as rq
from fsm.kraft.image import MetadataImage
from fsm.kraft.image.partitions import PartitionImage
from fsm.kraft.records import values as rv
from fsm.kraft.records.uuid import Uuid, uuid_of
from invariants.kraft import CATALOGUE
from invariants.registry import QUIESCENT, STATE
from model_check.kraft.scenario import FAULTS, KRaftScenario
from model_check.kraft.search import check_edge, check_state
from model_check.kraft.setup import _progress
from model_check.kraft.view import view_of
from model_check.kraft.world import KAction, KRaftWorld

from .interpreter import ints as _ints
from .interpreter import run_transcript, tp_of

MAX_RUN = 2000
"""Steps one ``run`` may take: more means the policy does not settle (a bug)."""
INDENT = " " * 7
ADMIN_BASE = 1000
"""Admin tokens are ``("admin", ADMIN_BASE + n)``: beyond the scenario's own admin list."""


_KEY = re.compile(r"""\((b'(?:[^'\\]|\\.)*'), (\d+)\)""")
"""A partition key as a note writes it: ``(b'...', 0)``."""
_CODE = re.compile(r"<ErrorCode\.(\w+): -?\d+>")


def ints(s: str) -> tuple[int, ...]:
    """``1,2,3`` or ``[1,2,3]``."""
    return _ints(s.strip("[]"))


def _ids(xs: Sequence[int]) -> str:
    return "[" + ",".join(map(str, xs)) + "]"


class KRaftInterpreter:
    def __init__(self) -> None:
        self.world: KRaftWorld | None = None
        self.out: list[str] = []
        self.step_no = 0
        self.names: dict[Uuid, str] = {}
        self.admin_sent = 0
        self.last_response: dict[int, Any] = {}
        self.last_answer: Any = None

    # ------------------------------------------------------------ plumbing

    def execute(self, command: str) -> list[str]:
        self.out = []
        words = command.split()
        handler = getattr(self, "cmd_" + words[0].replace("-", "_"), None)
        if handler is None:
            raise ValueError(f"unknown command {command!r}")
        handler(words[1:])
        return self.out or ["ok"]

    @property
    def w(self) -> KRaftWorld:
        assert self.world is not None, "no world yet: start with `world brokers=N`"
        return self.world

    def emit(self, line: str) -> None:
        self.out.append(line.rstrip())

    def _checked(self, title: str, apply: Any) -> None:
        """One numbered step: ``apply()`` changes the world; the trace prints what the cores
        did; the step is checked like a step of the search."""
        self.step_no += 1
        self.emit(f"{self.step_no:>4} {title}")
        before = view_of(self.w)
        try:
            apply()
        except AssertionError:
            raise
        except Exception as e:  # noqa: BLE001 -- a raising step is a finding
            raise AssertionError(f"the step raised {type(e).__name__}: {e}") from e
        after = view_of(self.w)
        found = check_edge(before, after) or check_state(after)
        assert found is None, f"violated {found[0]}: {found[1]}"

    def act(self, action: KAction, must_be_enabled: bool = True) -> None:
        if must_be_enabled:
            enabled = self.w.enabled_actions()
            assert action in enabled, f"`{action.describe()}` is not enabled; enabled: " \
                + "; ".join(a.describe() for a in enabled)
        self._checked(action.describe(), lambda: self.w.apply(action))

    # ------------------------------------------------------------ the world and scheduling

    def cmd_world(self, args: list[str]) -> None:
        opts = dict(a.split("=", 1) for a in args)
        scenario = KRaftScenario("transcript", brokers=int(opts.get("brokers", 3)),
                                 controllers=int(opts.get("controllers", 2)), init="empty",
                                 faults={k: 10_000 for k in FAULTS})
        self.world = KRaftWorld.fresh(scenario)
        self.world.trace = self._trace

    def cmd_start(self, args: list[str]) -> None:
        targets = sorted(self.w.brokers) if args == ["all"] else [int(args[0])]
        for b in targets:
            self.act(KAction("start", b))

    def cmd_run(self, args: list[str]) -> None:
        """``run`` or ``run quiet`` (one summary line: each step is still checked). The
        policy is also done when it brings the world back to a state of this run: from there
        it would only go round (a broker in controlled shutdown heartbeating while the
        shutdown waits for the other brokers' heartbeats, which need time to pass)."""
        out, first = self.out, self.step_no + 1
        seen = {self.w.key()}
        for n in range(MAX_RUN + 1):
            a = _progress(self.w)
            if a is None:
                if n == 0:
                    out.append("(nothing to do)")
                elif args == ["quiet"]:
                    out.append(f"steps {first}..{self.step_no}: committed to @{self.w.hw}"
                               + (", pending" if self.w.pending() else ", nothing pending"))
                return
            if args == ["quiet"]:
                self.out = []
            self.act(a, must_be_enabled=False)
            if args == ["quiet"]:
                self.out = out
            key = self.w.key()
            if key in seen:
                if args == ["quiet"]:
                    out.append(f"steps {first}..{self.step_no}: committed to @{self.w.hw}, "
                               f"round again")
                else:
                    out.append("(round again: back to a state of this run)")
                return
            seen.add(key)
        raise AssertionError(f"`run` did not settle in {MAX_RUN} steps")

    def cmd_step(self, args: list[str]) -> None:
        for _ in range(int(args[0]) if args else 1):
            a = _progress(self.w)
            if a is None:
                self.emit("(nothing to do)")
                return
            self.act(a, must_be_enabled=False)

    def cmd_do(self, args: list[str]) -> None:
        want = " ".join(args)
        for a in self.w.enabled_actions():
            if a.describe(self.w.scenario) == want:
                self.act(a, must_be_enabled=False)
                return
        raise AssertionError(f"`{want}` is not enabled; enabled: " + "; ".join(
            a.describe() for a in self.w.enabled_actions()))

    def cmd_enabled(self, args: list[str]) -> None:
        for a in self.w.enabled_actions():
            self.emit(a.describe(self.w.scenario))

    def cmd_commit(self, args: list[str]) -> None:
        self.act(KAction("commit"))

    def cmd_tick(self, args: list[str]) -> None:
        for _ in range(int(args[0]) if args else 1):
            self.act(KAction("tick"))

    def cmd_advance(self, args: list[str]) -> None:
        """``advance [N] [quiet]``: N units of time in which every live, running broker keeps
        its lease: a tick, then the steady heartbeat of each one whose heartbeat is enabled,
        then ``run``. A broker that is down (or not yet running) is not helped."""
        quiet = "quiet" in args
        numbers = [a for a in args if a != "quiet"]
        out, first = self.out, self.step_no + 1
        for _ in range(int(numbers[0]) if numbers else 1):
            if quiet:
                self.out = []
            self.act(KAction("tick"))
            enabled = self.w.enabled_actions()
            for b in sorted(self.w.brokers):
                if (KAction("heartbeat", b) in enabled
                        and self.w.brokers[b].state is KRaftBrokerState.RUNNING):
                    self.act(KAction("heartbeat", b))
            self.cmd_run([])
        if quiet:
            self.out = out
            out.append(f"steps {first}..{self.step_no}: now={self.w.now}, committed to "
                       f"@{self.w.hw}" + (", pending" if self.w.pending() else
                                          ", nothing pending"))

    def cmd_failover(self, args: list[str]) -> None:
        self.act(KAction("failover"))

    def cmd_deliver_request(self, args: list[str]) -> None:
        self.act(KAction("deliver-request", int(args[0])))

    def cmd_deliver_answer(self, args: list[str]) -> None:
        self.act(KAction("deliver-answer", int(args[0])))

    def cmd_fetch(self, args: list[str]) -> None:
        self.act(KAction("fetch", int(args[0])))

    def cmd_heartbeat(self, args: list[str]) -> None:
        self.act(KAction("heartbeat", int(args[0])))

    def cmd_lose_request(self, args: list[str]) -> None:
        self.act(KAction("lose-request", int(args[0])))

    def cmd_lose_answer(self, args: list[str]) -> None:
        self.act(KAction("lose-answer", int(args[0])))

    def cmd_crash(self, args: list[str]) -> None:
        self.act(KAction("crash", int(args[0])))

    def cmd_restart(self, args: list[str]) -> None:
        self.act(KAction("restart", int(args[0])))

    def cmd_isr(self, args: list[str]) -> None:
        t, p = tp_of(args[1])
        action = KAction("isr-change", int(args[0]), (self._topic_id(t), p, ints(args[2])))
        self._checked(f"isr-change: broker {args[0]} asks isr {_ids(ints(args[2]))} for "
                      f"{args[1]}", lambda: self.w.apply(action))

    def _topic_id(self, name: str) -> Uuid:
        for uid, n in self.names.items():
            if n == name:
                return uid
        raise AssertionError(f"no topic {name!r} was ever created here")

    # ------------------------------------------------------------ admin

    def _admin(self, title: str, request: Any) -> None:
        w = self.w
        self.admin_sent += 1
        token = ("admin", ADMIN_BASE + self.admin_sent)
        self._checked(f"admin {title}", lambda: w._controller(
            w.active, cv.ControllerRequest(token, request)))

    def cmd_create_topic(self, args: list[str]) -> None:
        topics, ids = [], []
        for spec in " ".join(args).split(";"):
            name, *rest = spec.split()
            assignments, opts = [], {}
            for word in rest:
                if "=" in word:
                    k, v = word.split("=", 1)
                    opts[k] = int(v)
                else:
                    p, r = word.split(":")
                    assignments.append((int(p), ints(r)))
            self.w.topic_ids += 1
            uid = uuid_of(self.w.topic_ids)
            self.names.setdefault(uid, name)
            ids.append(uid)
            topics.append(rq.CreatableTopic(name, opts.get("partitions", -1),
                                            opts.get("rf", -1), tuple(assignments)))
        self._admin("create-topic " + " ".join(args),
                    rq.CreateTopicsRequest(tuple(topics), tuple(ids)))

    def cmd_delete_topic(self, args: list[str]) -> None:
        self._admin("delete-topic " + " ".join(args), rq.DeleteTopicsRequest(tuple(args)))

    def cmd_add_partitions(self, args: list[str]) -> None:
        self._admin(f"add-partitions {args[0]} to {args[1]}", rq.CreatePartitionsRequest(
            (rq.CreatePartitionsTopic(args[0], int(args[1])),)))

    def cmd_reassign(self, args: list[str]) -> None:
        t, p = tp_of(args[0])
        self._admin(f"reassign {args[0]} to {_ids(ints(args[1]))}",
                    rq.AlterPartitionReassignmentsRequest(
                        (rq.ReassignablePartition(t, p, ints(args[1])),)))

    def cmd_cancel_reassignment(self, args: list[str]) -> None:
        t, p = tp_of(args[0])
        self._admin(f"cancel-reassignment {args[0]}", rq.AlterPartitionReassignmentsRequest(
            (rq.ReassignablePartition(t, p, None),)))

    def cmd_list_reassignments(self, args: list[str]) -> None:
        self._admin("list-reassignments", rq.ListPartitionReassignmentsRequest())

    def cmd_elect(self, args: list[str]) -> None:
        kind = {"preferred": rq.PREFERRED, "unclean": rq.UNCLEAN}[args[0]]
        self._admin(f"elect {args[0]} {args[1]}",
                    rq.ElectLeadersRequest(kind, (tp_of(args[1]),)))

    def cmd_unregister(self, args: list[str]) -> None:
        self._admin(f"unregister broker {args[0]}", rq.UnregisterBrokerRequest(int(args[0])))

    def cmd_shutdown(self, args: list[str]) -> None:
        b = int(args[0])
        assert self.w.alive(b), f"broker {b} is not running"
        self._checked(f"admin shutdown broker {b} (SIGTERM)",
                      lambda: self.w._broker(b, bv.SigTerm()))

    # ------------------------------------------------------------ the trace

    def _trace(self, who: str, event: Any, effects: Sequence[Any]) -> None:
        if isinstance(event, str):
            self.emit(f"{INDENT}{who} {self._note(event)}")
            return
        if who.startswith("c"):
            self._controller_event(who, event, effects)
        else:
            self._broker_event(who, event, effects)

    def _controller_event(self, who: str, e: Any, effects: Sequence[Any]) -> None:
        say = self.emit
        if isinstance(e, cv.ControllerRequest):
            say(f"{INDENT}{who} <- {self._from(e.token)} {self.fmt(e.request)}")
        elif isinstance(e, cv.Committed):
            say(f"{INDENT}{who} committed to @{e.offset}")
        elif isinstance(e, cv.Replayed):
            if e.records:
                say(f"{INDENT}{who} replays @{e.base_offset}..@"
                    f"{e.base_offset + len(e.records) - 1}")
        elif isinstance(e, cv.Tick):
            say(f"{INDENT}{who} tick: now={e.now_ms}")
        elif isinstance(e, cv.LeadershipGained):
            say(f"{INDENT}{who} leads the log in epoch {e.epoch}, from @{e.log_end_offset}")
        elif isinstance(e, cv.LeadershipLost):
            say(f"{INDENT}{who} loses the log's leadership (epoch {e.epoch})")
        for f in effects:
            if isinstance(f, cv.AppendRecords):
                for i, r in enumerate(f.records):
                    say(f"{INDENT}{who} append @{f.base_offset + i} {self.record(r)}")
            elif isinstance(f, cv.Reply):
                if f.token[0] == "admin":
                    self.last_answer = f.response
                if f.token[0] != "setup":
                    say(f"{INDENT}{who} -> {self._from(f.token)} {self.fmt(f.response)}")
            elif isinstance(f, cv.MembershipChange):
                say(f"{INDENT}{who} membership b{f.broker_id}: {f.source} -> {f.target} "
                    f"(@{f.offset} {f.reason})")
        if isinstance(e, cv.ControllerRequest):
            c = self.w.controllers[int(who[1:])]
            held = [last for last, r in c._waiting if r.token == e.token]
            if held:
                say(f"{INDENT}{who} holds the answer until @{held[0]} is committed")

    def _broker_event(self, who: str, e: Any, effects: Sequence[Any]) -> None:
        say = self.emit
        b = int(who[1:])
        if isinstance(e, bv.Start):
            self.last_response.pop(b, None)
            say(f"{INDENT}{who} starts as incarnation {self.uuid(e.incarnation_id)}"
                + (f" (on disk: {', '.join(self.tp(k) for k in e.local_replicas)})"
                   if e.local_replicas else ""))
        elif isinstance(e, bv.MetadataFetched):
            if e.records:
                say(f"{INDENT}{who} replays @{e.base_offset}..@"
                    f"{e.base_offset + len(e.records) - 1}")
        elif isinstance(e, bv.ControllerResponse):
            self.last_response[b] = e.response
            say(f"{INDENT}{who} <- {self.fmt(e.response)}")
        elif isinstance(e, bv.ControllerUnreachable):
            say(f"{INDENT}{who} lost {self.fmt(e.request)}")
        elif isinstance(e, bv.HeartbeatDue):
            say(f"{INDENT}{who} heartbeat timer (now={e.now_ms})")
        elif isinstance(e, bv.SigTerm):
            say(f"{INDENT}{who} SIGTERM")
        elif isinstance(e, bv.IsrChangesWanted):
            for c in e.changes:
                say(f"{INDENT}{who} wants isr {_ids(c.new_isr)} for "
                    f"{self.tp((c.topic_id, c.partition_id))}")
        for f in effects:
            if isinstance(f, be.SendToController):
                say(f"{INDENT}{who} -> {self.fmt(f.request)}")
            elif isinstance(f, be.LifecycleChange):
                say(f"{INDENT}{who} {f.source.value} -> {f.target.value}")
            elif isinstance(f, be.BecomeLeader):
                say(f"{INDENT}{who} leads {self.tp((f.topic_id, f.partition_id))} "
                    f"leader_epoch={f.leader_epoch} isr={_ids(f.isr)}")
            elif isinstance(f, be.BecomeFollower):
                say(f"{INDENT}{who} follows {self.tp((f.topic_id, f.partition_id))} "
                    f"leader={f.leader} leader_epoch={f.leader_epoch}")
            elif isinstance(f, be.UpdateIsr):
                say(f"{INDENT}{who} isr of {self.tp((f.topic_id, f.partition_id))} = "
                    f"{_ids(f.isr)} (leader_epoch={f.leader_epoch} "
                    f"partition_epoch={f.partition_epoch})")
            elif isinstance(f, be.DeleteReplica):
                say(f"{INDENT}{who} deletes {self.tp((f.topic_id, f.partition_id))}")
            elif isinstance(f, be.Exit):
                say(f"{INDENT}{who} exits")

    def _note(self, note: str) -> str:
        """A broker core's note, its partition keys and error codes printed as elsewhere."""
        note = _KEY.sub(lambda m: self.tp((ast.literal_eval(m[1]), int(m[2]))), note)
        return _CODE.sub(lambda m: m[1], note)

    @staticmethod
    def _from(token: Any) -> str:
        return "admin" if token[0] == "admin" else f"b{token[1]}"

    # ------------------------------------------------------------ printing values

    def uuid(self, u: Uuid) -> str:
        if u in self.names:
            return self.names[u]
        n = int.from_bytes(u, "big")
        return f"{n // 100_000}.{n % 100_000}" if n >= 100_000 else f"id{n}"

    def tp(self, key: tuple[Uuid, int]) -> str:
        return f"{self.uuid(key[0])}-{key[1]}"

    def record(self, r: Any) -> str:  # noqa: C901 -- a flat dispatch
        if isinstance(r, rv.RegisterBrokerRecord):
            return (f"RegisterBroker b{r.broker_id} epoch={r.broker_epoch} incarnation="
                    f"{self.uuid(r.incarnation_id)}{' fenced' if r.fenced else ''}"
                    f"{' in_controlled_shutdown' if r.in_controlled_shutdown else ''}")
        if isinstance(r, rv.UnregisterBrokerRecord):
            return f"UnregisterBroker b{r.broker_id} epoch={r.broker_epoch}"
        if isinstance(r, rv.FenceBrokerRecord):
            return f"FenceBroker b{r.id} epoch={r.epoch}"
        if isinstance(r, rv.UnfenceBrokerRecord):
            return f"UnfenceBroker b{r.id} epoch={r.epoch}"
        if isinstance(r, rv.BrokerRegistrationChangeRecord):
            fence = {rv.FENCE_CHANGE_NONE: "", rv.FENCE_CHANGE_FENCED: " fenced",
                     rv.FENCE_CHANGE_UNFENCED: " unfenced"}[r.fenced]
            return (f"BrokerRegistrationChange b{r.broker_id} epoch={r.broker_epoch}{fence}"
                    f"{' in_controlled_shutdown' if r.in_controlled_shutdown else ''}")
        if isinstance(r, rv.TopicRecord):
            self.names.setdefault(r.topic_id, r.name)
            return f"Topic {r.name}"
        if isinstance(r, rv.RemoveTopicRecord):
            return f"RemoveTopic {self.uuid(r.topic_id)}"
        if isinstance(r, rv.PartitionRecord):
            extra = (f" adding={_ids(r.adding_replicas)}" if r.adding_replicas else "") + (
                f" removing={_ids(r.removing_replicas)}" if r.removing_replicas else "")
            return (f"Partition {self.tp((r.topic_id, r.partition_id))} replicas="
                    f"{_ids(r.replicas)} isr={_ids(r.isr)} leader={r.leader}{extra} "
                    f"leader_epoch={r.leader_epoch} partition_epoch={r.partition_epoch}")
        if isinstance(r, rv.PartitionChangeRecord):
            parts = [f"PartitionChange {self.tp((r.topic_id, r.partition_id))}"]
            for name in ("isr", "replicas", "adding_replicas", "removing_replicas"):
                value = getattr(r, name)
                if value is not None:
                    parts.append(f"{name.removesuffix('_replicas')}={_ids(value)}")
            parts.append("leader=unchanged" if r.leader == rv.LEADER_UNCHANGED
                         else f"leader={r.leader}")
            return " ".join(parts)
        return self.fmt(r)

    def fmt(self, x: Any) -> str:  # noqa: C901 -- a flat dispatch
        """A compact form of any request, answer or value: the error code first, fields at
        their defaults left out, topic ids as the topic's name."""
        if isinstance(x, rq.BrokerRegistrationRequest):
            return (f"BrokerRegistration(b{x.broker_id} incarnation="
                    f"{self.uuid(x.incarnation_id)})")
        if isinstance(x, rq.BrokerHeartbeatRequest):
            flags = (" want_fence" if x.want_fence else "") + (
                " want_shut_down" if x.want_shut_down else "")
            return (f"BrokerHeartbeat(b{x.broker_id} epoch={x.broker_epoch} "
                    f"offset={x.current_metadata_offset}{flags})")
        if isinstance(x, rq.BrokerHeartbeatResponse):
            if x.error is not ErrorCode.NONE:
                return f"BrokerHeartbeatResponse({x.error.name})"
            return (f"BrokerHeartbeatResponse(NONE caught_up={str(x.is_caught_up).lower()} "
                    f"fenced={str(x.is_fenced).lower()} "
                    f"shut_down={str(x.should_shut_down).lower()})")
        if isinstance(x, rq.AlterPartitionRequest):
            items = "; ".join(f"{self.tp((i.topic_id, i.partition_id))} leader_epoch="
                              f"{i.leader_epoch} isr={_ids(i.new_isr)} partition_epoch="
                              f"{i.partition_epoch}" for i in x.partitions)
            return f"AlterPartition(b{x.broker_id} epoch={x.broker_epoch} {items})"
        if isinstance(x, rq.AlterPartitionResponse):
            items = "; ".join(
                f"{self.tp((i.topic_id, i.partition_id))} {i.error.name}"
                + (f" leader={i.leader_id} leader_epoch={i.leader_epoch} isr={_ids(i.isr)} "
                   f"partition_epoch={i.partition_epoch}" if i.error is ErrorCode.NONE else "")
                for i in x.partitions)
            return f"AlterPartitionResponse({x.error.name}{' ' + items if items else ''})"
        if x is None:
            return "none"
        if isinstance(x, ErrorCode | enum.Enum):
            return x.name
        if isinstance(x, bool):
            return str(x).lower()
        if isinstance(x, bytes) and len(x) == 16:
            return self.uuid(x)
        if isinstance(x, tuple):
            return "[" + ", ".join(self.fmt(v) for v in x) + "]"
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            first, rest = [], []
            for f in dataclasses.fields(x):
                v = getattr(x, f.name)
                if f.name == "error":
                    first.append(self.fmt(v))
                elif v is None or (f.default is not dataclasses.MISSING and v == f.default):
                    continue
                else:
                    rest.append(f"{f.name}={self.fmt(v)}")
            return f"{type(x).__name__}({' '.join(first + rest)})"
        return str(x)

    # ------------------------------------------------------------ expectations

    def cmd_expect(self, args: list[str]) -> None:
        if args == ["invariants"]:
            view = view_of(self.w)
            for inv in CATALOGUE:
                if inv.kind == STATE or (inv.kind == QUIESCENT and not view.pending):
                    for v in inv.check(view):
                        raise AssertionError(f"violated {v.invariant}: {v.detail}")
            self.emit("ok: invariants hold" + (" (pending: state invariants only)"
                                               if view.pending else ""))
            return
        query, _, want = " ".join(args).partition(" = ")
        got = self.query(query.split())
        assert got == want.strip(), f"expect {query}: want {want.strip()!r}, got {got!r}"
        self.emit(f"ok: {query} = {got}")

    def _partition(self, image: MetadataImage, tp: str) -> PartitionImage | None:
        t, p = tp_of(tp)
        topic = image.topic(t)
        return None if topic is None else topic.partitions.get(p)

    def query(self, q: list[str]) -> str:  # noqa: C901 -- a flat dispatch
        w = self.w
        c = w.controller
        name = q[0]
        fields = {"leader": "leader", "isr": "isr", "leader-epoch": "leader_epoch",
                  "partition-epoch": "partition_epoch", "replicas": "replicas",
                  "adding": "adding_replicas", "removing": "removing_replicas"}
        base = name.removeprefix("future-")
        if base in fields:
            p = self._partition(c.image if name.startswith("future-") else c.committed, q[1])
            if p is None:
                return "none"
            v = getattr(p, fields[base])
            return _ids(v) if isinstance(v, tuple) else str(v)
        if name == "membership":
            return c.membership(int(q[1])).value
        if name in ("fenced", "registered-epoch"):
            reg = c.committed.brokers.get(int(q[1]))
            if reg is None:
                return "unregistered"
            return str(reg.fenced).lower() if name == "fenced" else str(reg.epoch)
        if name == "state":
            return w.brokers[int(q[1])].state.value
        if name == "broker-epoch":
            return str(w.brokers[int(q[1])].broker_epoch)
        if name == "metadata-offset":
            return str(w.brokers[int(q[1])].metadata_offset)
        if name == "role":
            t, p = tp_of(q[2])
            rep = w.brokers[int(q[1])].replica(self._topic_id(t), p)
            return "none" if rep is None else (
                f"{rep.role.value} leader={rep.leader} leader_epoch={rep.leader_epoch}")
        if name == "last-response":
            return self.fmt(self.last_response.get(int(q[1])))
        if name == "last-answer":
            return self.fmt(self.last_answer)
        if name == "last-errors":
            return " ".join(self._errors(self.last_answer)) or "none"
        if name == "committed-offset":
            return str(w.hw)
        if name == "log-end":
            return str(len(w.log))
        if name == "active":
            return f"c{w.active}"
        if name == "waiting":
            return str(len(c._waiting))
        if name == "topics":
            return ",".join(sorted(t.name for t in c.committed.topics.values())) or "none"
        if name == "pending":
            return str(w.pending()).lower()
        if name == "now":
            return str(w.now)
        raise ValueError(f"unknown query {q!r}")

    def _errors(self, x: Any) -> list[str]:
        """``label:CODE`` for every per-item result in an answer (labels: the topic, with
        ``-partition`` when there is one)."""
        out: list[str] = []
        if isinstance(x, tuple):
            for v in x:
                out += self._errors(v)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            names = {f.name for f in dataclasses.fields(x)}
            label = getattr(x, "name", None) or getattr(x, "topic", None)
            if label is None and "topic_id" in names:
                label = self.uuid(x.topic_id)
            if "error" in names and label is not None:
                part = getattr(x, "partition_id", None)
                out.append(f"{label}{'' if part is None else f'-{part}'}:{x.error.name}")
            for f in dataclasses.fields(x):
                if isinstance(getattr(x, f.name), tuple):
                    out += self._errors(getattr(x, f.name))
        return out

    # ------------------------------------------------------------ show

    def cmd_show(self, args: list[str]) -> None:
        for line in getattr(self, f"show_{args[0]}")():
            self.emit(line)

    def show_partitions(self) -> list[str]:
        c = self.w.controller
        out = []
        for label, image in (("committed", c.committed), ("future", c.image)):
            if label == "future" and image is c.committed:
                continue
            for t in sorted(image.topics.values(), key=lambda t: t.name):
                for pid, p in sorted(t.partitions.items()):
                    if label == "future" and p == self._partition(c.committed,
                                                                  f"{t.name}-{pid}"):
                        continue
                    extra = (f" adding={_ids(p.adding_replicas)}" if p.adding_replicas
                             else "") + (f" removing={_ids(p.removing_replicas)}"
                                         if p.removing_replicas else "")
                    out.append(f"{label} {t.name}-{pid} replicas={_ids(p.replicas)} "
                               f"isr={_ids(p.isr)} leader={p.leader} leader_epoch="
                               f"{p.leader_epoch} partition_epoch={p.partition_epoch}{extra}")
        for t in sorted(c.committed.topics.values(), key=lambda t: t.name):
            if t.topic_id not in c.image.topics:
                out.append(f"future: {t.name} removed")
        return out or ["(no partitions)"]

    def show_brokers(self) -> list[str]:
        w = self.w
        out = []
        for b in sorted(w.brokers):
            core = w.brokers[b]
            lease = w.controller.leases.get(b)
            out.append(f"b{b} {core.state.value} epoch={core.broker_epoch} "
                       f"offset={core.metadata_offset} membership="
                       f"{w.controller.membership(b).value} lease_until={lease}")
        return out

    def show_log(self) -> list[str]:
        w = self.w
        return [f"@{i} {self.record(r)}{'' if i <= w.hw else ' (uncommitted)'}"
                for i, r in enumerate(w.log)] or ["(empty)"]

    def show_queues(self) -> list[str]:
        w = self.w
        out = []
        for b in sorted(w.brokers):
            if w.to_controller[b]:
                out.append(f"b{b} -> controller: "
                           + ", ".join(self.fmt(r) for r in w.to_controller[b]))
            if w.to_broker[b]:
                out.append(f"controller -> b{b}: "
                           + ", ".join(self.fmt(r) for _, r in w.to_broker[b]))
        return out or ["(empty)"]

    def show_controllers(self) -> list[str]:
        w = self.w
        return [f"c{i} {'active' if c.active else 'standby'} epoch={c.epoch} committed=@"
                f"{c.committed_offset} next=@{c.next_offset} waiting={len(c._waiting)}"
                for i, c in enumerate(w.controllers)]


def run_kraft_transcript(text: str) -> tuple[str, list[str], list[str]]:
    """As ``interpreter.run_transcript``, with the KRaft interpreter."""
    return run_transcript(text, KRaftInterpreter())
