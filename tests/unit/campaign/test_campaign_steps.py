"""The campaigns' shared step bookkeeping (``adapters.campaign``): the time bounds, the
recovery clock, the operations given up, the step loop under the time limit, the drain, a
step's rows in the report and its progress line."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from adapters.campaign import operations
from adapters.campaign.operations import Operation
from adapters.campaign.settings import CampaignSettings
from adapters.campaign.steps import StepLog
from adapters.campaign.timing import hold_pause, time_recovery
from adapters.chaos.plan import Action, ActionKind, Fault, FaultKind, Step
from adapters.chaos.report import FaultRecord, Report


def Times(**given: Any) -> CampaignSettings:  # noqa: N802 -- a settings maker
    return CampaignSettings(**{"directory": Path("/nonexistent"), "faults": 10, **given})


def test_the_bounds_follow_the_session_unless_given() -> None:
    t = Times()
    assert (t.session_s, t.settle_s, t.op_s, t.limit_s) == (6.0, 72.0, 90.0, 1200.0)
    t = Times(faults=2, session_timeout_ms=10_000)
    assert (t.settle_s, t.op_s, t.limit_s) == (120.0, 150.0, 600.0)
    t = Times(settle_timeout_s=5.0, op_timeout_s=7.0, time_limit_s=9.0)
    assert (t.settle_s, t.op_s, t.limit_s) == (5.0, 7.0, 9.0)


def test_the_recovery_clock() -> None:
    answers = iter([False, False, True])
    calls: list[int] = []

    def recovered() -> bool:
        calls.append(1)
        return next(answers)

    got = time_recovery(time.monotonic(), 60.0, recovered, poll_s=0.0)
    assert got is not None and 0.0 <= got < 60.0 and len(calls) == 3
    # the bound passed: the measure if recovered, even though ``until`` never held
    past = time.monotonic() - 100.0
    got = time_recovery(past, 10.0, lambda: True, until=lambda: False, poll_s=0.0)
    assert got is not None and got >= 100.0
    assert time_recovery(past, 10.0, lambda: False, poll_s=0.0) is None


def test_a_pause_is_held_until_it_did_what_it_must() -> None:
    record = FaultRecord(1, "pause-broker", "broker 1", "create t", "written")
    waits: list[bool] = []

    def wait_recovery(t0: float, until: Any) -> float:
        waits.append(until())
        return 4.5

    hold_pause(record, time.monotonic() - 7.0, wait_recovery, lambda: True, RuntimeError("x"))
    assert record.recovery_s == 4.5 and waits == [True]
    assert len(record.notes) == 1 and record.notes[0].startswith("paused 7.")
    record.notes.clear()
    with pytest.raises(RuntimeError, match="not expired"):
        hold_pause(record, time.monotonic(), wait_recovery, lambda: False,
                   RuntimeError("not expired"))
    assert record.notes == []


def _op(step: int, deadline: float) -> Operation:
    return Operation(step, Action(ActionKind.DELETE, f"t{step}"), 0.0, deadline)


def test_overdue_operations_are_given_up_as_stuck() -> None:
    a, b = _op(1, 5.0), _op(2, 50.0)
    pending = [a, b]
    assert operations.overdue(pending, now=10.0) == [a]
    assert operations.overdue(pending, now=1.0) == []
    rows = operations.give_up(pending, [a], 90.0)
    assert rows == [{"step": 1, "action": "delete t1", "kind": "delete",
                     "reason": "not complete after 90 s"}]
    assert pending == [b]
    assert operations.give_up(pending, [a], 90.0)[0]["step"] == 1  # not followed: no error
    b.done_at, b.outcome = 2.5, "deleted"
    assert b.to_json() == {"step": 2, "action": "delete t2", "kind": "delete",
                           "seconds": 2.5, "outcome": "deleted"}


@dataclass
class Work:
    pending: list[Operation] = field(default_factory=list)

    def give_up(self, ops: list[Operation]) -> list[dict[str, object]]:
        return operations.give_up(self.pending, ops, 90.0)


@dataclass
class Runner(StepLog):
    settings: CampaignSettings
    console: Console = field(default_factory=lambda: Console(record=True, width=300))
    report: Report = field(default_factory=lambda: Report(1, 3, 10, 6000))
    workload: Work = field(default_factory=Work)
    t0: float = field(default_factory=time.monotonic)
    on_fault: Any = None
    ran: list[int] = field(default_factory=list)
    settles: list[float] = field(default_factory=list)

    def step(self, step: Step) -> None:
        self.ran.append(step.index)

    def settle(self, deadline: float) -> tuple[str, list[str]]:
        self.settles.append(deadline)
        return "view", ["broker 2 is fenced", "t-0 has no leader"]

    def progress(self, step: Step, record: FaultRecord, view: str) -> None:
        self.progress_line(step, record, (20, 10), f"cluster {view}")


def _step(i: int) -> Step:
    return Step(i, Action(ActionKind.CREATE, "t", ((1, 2),)), Fault(FaultKind.KILL_BROKER, 2))


def test_the_time_limit_stops_the_loop() -> None:
    r = Runner(Times(time_limit_s=100.0))
    r.run_steps([_step(1), _step(2)])
    assert r.ran == [1, 2] and r.report.aborted is None
    r = Runner(Times(time_limit_s=100.0), t0=time.monotonic() - 101.0)
    r.run_steps([_step(1)])
    assert r.ran == [] and r.report.aborted == "time limit of 100 s reached after 0 fault(s)"


def test_the_drain_waits_for_the_last_deadline_then_gives_up() -> None:
    r = Runner(Times())
    r.drain()
    assert r.settles == []  # nothing pending: no wait
    r.workload.pending = [_op(1, 5.0), _op(2, 7.0)]
    r.drain()
    assert r.settles == [8.0]
    assert [row["step"] for row in r.report.stuck] == [1, 2] and r.workload.pending == []


def test_a_steps_rows_and_its_progress_line() -> None:
    seen: list[FaultRecord] = []
    r = Runner(Times(settle_timeout_s=30.0), on_fault=seen.append)
    step = _step(3)
    record = FaultRecord(3, "kill-broker", "broker 2", "create t", "written", recovery_s=1.5)
    view, problems = r.timed_settle(record)
    assert view == "view" and record.settle_s is not None and len(r.settles) == 1
    r.file_unsettled(step, problems)
    r.file_violations(step, record, [{"invariant": "x", "detail": "y"}])
    r.file_lost(step, ["topic t is gone"])
    r.injection_failed(step, record, RuntimeError("no controller"))
    r.file_record(step, record, view)
    at = {"step": 3, "fault": "kill-broker broker 2"}
    assert r.report.stuck == [
        {**at, "reason": "cluster not settled after 30 s: broker 2 is fenced; t-0 has no leader"},
        {**at, "reason": "fault could not be injected or undone: no controller"}]
    assert r.report.violations == [{**at, "invariant": "x", "detail": "y"}]
    assert record.violations == 1
    assert r.report.lost == [{**at, "what": "topic t is gone"}]
    assert r.report.records == [record] and seen == [record]
    line = r.console.export_text()
    for part in ("[ 3/10]", "kill-broker broker 2", "recovered  1.50s", "1 violation(s)",
                 "| create t -> written | cluster view", "injection failed: no controller"):
        assert part in line, (part, line)


def test_only_the_first_problems_are_named_when_bounded() -> None:
    class Bounded(Runner):
        PROBLEMS_SHOWN = 1

    r = Bounded(Times(settle_timeout_s=30.0))
    r.file_unsettled(_step(1), ["a", "b"])
    r.file_unsettled(_step(2), [])
    assert [row["reason"] for row in r.report.stuck] == ["cluster not settled after 30 s: a"]
