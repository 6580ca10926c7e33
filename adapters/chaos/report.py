"""The campaign's figures: faults by kind, violations, losses, stuck operations, recovery times,
as a ``Report`` that prints as rich tables and gives the ``--json`` report (``to_json``)."""

from __future__ import annotations

import math
import os
import platform
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile (``q`` in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def figures(values: list[float]) -> dict[str, float | int | None]:
    """p50, p99, max (seconds, to the millisecond; None when empty) and count of
    ``values``: the report's recovery figures."""
    out: dict[str, float | int | None] = {
        "p50": percentile(values, 50), "p99": percentile(values, 99),
        "max": max(values) if values else None, "count": len(values)}
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


@dataclass
class FaultRecord:
    step: int
    kind: str
    target: str
    action: str
    action_outcome: str
    recovery_s: float | None = None
    settle_s: float | None = None
    notes: list[str] = field(default_factory=list)
    violations: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "target": self.target,
                "action": self.action, "action_outcome": self.action_outcome,
                "recovery_seconds": None if self.recovery_s is None else round(self.recovery_s, 3),
                "settle_seconds": None if self.settle_s is None else round(self.settle_s, 3),
                "notes": self.notes, "violations": self.violations}


@dataclass
class Report:
    seed: int
    brokers: int
    faults_planned: int
    session_timeout_ms: int
    zookeeper: str = ""
    embedded_ensemble: bool = True
    records: list[FaultRecord] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    lost: list[dict[str, Any]] = field(default_factory=list)
    stuck: list[dict[str, Any]] = field(default_factory=list)
    actions_by_kind: dict[str, int] = field(default_factory=dict)
    refused_actions: list[dict[str, Any]] = field(default_factory=list)
    operations: list[dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0
    aborted: str | None = None
    started_at: str = ""

    @property
    def faults_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(r.kind for r in self.records).items()))

    @property
    def recoveries(self) -> list[float]:
        return [r.recovery_s for r in self.records if r.recovery_s is not None]

    def recovery_summary(self) -> dict[str, float | int | None]:
        return figures(self.recoveries)

    @property
    def ok(self) -> bool:
        return not (self.violations or self.lost or self.stuck or self.aborted)

    def to_json(self) -> dict[str, Any]:
        try:
            load = os.getloadavg()
        except OSError:
            load = (0.0, 0.0, 0.0)
        return {
            "ok": self.ok,
            "seed": self.seed,
            "brokers": self.brokers,
            "faults": len(self.records),
            "faults_planned": self.faults_planned,
            "faults_by_kind": self.faults_by_kind,
            "violations": self.violations,
            "lost": self.lost,
            "stuck": self.stuck,
            "recovery_seconds": self.recovery_summary(),
            "session_timeout_ms": self.session_timeout_ms,
            "zookeeper": self.zookeeper,
            "embedded_ensemble": self.embedded_ensemble,
            "actions_by_kind": dict(sorted(self.actions_by_kind.items())),
            "refused_actions": self.refused_actions,
            "operations": self.operations,
            "duration_seconds": round(self.duration_s, 1),
            "aborted": self.aborted,
            "started_at": self.started_at,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "python": platform.python_version(),
                        "load_average_at_end": [round(x, 2) for x in load]},
            "steps": [r.to_json() for r in self.records],
        }

    def print(self, console: Console) -> None:
        kinds = Table(title=f"{len(self.records)} fault(s), seed {self.seed}")
        kinds.add_column("fault kind")
        kinds.add_column("count", justify="right")
        kinds.add_column("recovery p50 s", justify="right")
        kinds.add_column("max s", justify="right")
        for kind, count in self.faults_by_kind.items():
            rec = [r.recovery_s for r in self.records if r.kind == kind and r.recovery_s is not None]
            p50 = percentile(rec, 50)
            kinds.add_row(kind, str(count), "-" if p50 is None else f"{p50:.2f}",
                          f"{max(rec):.2f}" if rec else "-")
        console.print(kinds)
        summary = self.recovery_summary()

        def fmt(v: object) -> str:
            return "-" if v is None else f"{v:.2f}"

        console.print(f"recovery (every partition with a live in-sync replica led again): "
                      f"p50 {fmt(summary['p50'])} s, p99 {fmt(summary['p99'])} s, "
                      f"max {fmt(summary['max'])} s over {summary['count']} fault(s)")
        console.print("admin actions: " + ", ".join(
            f"{k} {v}" for k, v in sorted(self.actions_by_kind.items()))
            + f"; refused {len(self.refused_actions)}")
        for title, rows in (("violations", self.violations), ("lost", self.lost),
                            ("stuck", self.stuck)):
            style = "red" if rows else "green"
            console.print(f"[{style}]{title}: {len(rows)}[/]")
            for row in rows[:20]:
                console.print(f"  [{style}]{_one_line(row)}[/]", highlight=False)
            if len(rows) > 20:
                console.print(f"  ... and {len(rows) - 20} more (see --json)")
        if self.aborted:
            console.print(f"[red]campaign aborted: {self.aborted}[/]")
        verdict = "[bold green]PASS[/]" if self.ok else "[bold red]FAIL[/]"
        console.print(f"{verdict} in {self.duration_s:.0f} s")


def _one_line(row: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in row.items())


__all__ = ["FaultRecord", "Report", "figures", "percentile"]
