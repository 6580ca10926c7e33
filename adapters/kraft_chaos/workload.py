"""The KRaft campaign's admin work, over Kafka's protocol: each ``Action`` (the ZooKeeper
campaign's kinds: create, add partitions, reassign, preferred election, delete) sent to a
broker, which forwards it to the active controller, or to the active controller itself.

A request is retried, bounded (``MAX_TRIES`` within ``BUDGET_S``), on another node when the
one asked does not answer or answers NOT_CONTROLLER / REQUEST_TIMED_OUT. Each action ends
*acknowledged* (error NONE -- or, after an attempt whose outcome is unknown, the error that
says it was done: TOPIC_ALREADY_EXISTS for a create, UNKNOWN_TOPIC_OR_PARTITION for a
delete), *refused* (another error code, recorded) or *unknown* (no answer within the
budget). Acknowledged work is then followed in the committed image until done
(``progress``); not done by its deadline, it is *stuck*.

What the cluster must keep (``lost``): every topic acknowledged created and not deleted, with
the topic id the controller gave it and at least the partitions acknowledged.

``Background`` issues more of it from a thread while the faults happen (``resume``; it is
quiesced for the settle and the audit): topics ``bg-N`` created and deleted, preferred
elections.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.campaign import operations
from adapters.campaign.operations import Operation as _Operation
from adapters.chaos.plan import Action, ActionKind
from adapters.kraft_node.wire_client import WireClient, WireError
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import uuid_to_base64

MAX_TRIES = 8
BUDGET_S = 45.0
BACKOFF_S = 0.25
MAX_BACKOFF_S = 4.0
CALL_TIMEOUT_S = 20.0
PREFERRED = 0
RETRIABLE = frozenset({ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT})

Targets = Callable[[], list[tuple[str, int]]]
"""Where admin requests may go now: (name, port) of running, unpaused brokers and the active
controller, in order of preference."""


@dataclass
class Operation(_Operation):
    want: int = 0
    """add-partitions: the partition count acknowledged."""


@dataclass
class Expected:
    partitions: int
    topic_id: str | None  # None: acknowledged after a retry, the id not seen
    acked_at: float = 0.0
    """When the create (or the last add-partitions) was acknowledged (``time.monotonic``)."""


@dataclass
class Workload:
    targets: Targets
    op_timeout_s: float
    expected: dict[str, Expected] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)
    """Topics whose create or delete has an unknown outcome: not checked for loss."""
    deleting: set[str] = field(default_factory=set)
    """Topics whose delete is on its way: not checked for loss meanwhile."""
    pending: list[Operation] = field(default_factory=list)
    done: list[Operation] = field(default_factory=list)
    refused: list[dict[str, object]] = field(default_factory=list)
    actions_by_kind: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------------ sending

    def call(self, request: Any, done_if: frozenset[ErrorCode] = frozenset()
             ) -> tuple[Any | None, str]:
        """The answer (None: unknown) and a note of the tries. An answer whose errors are all
        retriable is tried again elsewhere; after an attempt with no answer, an error in
        ``done_if`` is read as done (the earlier attempt was carried out)."""
        deadline = time.monotonic() + BUDGET_S
        unknown = False
        notes: list[str] = []
        for attempt in range(MAX_TRIES):
            if attempt:  # a new controller may take a few seconds to be elected and known
                time.sleep(min(MAX_BACKOFF_S, BACKOFF_S * 2 ** (attempt - 1),
                               max(0.0, deadline - time.monotonic())))
            targets = self.targets()
            if not targets:
                notes.append("no node to ask")
                continue
            name, port = targets[attempt % len(targets)]
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                with WireClient("127.0.0.1", port, timeout=min(CALL_TIMEOUT_S, left)) as c:
                    answer = c.call_value(request)
            except (WireError, OSError) as exc:
                unknown = True
                notes.append(f"{name}: {exc}")
                continue
            errors = errors_of(answer)
            if errors and errors <= RETRIABLE:
                unknown = unknown or ErrorCode.REQUEST_TIMED_OUT in errors
                notes.append(f"{name}: {'/'.join(sorted(e.name for e in errors))}")
                continue
            if unknown and errors and errors <= done_if:
                return _Done(answer), "; ".join(notes)
            return answer, "; ".join(notes)
        return None, "; ".join(notes)

    # ------------------------------------------------------------------ actions

    def run(self, step: int, action: Action) -> str:
        """Send the action; the outcome (acknowledged / refused (ERROR) / unknown)."""
        with self.lock:
            k = action.kind.value
            self.actions_by_kind[k] = self.actions_by_kind.get(k, 0) + 1
        try:
            outcome = self._send(step, action)
        except ValueError as exc:  # nothing sent: the planner's topic is not there
            outcome = f"refused ({exc})"
        with self.lock:
            head = outcome.split(" ", 1)[0]
            self.outcomes[head] = self.outcomes.get(head, 0) + 1
            if not outcome.startswith("acknowledged"):
                self.refused.append({"step": step, "action": action.describe(),
                                     "outcome": outcome})
        return outcome

    def _send(self, step: int, a: Action) -> str:
        k = a.kind
        if k is ActionKind.CREATE:
            assert a.topic is not None
            topic = rq.CreatableTopic(a.topic, assignments=tuple(enumerate(a.assignment)))
            answer, notes = self.call(rq.CreateTopicsRequest((topic,), ()),
                                      frozenset({ErrorCode.TOPIC_ALREADY_EXISTS}))
            return self._created(step, a, answer, notes)
        if k is ActionKind.DELETE:
            assert a.topic is not None
            with self.lock:
                self.deleting.add(a.topic)
            answer, notes = self.call(rq.DeleteTopicsRequest(names=(a.topic,)),
                                      frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}))
            return self._deleted(step, a, answer, notes)
        if k is ActionKind.ADD_PARTITIONS:
            assert a.topic is not None
            with self.lock:
                have = self.expected.get(a.topic)
            if have is None:
                raise ValueError(f"topic {a.topic} is not known to exist")
            total = have.partitions + len(a.assignment)
            answer, notes = self.call(rq.CreatePartitionsRequest(
                (rq.CreatePartitionsTopic(a.topic, total, a.assignment),)),
                frozenset({ErrorCode.INVALID_PARTITIONS}))
            outcome = self._outcome(answer, notes)
            if outcome == "acknowledged":  # not "after a retry": that count is not certain
                with self.lock:
                    if a.topic in self.expected:
                        self.expected[a.topic].partitions = max(
                            self.expected[a.topic].partitions, total)
                        self.expected[a.topic].acked_at = time.monotonic()
                self._follow(step, a, total)
            return outcome
        if k is ActionKind.REASSIGN:
            assert a.topic is not None and a.partition is not None
            answer, notes = self.call(rq.AlterPartitionReassignmentsRequest(
                (rq.ReassignablePartition(a.topic, a.partition, a.assignment[0]),)))
            outcome = self._outcome(answer, notes)
            if outcome == "acknowledged":
                self._follow(step, a)
            return outcome
        with self.lock:
            parts = tuple((t, i) for t in a.topics if t in self.expected
                          for i in range(self.expected[t].partitions))
        if not parts:
            raise ValueError("none of the topics is known to exist")
        answer, notes = self.call(rq.ElectLeadersRequest(PREFERRED, parts))
        return self._outcome(answer, notes, ok=frozenset({
            ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED,
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE}))

    def _outcome(self, answer: Any, notes: str,
                 ok: frozenset[ErrorCode] = frozenset({ErrorCode.NONE})) -> str:
        if answer is None:
            return f"unknown ({notes or 'no answer'})"[:300]
        if isinstance(answer, _Done):
            return "acknowledged (after a retry)"
        errors = errors_of(answer)
        bad = sorted(e.name for e in errors - ok)
        return f"refused ({', '.join(bad)})" if bad else "acknowledged"

    def _created(self, step: int, a: Action, answer: Any, notes: str) -> str:
        assert a.topic is not None
        outcome = self._outcome(answer, notes)
        with self.lock:
            if outcome.startswith("acknowledged"):
                topic_id = None
                if not isinstance(answer, _Done):
                    topic_id = uuid_to_base64(answer.topics[0].topic_id)
                self.expected[a.topic] = Expected(len(a.assignment), topic_id,
                                                  time.monotonic())
                self.uncertain.discard(a.topic)
            elif outcome.startswith("unknown"):
                self.uncertain.add(a.topic)
        if outcome.startswith("acknowledged"):
            self._follow(step, a)
        return outcome

    def _deleted(self, step: int, a: Action, answer: Any, notes: str) -> str:
        assert a.topic is not None
        outcome = self._outcome(answer, notes)
        now = time.monotonic()
        with self.lock:
            self.deleting.discard(a.topic)
            if not outcome.startswith("refused"):
                self.expected.pop(a.topic, None)
                for op in self.pending:  # what was asked of the topic before: moot now
                    if op.action.topic == a.topic and op.pending:
                        op.done_at, op.outcome = now, "superseded by its deletion"
            if outcome.startswith("unknown"):
                self.uncertain.add(a.topic)
        if outcome.startswith("acknowledged"):
            self._follow(step, a)
        return outcome

    def _follow(self, step: int, a: Action, want: int = 0) -> None:
        now = time.monotonic()
        with self.lock:
            self.pending.append(Operation(step, a, now, now + self.op_timeout_s, want=want))

    # ------------------------------------------------------------------ following

    def progress(self, topics: dict[str, Any]) -> None:
        """Mark operations done as the committed image (``topics_view``) shows them."""
        now = time.monotonic()
        with self.lock:
            for op in self.pending:
                if not op.pending:
                    continue
                finished = _finished(op, topics)
                if finished is not None:
                    op.done_at, op.outcome = now, finished
            self.done += [op for op in self.pending if not op.pending]
            self.pending = [op for op in self.pending if op.pending]

    def overdue(self, now: float | None = None) -> list[Operation]:
        with self.lock:
            return operations.overdue(self.pending, now)

    def give_up(self, ops: list[Operation]) -> list[dict[str, object]]:
        with self.lock:
            return operations.give_up(self.pending, ops, self.op_timeout_s)

    def lost(self, topics: dict[str, Any], read_at: float | None = None) -> list[str]:
        """What ``topics`` (the committed image, read from ``read_at`` on) lost of what was
        acknowledged before ``read_at``."""
        out = []
        with self.lock:
            expected = dict(self.expected)
            uncertain = self.uncertain | self.deleting
        for name, e in sorted(expected.items()):
            if name in uncertain or (read_at is not None and e.acked_at >= read_at):
                continue
            t = topics.get(name)
            if t is None:
                out.append(f"topic {name} (acknowledged created, never deleted) is gone from "
                           "the committed image")
            elif e.topic_id is not None and t["topic_id"] != e.topic_id:
                out.append(f"topic {name} has topic id {t['topic_id']}, it was created as "
                           f"{e.topic_id}")
            elif len(t["partitions"]) < e.partitions:
                out.append(f"topic {name} has {len(t['partitions'])} partition(s), "
                           f"{e.partitions} were acknowledged")
        return out

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"actions_by_kind": dict(sorted(self.actions_by_kind.items())),
                    "action_outcomes": dict(sorted(self.outcomes.items())),
                    "refused": list(self.refused),
                    "operations": [op.to_json() for op in self.done]}


class _Done:
    """An answer read as done after an attempt whose outcome is unknown."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer


