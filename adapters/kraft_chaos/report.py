"""The KRaft campaign's figures: the ZooKeeper campaign's ``Report`` (the same JSON keys) plus
``mode``, ``lost_committed_records``, recovery by fault kind, ``recovery_over_target`` (faults
whose recovery took longer than the broker session timeout plus 2 s, or never came), the
fault kinds left out and why, and the admin actions' outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from adapters.chaos.report import Report, figures

TARGET_MARGIN_S = 2.0


@dataclass
class KRaftReport(Report):
    controllers: int = 3
    lost_committed_records: list[dict[str, Any]] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    """Fault kind -> why it is not in the plan."""
    action_outcomes: dict[str, int] = field(default_factory=dict)
    background_actions: int = 0
    ledger: dict[str, Any] = field(default_factory=dict)

    @property
    def target_s(self) -> float:
        return self.session_timeout_ms / 1000.0 + TARGET_MARGIN_S

    def over_target(self) -> list[dict[str, Any]]:
        return [{"step": r.step, "kind": r.kind, "target": r.target,
                 "recovery_seconds": None if r.recovery_s is None else round(r.recovery_s, 3)}
                for r in self.records if r.recovery_s is None or r.recovery_s > self.target_s]

    def recovery_by_kind(self) -> dict[str, dict[str, float | int | None]]:
        return {kind: figures([r.recovery_s for r in self.records
                               if r.kind == kind and r.recovery_s is not None])
                for kind in self.faults_by_kind}

    @property
    def ok(self) -> bool:
        return super().ok and not self.lost_committed_records and not self.over_target()

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["ok"] = self.ok
        out.update({
            "mode": "kraft",
            "controllers": self.controllers,
            "zookeeper": None,
            "embedded_ensemble": False,
            "lost_committed_records": self.lost_committed_records,
            "recovery_seconds_by_kind": self.recovery_by_kind(),
            "recovery_target_seconds": self.target_s,
            "recovery_over_target": self.over_target(),
            "left_out": self.left_out,
            "action_outcomes": dict(sorted(self.action_outcomes.items())),
            "background_actions": self.background_actions,
            "ledger": self.ledger,
        })
        return out

    def print(self, console: Console) -> None:
        over = self.over_target()
        style = "red" if over else "green"
        console.print(f"[{style}]recovery over the target ({self.target_s:g} s): "
                      f"{len(over)}[/]")
        for row in over[:20]:
            console.print(f"  [{style}]step {row['step']} {row['kind']} {row['target']}: "
                          f"{row['recovery_seconds']}[/]", highlight=False)
        style = "red" if self.lost_committed_records else "green"
        console.print(f"[{style}]lost committed records: {len(self.lost_committed_records)}[/]")
        for row in self.lost_committed_records[:20]:
            console.print(f"  [{style}]{row}[/]", highlight=False)
        if self.ledger:
            console.print(f"ledger: {self.ledger}")
        for kind, why in self.left_out.items():
            console.print(f"[yellow]left out: {kind}: {why}[/]")
        if self.action_outcomes:
            console.print("admin outcomes: " + ", ".join(
                f"{k} {v}" for k, v in sorted(self.action_outcomes.items()))
                + f" ({self.background_actions} from the background thread)")
        super().print(console)


__all__ = ["KRaftReport"]
