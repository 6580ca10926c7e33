"""The campaigns' clocks: the recovery clock of a fault, and a pause held until it did what it
must (the victim's sessions expired, the broker fenced, the time passed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

Recovery = Callable[..., "float | None"]
"""A campaign's ``wait_recovery(t0, until=...)``: seconds from ``t0`` to recovery, or None."""


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


def hold_pause(record: Any, t0: float, wait_recovery: Recovery, held: Callable[[], bool],
               short: Exception) -> None:
    """A process paused at ``t0``: its recovery timed into ``record`` (``wait_recovery``),
    the pause kept until ``held()`` -- ``short`` raised if it never held -- and its length
    noted (``paused 7.4s``). The caller resumes the process, in every case."""
    record.recovery_s = wait_recovery(t0, until=held)
    if not held():
        raise short
    record.notes.append(f"paused {time.monotonic() - t0:.1f}s")


__all__ = ["hold_pause", "time_recovery"]
