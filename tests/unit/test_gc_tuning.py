"""``tune_for_bursts`` raises the collector's thresholds and freezes what start-up made."""

from __future__ import annotations

import gc

from adapters.host import gc_tuning


def test_thresholds_raised_and_startup_frozen() -> None:
    before = gc.get_threshold()
    try:
        old = gc_tuning.tune_for_bursts()
        assert old == before
        assert gc.get_threshold() == (gc_tuning.YOUNG_THRESHOLD, *gc_tuning.OLDER_THRESHOLDS)
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] > 100 * before[0] or before[0] >= gc_tuning.YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
