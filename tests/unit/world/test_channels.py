"""Channels: FIFO per connection, bounded, dropped per connection or per broker."""

from __future__ import annotations

import pytest

from model_check.world.channels import (
    REQUEST,
    RESPONSE,
    SHUTDOWN,
    ChannelFull,
    ChannelKey,
    Channels,
)


def test_fifo_and_snapshot() -> None:
    ch = Channels(bound=3)
    k = ChannelKey(REQUEST, 1, 2)
    ch.send(k, "a")
    ch.send(k, "b")
    snap = ch.snapshot()
    assert ch.pop(k) == "a" and ch.peek(k) == "b" and ch.pop(k) == "b"
    assert ch.nonempty() == []
    again = Channels.restore(snap, bound=3)
    assert again.pop(k) == "a" and len(again) == 1
    assert Channels.restore(snap, 3).snapshot() == snap


def test_bound() -> None:
    ch = Channels(bound=1)
    k = ChannelKey(REQUEST, 1, 2)
    ch.send(k, "a")
    with pytest.raises(ChannelFull):
        ch.send(k, "b")


def test_a_dropped_connection_keeps_requests_and_sends_unanswered_ones_again() -> None:
    """As the live channel manager: requests survive a reset connection; an answer on the
    wire is lost and its request goes back to the front of the queue (seed 003)."""
    ch = Channels()
    ch.send(ChannelKey(REQUEST, 1, 2), (0, "queued"))
    ch.send(ChannelKey(RESPONSE, 2, 1), ("answered-1", "answer-1"))
    ch.send(ChannelKey(RESPONSE, 2, 1), ("answered-2", "answer-2"))
    ch.send(ChannelKey(SHUTDOWN, 2, 1), (5, "cs"))
    ch.send(ChannelKey(REQUEST, 1, 3), (0, "other"))
    assert ch.drop_connection(2, 1) == 3  # two answers and the ControlledShutdown
    assert ch.queues[ChannelKey(REQUEST, 1, 2)] == (
        (0, "answered-1"), (0, "answered-2"), (0, "queued"))
    assert ch.queues[ChannelKey(REQUEST, 1, 3)] == ((0, "other"),)
    assert set(ch.nonempty()) == {ChannelKey(REQUEST, 1, 2), ChannelKey(REQUEST, 1, 3)}
    assert Channels.restore(ch.snapshot()).queues == ch.queues


def test_a_dropped_connection_over_the_bound_raises() -> None:
    ch = Channels(bound=2)
    ch.send(ChannelKey(REQUEST, 1, 2), (0, "a"))
    ch.send(ChannelKey(REQUEST, 1, 2), (0, "b"))
    ch.send(ChannelKey(RESPONSE, 2, 1), ("c", "answer"))
    with pytest.raises(ChannelFull):
        ch.drop_connection(1, 2)


def test_a_stopped_process_loses_what_it_sent_but_not_the_requests_to_it() -> None:
    ch = Channels()
    ch.send(ChannelKey(REQUEST, 1, 3), (0, "to-3"))  # waits for 3's next incarnation
    ch.send(ChannelKey(RESPONSE, 3, 1), ("answered", "answer"))  # sent again to 3
    ch.send(ChannelKey(REQUEST, 3, 1), (0, "from-3"))  # controller 3 is gone: lost
    ch.send(ChannelKey(RESPONSE, 1, 3), ("x", "answer-to-3"))  # to a dead controller: lost
    ch.send(ChannelKey(SHUTDOWN, 1, 2), (5, "cs"))  # unrelated
    assert ch.process_gone(3) == 3
    assert ch.queues == {ChannelKey(REQUEST, 1, 3): ((0, "answered"), (0, "to-3")),
                         ChannelKey(SHUTDOWN, 1, 2): ((5, "cs"),)}


def test_snapshot_canonical() -> None:
    a, b = Channels(), Channels()
    k1, k2 = ChannelKey(REQUEST, 1, 2), ChannelKey(RESPONSE, 2, 1)
    a.send(k1, 1)
    a.send(k2, 2)
    b.send(k2, 2)
    b.send(k1, 1)
    assert a.snapshot() == b.snapshot()
