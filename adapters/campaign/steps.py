"""``StepLog``: the part of a campaign's runner both campaigns share -- the narration, the
step loop under the time limit, the drain of the operations still pending, and a step's rows
in the report (stuck, violations, losses, the record) with its progress line.

A runner mixes it in and provides ``settings`` (``CampaignSettings``), ``console``, ``report``,
``workload`` (``pending`` operations with a ``deadline``; ``give_up``), ``t0``, ``on_fault``,
``step(step)``, ``settle(deadline)`` and ``progress(step, record, view)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from rich.console import Console
from rich.markup import escape

from adapters.campaign.settings import CampaignSettings


class StepLog:
    settings: CampaignSettings
    console: Console
    report: Any
    workload: Any
    t0: float
    on_fault: Callable[[Any], None] | None

    PROBLEMS_SHOWN: ClassVar[int | None] = None
    """How many of the settle's problems a stuck row names (None: all)."""

    def step(self, step: Any) -> Any:
        raise NotImplementedError

    def settle(self, deadline: float) -> Any:
        raise NotImplementedError

    def progress(self, step: Any, record: Any, view: Any) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ narration

    def say(self, text: str) -> None:
        self.console.print(f"[dim]{time.monotonic() - self.t0:7.1f}s[/] {text}", highlight=False)

    def progress_line(self, step: Any, record: Any, widths: tuple[int, int], tail: str
                      ) -> None:
        """The step's line: the fault, its target, the recovery and the settle, the audit's
        verdict, the action and its outcome, then ``tail`` (the cluster in a few words)."""
        n = self.settings.faults
        rec = "-" if record.recovery_s is None else f"{record.recovery_s:5.2f}s"
        audit = "[green]audit ok[/]" if record.violations == 0 else \
            f"[bold red]{record.violations} violation(s)[/]"
        notes = f" [yellow]{escape('; '.join(record.notes))}[/]" if record.notes else ""
        fault_w, target_w = widths
        self.say(f"[bold][{step.index:>{len(str(n))}}/{n}][/] "
                 f"[cyan]{escape(step.fault.describe()):<{fault_w}}[/] "
                 f"{escape(record.target):<{target_w}} "
                 f"recovered {rec}  settled {record.settle_s or 0:5.1f}s  {audit}  "
                 f"| {escape(record.action)} -> {escape(record.action_outcome)} "
                 f"| {tail}{notes}")

    # ------------------------------------------------------------------ the loop

    def run_steps(self, plan: Iterable[Any]) -> None:
        """Every step of ``plan`` until the campaign's time limit (``report.aborted`` says
        so when it is reached)."""
        s = self.settings
        deadline = self.t0 + s.limit_s
        for step in plan:
            if time.monotonic() >= deadline:
                self.report.aborted = (f"time limit of {s.limit_s:.0f} s reached after "
                                       f"{len(self.report.records)} fault(s)")
                break
            self.step(step)

    def drain(self) -> None:
        """After the last step: wait for the operations still pending, up to their deadline;
        those still pending then are stuck."""
        w = self.workload
        assert w is not None
        if not w.pending:
            return
        self.settle(max(op.deadline for op in w.pending) + 1.0)
        if w.pending:
            self.report.stuck.extend(w.give_up(list(w.pending)))

    # ------------------------------------------------------------------ a step's rows

    @staticmethod
    def where(step: Any) -> dict[str, Any]:
        return {"step": step.index, "fault": step.fault.describe()}

    def injection_failed(self, step: Any, record: Any, exc: BaseException) -> None:
        record.notes.append(f"injection failed: {exc}")
        self.report.stuck.append({**self.where(step),
                                  "reason": f"fault could not be injected or undone: {exc}"})

    def timed_settle(self, record: Any) -> Any:
        """``settle`` for the settings' settle time, its duration in ``record``; what it
        returned."""
        t_settle = time.monotonic()
        got = self.settle(t_settle + self.settings.settle_s)
        record.settle_s = time.monotonic() - t_settle
        return got

    def file_unsettled(self, step: Any, problems: list[str]) -> None:
        if problems:
            self.report.stuck.append({**self.where(step),
                                      "reason": "cluster not settled after "
                                                f"{self.settings.settle_s:g} s: "
                                                + "; ".join(problems[:self.PROBLEMS_SHOWN])})

    def file_violations(self, step: Any, record: Any, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.report.violations.append({**self.where(step), **row})
        record.violations = len(rows)

    def file_lost(self, step: Any, lost: Iterable[str]) -> None:
        for what in lost:
            self.report.lost.append({**self.where(step), "what": what})

    def file_record(self, step: Any, record: Any, view: Any) -> None:
        """The step's record in the report, its progress line (``progress``, with what the
        settle saw), ``on_fault`` told."""
        self.report.records.append(record)
        self.progress(step, record, view)
        if self.on_fault is not None:
            self.on_fault(record)


__all__ = ["StepLog"]
