"""``CampaignSettings``: what both campaigns are given -- the cluster's size, the plan's length
and seed, the broker session timeout, the bounds the command line may set -- and the bounds
derived from them. Each campaign's settings add their own fields to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class CampaignSettings:
    directory: Path
    brokers: int = 3
    faults: int = 20
    seed: int = 1
    session_timeout_ms: int = 6000
    settle_timeout_s: float | None = None
    op_timeout_s: float | None = None
    time_limit_s: float | None = None

    @property
    def session_s(self) -> float:
        return self.session_timeout_ms / 1000.0

    @property
    def settle_s(self) -> float:
        """How long a step waits for the cluster to settle."""
        return self.settle_timeout_s or max(60.0, 12 * self.session_s)

    @property
    def op_s(self) -> float:
        """How long an admin operation may take before it is stuck."""
        return self.op_timeout_s or max(90.0, 15 * self.session_s)

    @property
    def limit_s(self) -> float:
        """The whole campaign's time limit."""
        return self.time_limit_s or 300.0 + self.faults * max(90.0, 15 * self.session_s)


__all__ = ["CampaignSettings"]