def errors_of(answer: Any) -> set[ErrorCode]:
    """Every error code in an admin answer (its top level and its items)."""
    out = set()
    top = getattr(answer, "error", None)
    if isinstance(top, ErrorCode) and top is not ErrorCode.NONE:
        out.add(top)
    for name in ("topics", "results"):
        for item in getattr(answer, name, ()) or ():
            e = getattr(item, "error", None)
            if isinstance(e, ErrorCode):
                out.add(e)
    if not out and isinstance(top, ErrorCode):
        out.add(top)
    return out


def _finished(op: Operation, topics: dict[str, Any]) -> str | None:
    a = op.action
    t = topics.get(a.topic) if a.topic is not None else None
    if a.kind is ActionKind.CREATE:
        return "created" if t is not None and len(t["partitions"]) >= len(a.assignment) \
            else None
    if a.kind is ActionKind.DELETE:
        return "deleted" if t is None else None
    if t is None:
        return "topic deleted"
    if a.kind is ActionKind.ADD_PARTITIONS:
        return "added" if len(t["partitions"]) >= op.want else None
    if a.kind is ActionKind.REASSIGN:
        p = t["partitions"].get(str(a.partition))
        if p is None:
            return "partition gone"
        target = list(a.assignment[0])
        if sorted(p["replicas"]) == sorted(target):
            return "completed" if sorted(p["isr"]) == sorted(target) else None
        return None
    return "completed"


