"""The time bounds both campaigns derive from their settings, and the recovery clock."""

from __future__ import annotations

import time
from collections.abc import Callable


class CampaignTimes:
    """The derived bounds of a campaign's settings (mixed into each campaign's settings
    dataclass, which has the fields named below)."""

    faults: int
    session_timeout_ms: int
    settle_timeout_s: float | None
    op_timeout_s: float | None
    time_limit_s: float | None

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


def time_recovery(t0: float, bound_s: float, recovered: Callable[[], bool],
                  until: Callable[[], bool] | None = None, poll_s: float = 0.1
                  ) -> float | None:
    """Seconds from ``t0`` until ``recovered()`` holds (None if it did not by ``t0 +
    bound_s``). With ``until``, keeps polling -- the measure unchanged -- until that holds
    too (or the bound passes)."""
    deadline = t0 + bound_s
    got: float | None = None
    while True:
        if got is None and recovered():
            got = time.monotonic() - t0
        if got is not None and (until is None or until()):
            return got
        if time.monotonic() >= deadline:
            return got
        time.sleep(poll_s)


__all__ = ["CampaignTimes", "time_recovery"]
