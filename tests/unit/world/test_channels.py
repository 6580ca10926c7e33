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


def test_drops() -> None:
    ch = Channels()
    ch.send(ChannelKey(REQUEST, 1, 2), "x")
    ch.send(ChannelKey(RESPONSE, 2, 1), "y")
    ch.send(ChannelKey(REQUEST, 1, 3), "z")
    ch.send(ChannelKey(SHUTDOWN, 3, 1), "w")
    assert ch.drop_connection(2, 1) == 2
    assert ch.nonempty() == [ChannelKey(SHUTDOWN, 3, 1), ChannelKey(REQUEST, 1, 3)] or \
        set(ch.nonempty()) == {ChannelKey(SHUTDOWN, 3, 1), ChannelKey(REQUEST, 1, 3)}
    assert ch.drop_broker(3) == 2 and len(ch) == 0


def test_snapshot_canonical() -> None:
    a, b = Channels(), Channels()
    k1, k2 = ChannelKey(REQUEST, 1, 2), ChannelKey(RESPONSE, 2, 1)
    a.send(k1, 1)
    a.send(k2, 2)
    b.send(k2, 2)
    b.send(k1, 1)
    assert a.snapshot() == b.snapshot()
