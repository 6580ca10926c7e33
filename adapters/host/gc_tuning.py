"""The cyclic garbage collector, tuned for processes that handle requests in bursts.

A broker applying a LeaderAndIsr or UpdateMetadata of 10,000 partitions, and a controller
building them, allocate a few hundred thousand short-lived objects (wire dicts, tuples,
request values) that reference counting frees; almost none are part of a cycle. CPython's
default thresholds (700, 10, 10) still run a young collection every 700 allocations and, in
turn, collections of the older generations that walk the whole heap -- the 10,000 replica
views, the metadata cache, the controller's context. Measured in process on the broker
failure path (``docs/benchmarks.md``, "Broker failure"): decode and core work take ~35%
longer with the default thresholds than with the collector off, and ~5% longer with the
thresholds below.

``tune_for_bursts()`` raises the young threshold so a burst is collected a few times
instead of hundreds, and freezes what start-up allocated (modules, configuration, the
loaded state) so that full collections skip it. Cycles are still collected, only less often.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000
OLDER_THRESHOLDS = (50, 100)


def tune_for_bursts() -> tuple[int, int, int]:
    """Apply the thresholds and freeze the objects alive now; returns the old thresholds."""
    old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    gc.freeze()
    return old


class CollectorPause:
    """The cyclic collector switched off for one burst, then back on.

    A controller's failover load at 1,000,000 partitions allocates tens of millions of objects
    (replies, znode values, the snapshot, then the core's context and requests) and keeps
    millions of them; none is part of a cycle. With the collector on, every young collection
    that promotes them makes the older generations grow, and the full collections that follow
    walk the whole heap again and again: about 30% of the load's CPU time at 1,000,000
    partitions (``docs/benchmarks.md``, issue 26). ``pause()`` turns the collector off if it
    is on, ``resume()`` turns it back on if ``pause()`` did; both are idempotent. The
    collector is process-wide: a pause that finds it off (another burst's, or the
    application's choice) leaves it as it is, and only its own resume turns it back on."""

    __slots__ = ("_paused",)

    def __init__(self) -> None:
        self._paused = False

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        if not self._paused and gc.isenabled():
            gc.disable()
            self._paused = True

    def resume(self) -> None:
        if self._paused:
            self._paused = False
            gc.enable()