class Background:
    """Admin work from a thread while faults happen: at most ``max_topics`` topics ``bg-N``
    (1-2 partitions, replication factor 2), created, deleted, elected."""

    def __init__(self, workload: Workload, seed: int, brokers: int, *, pace_s: float = 1.5,
                 max_topics: int = 3) -> None:
        self.workload = workload
        self.rng = random.Random(seed)
        self.ids = list(range(1, brokers + 1))
        self.pace_s = pace_s
        self.max_topics = max_topics
        self.live: list[str] = []
        self.made = 0
        self.stop_event = threading.Event()
        self.allowed = threading.Event()
        self.busy = threading.Lock()
        self.thread: threading.Thread | None = None
        self.sent = 0

    def start(self) -> None:
        self.thread = threading.Thread(target=self._loop, name="kraft-chaos-bg", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 60.0) -> None:
        self.stop_event.set()
        self.allowed.set()
        if self.thread is not None:
            self.thread.join(timeout)

    def resume(self) -> None:
        """Send again (while a fault is on)."""
        self.allowed.set()

    def quiesce(self, timeout: float = 2 * BUDGET_S) -> bool:
        """Stop sending and wait (bounded) for the action on its way: the audit compares
        readings taken one after the other, which writes in between would set apart."""
        self.allowed.clear()
        if self.busy.acquire(timeout=timeout):
            self.busy.release()
            return True
        return False

    def _loop(self) -> None:
        while not self.stop_event.wait(self.pace_s):
            if not self.allowed.wait(self.pace_s):
                continue
            with self.busy:
                if self.allowed.is_set() and not self.stop_event.is_set():
                    self.one()

    def one(self) -> str:
        rng = self.rng
        if self.live and (len(self.live) >= self.max_topics or rng.random() < 0.35):
            topic = self.live.pop(rng.randrange(len(self.live)))
            action = Action(ActionKind.DELETE, topic)
        elif self.live and rng.random() < 0.3:
            action = Action(ActionKind.ELECT, topics=(rng.choice(self.live),))
        else:
            self.made += 1
            topic = f"bg-{self.made}"
            rf = min(2, len(self.ids))
            assignment = tuple(tuple(rng.sample(self.ids, rf))
                               for _ in range(rng.randint(1, 2)))
            action = Action(ActionKind.CREATE, topic, assignment)
            self.live.append(topic)
        self.sent += 1
        return self.workload.run(0, action)


__all__ = ["Background", "Expected", "Operation", "Workload", "errors_of"]
