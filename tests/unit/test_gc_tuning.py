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


def test_collector_pause_turns_it_off_and_back_on_once() -> None:
    assert gc.isenabled()
    pause = gc_tuning.CollectorPause()
    try:
        pause.pause()
        assert not gc.isenabled() and pause.paused
        pause.pause()  # idempotent
        pause.resume()
        assert gc.isenabled() and not pause.paused
        pause.resume()  # idempotent: does not turn on what it did not turn off
        assert gc.isenabled()
    finally:
        gc.enable()


def test_collector_pause_leaves_a_collector_it_found_off_as_it_was() -> None:
    first, second = gc_tuning.CollectorPause(), gc_tuning.CollectorPause()
    try:
        first.pause()
        second.pause()  # finds it off: not its pause
        assert not second.paused
        second.resume()
        assert not gc.isenabled()  # still the first burst's
        first.resume()
        assert gc.isenabled()
    finally:
        gc.enable()
