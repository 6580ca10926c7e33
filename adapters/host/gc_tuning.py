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
