"""The node's timers: deadlines by (kind, destination); re-arming replaces, cancelling
forgets, each arming fires once, the jitter stays in its bounds."""

from __future__ import annotations

import random

import pytest

from adapters.raft_node.timers import Deadlines


def test_rearming_replaces_and_a_timer_fires_once() -> None:
    d = Deadlines(random.Random(1))
    d.arm("fetch", -1, 100, 0, now_ms=0)
    d.arm("fetch", -1, 300, 0, now_ms=50)  # re-armed: due at 350, not 100
    assert d.pop_due(200) == []
    assert d.next_deadline() == 350
    assert d.pop_due(350) == [("fetch", -1)]
    assert d.pop_due(10_000) == []
    assert d.next_deadline() is None


def test_cancel_and_per_destination_timers() -> None:
    d = Deadlines(random.Random(1))
    d.arm("request", 2, 10, 0, now_ms=0)
    d.arm("request", 3, 20, 0, now_ms=0)
    d.arm("election", -1, 5, 0, now_ms=0)
    d.cancel("request", 2)
    assert d.armed() == {("request", 3), ("election", -1)}
    assert d.pop_due(100) == [("election", -1), ("request", 3)]  # earliest first


def test_jitter_is_drawn_within_its_bounds_and_varies() -> None:
    d = Deadlines(random.Random(7))
    deadlines = {d.arm("election", -1, 1000, 500, now_ms=0) for _ in range(50)}
    assert all(1000 <= x <= 1500 for x in deadlines)
    assert len(deadlines) > 40  # drawn each time, not once


def test_many_rearms_keep_the_heap_bounded() -> None:
    d = Deadlines(random.Random(1))
    for i in range(10_000):
        d.arm("fetch", -1, 100, 0, now_ms=i)
    assert len(d._heap) <= 4 * 1 + 64 + 1
    assert d.pop_due(10_099) == [("fetch", -1)]


def test_bad_delays_are_refused() -> None:
    with pytest.raises(ValueError, match="negative delay"):
        Deadlines().arm("fetch", -1, -1, 0, now_ms=0)
