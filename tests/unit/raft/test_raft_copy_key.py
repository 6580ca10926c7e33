"""``copy()`` is independent of its original and ``key()`` is canonical: equal for nodes that
hold the same, different when anything held differs (the checker dedupes states by it)."""

from __future__ import annotations

from fsm.raft.effects import PARKED
from fsm.raft.events import ClientAppend, Flushed, TimerFired
from tests.unit.raft.helpers import fetch, leader


def test_a_copy_goes_its_own_way():
    node = leader(1)
    fetch(node, 2, 1, 1)
    fetch(node, 2, 1, 1)  # parked
    before = node.key()
    twin = node.copy()
    assert twin.key() == before and twin is not node
    twin.handle(ClientAppend(1, 1, ("a",)))
    twin.handle(Flushed(2))
    fetch(twin, 3, 2, 1)
    assert node.key() == before  # the original saw none of it: dicts were copied too
    assert node.parked and not twin.parked
    assert node.positions == {2: 1, 3: -1} and twin.positions == {2: 1, 3: 2}
    assert twin.key() != before


def test_equal_histories_give_equal_keys_and_the_key_is_hashable():
    a, b = leader(1), leader(1)
    for n in (a, b):
        fetch(n, 3, 1, 1, now=5)
        fetch(n, 2, 1, 1, now=5)
    assert a.key() == b.key() and hash(a.key()) == hash(b.key())
    assert len({a.key(), b.key(), a.copy().key()}) == 1


def test_the_key_sees_dict_order_no_more_than_the_node_does():
    a, b = leader(1), leader(1)
    fetch(a, 2, 1, 1)
    fetch(a, 3, 1, 1)
    fetch(b, 3, 1, 1)
    fetch(b, 2, 1, 1)
    a.hw_sent, b.hw_sent = dict(sorted(a.hw_sent.items())), dict(sorted(b.hw_sent.items()))
    assert a.key() == b.key()


def test_the_key_holds_armed_timers_and_times():
    a, b = leader(1), leader(1)
    fetch(a, 2, 1, 1)
    fetch(b, 2, 1, 1)
    fetch(a, 2, 1, 1)  # a parks 2: a timer armed
    assert a.key() != b.key()
    a.handle(TimerFired(PARKED, 2))
    fetch(b, 2, 1, 1)
    b.handle(TimerFired(PARKED, 2))
    assert a.key() == b.key()
    fetch(a, 3, 1, 1, now=1)
    fetch(b, 3, 1, 1, now=2)
    assert a.key() != b.key()
