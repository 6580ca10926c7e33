"""The node's queue: the Raft lane before the client lane, FIFO within each, bounded."""

from __future__ import annotations

import threading

import pytest

from adapters.raft_node.inbox import CLOSED, Inbox


def test_raft_items_overtake_queued_client_work_and_each_lane_is_fifo() -> None:
    q = Inbox(100)
    for i in range(5):
        q.put(("append", i), client=True)
    q.put(("fetch", 0))
    q.put(("fetch", 1))
    got = [q.get(0) for _ in range(7)]
    assert got == [("fetch", 0), ("fetch", 1)] + [("append", i) for i in range(5)]
    assert q.get(0) is None


def test_a_full_lane_drops_after_waiting_and_the_other_lane_is_unaffected() -> None:
    q = Inbox(2, put_timeout=0.05)
    assert q.put("a", client=True) and q.put("b", client=True)
    assert not q.put("c", client=True)  # waited 50 ms, dropped
    assert q.dropped == 1
    assert q.put("vote")  # the Raft lane has its own room


def test_a_waiting_producer_gets_in_once_there_is_room() -> None:
    q = Inbox(1, put_timeout=5.0)
    q.put("a", client=True)
    done = threading.Event()

    def producer() -> None:
        assert q.put("b", client=True)
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.05)
    assert q.get(0) == "a"
    assert done.wait(5)
    t.join()
    assert q.get(0) == "b"


def test_close_wakes_the_consumer_and_refuses_producers() -> None:
    q = Inbox(10)
    q.put("x")
    q.close()
    assert q.get(None) is CLOSED
    assert not q.put("y")


def test_bad_capacity() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Inbox(0)
