"""An admin operation followed until the cluster shows it done (both campaigns' workloads),
and the overdue ones given up as *stuck*."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass
class Operation:
    step: int
    action: Any
    """The planned ``adapters.chaos.plan.Action``."""
    issued: float
    deadline: float
    done_at: float | None = None
    outcome: str = ""

    @property
    def pending(self) -> bool:
        return self.done_at is None

    def to_json(self) -> dict[str, object]:
        return {"step": self.step, "action": self.action.describe(),
                "kind": self.action.kind.value,
                "seconds": None if self.done_at is None else round(self.done_at - self.issued, 3),
                "outcome": self.outcome}


Op = TypeVar("Op", bound=Operation)


def overdue(pending: Iterable[Op], now: float | None = None) -> list[Op]:
    """The operations of ``pending`` past their deadline at ``now`` (default: now)."""
    now = time.monotonic() if now is None else now
    return [op for op in pending if now >= op.deadline]


def give_up(pending: list[Op], ops: Iterable[Op], timeout_s: float
            ) -> list[dict[str, object]]:
    """The report's *stuck* rows for ``ops``, each taken out of ``pending`` (no longer
    followed)."""
    out: list[dict[str, object]] = []
    for op in ops:
        out.append({"step": op.step, "action": op.action.describe(),
                    "kind": op.action.kind.value,
                    "reason": f"not complete after {timeout_s:g} s"})
        if op in pending:
            pending.remove(op)
    return out


__all__ = ["Operation", "give_up", "overdue"]
