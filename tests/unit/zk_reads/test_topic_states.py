"""The reader's partition states over a port's bulk ``get_states`` (``_Reading.topic_states``)
are what the reader gave partition by partition over ``get_many`` (kept here as the reference):
the same pairs in the same order, one ``PartitionStateZk`` object for each (data object,
version) pair exactly as before, the same reasons for what it skips -- whether a topic's
columns take the C-level path (all states present and well-formed) or not."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm import zk_paths as P
from fsm.reads.port import Malformed, StateZnodes, states_by_get_many
from fsm.reads.reader import _Reading
from fsm.values import LeaderAndIsr, PartitionStateZk, TopicAssignment


class SubLeaderAndIsr(LeaderAndIsr):
    """A value of the expected type that is not exactly it: taken, never shared."""

    __slots__ = ()


class N(NamedTuple):
    data: object
    version: int
    czxid: int


class ColumnsPort:
    """Znodes by path; ``get_states`` as the live port hands it (columns), or by
    ``get_many`` (``by_paths``)."""

    def __init__(self, znodes: dict[str, N], by_paths: bool) -> None:
        self.znodes = znodes
        self.by_paths = by_paths

    def get_many(self, paths: Sequence[str], watch: bool = False) -> list[N | None]:
        return [self.znodes.get(p) for p in paths]

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterator[StateZnodes]:
        if self.by_paths:
            yield from states_by_get_many(self, topics)  # type: ignore[arg-type]
            return
        for t, ps in topics:
            nodes = [self.znodes.get(P.partition_state(t, p)) for p in ps]
            yield StateZnodes(tuple(None if n is None else n.data for n in nodes),
                              tuple(-1 if n is None else n.version for n in nodes))


def reference(r: _Reading, tps: Sequence[tuple[str, int]]) -> list:
    """The reader's ``partition_states`` before ``get_states`` (znode by znode)."""
    paths = [P.partition_state(t, p) for t, p in tps]
    out = []
    shared: dict[tuple[int, int], PartitionStateZk] = {}
    for tp, path, node in zip(tps, paths, r.port.get_many(paths), strict=True):
        if node is None:
            continue
        data = node.data
        if type(data) is LeaderAndIsr:
            key = (id(data), node.version)
            state = shared.get(key)
            if state is None:
                state = shared[key] = PartitionStateZk(data, node.version)
            out.append((tp, state))
        elif r.value(path, data, LeaderAndIsr, f"partition {tp[0]}-{tp[1]}") is not None:
            out.append((tp, PartitionStateZk(data, node.version)))
    return out


def sharing(pairs: list) -> list[int]:
    """Which state object each pair holds, numbered by first appearance."""
    seen: dict[int, int] = {}
    return [seen.setdefault(id(s), len(seen)) for _, s in pairs]


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_topic_states_are_the_znode_by_znode_reading(rng: random.Random, by_paths: bool) -> None:
    pool = [LeaderAndIsr(rng.randrange(3), 0, (1, 2), 1) for _ in range(3)]  # shared objects
    topics = []
    znodes: dict[str, N] = {}
    for t in rng.sample(["a", "b", "c-1", "state", "t"], rng.randrange(1, 5)):
        ps = rng.sample(range(40), rng.randrange(0, 12))
        topics.append((t, ps))
        clean = rng.random() < 0.6  # every state present and a shared LeaderAndIsr
        for p in ps:
            how = 0 if clean else rng.randrange(7)
            if how == 1:
                continue  # absent: a New partition
            data: object = rng.choice(pool)
            if how == 2:
                data = Malformed(f"/x{p}: bad")
            elif how == 3:
                data = TopicAssignment(((0, (1,)),))  # another kind's value
            elif how == 4:
                data = LeaderAndIsr(1, 0, (1, 2), 1)  # equal to others, another object
            elif how == 5:
                data = SubLeaderAndIsr(1, 0, (1,), 1)
            znodes[P.partition_state(t, p)] = N(data, rng.choice([0, 0, 1, 7]), p)
    tps = [(t, p) for t, ps in topics for p in ps]
    want_reading = _Reading(ColumnsPort(znodes, by_paths))  # type: ignore[arg-type]
    want = reference(want_reading, tps)
    got_reading = _Reading(ColumnsPort(znodes, by_paths))  # type: ignore[arg-type]
    got = got_reading.topic_states(topics)
    assert got == want
    assert [tp for tp, _ in got] == [tp for tp, _ in want]
    assert sharing(got) == sharing(want)
    assert got_reading.bad == want_reading.bad
    # and by (topic, partition) pairs, as ISR change notifications ask
    again = _Reading(ColumnsPort(znodes, by_paths))  # type: ignore[arg-type]
    assert again.partition_states(tps) == want and sharing(again.partition_states(tps)) == \
        sharing(want)


def test_a_port_answering_the_wrong_number_of_states_is_an_error() -> None:
    class Short(ColumnsPort):
        def get_states(self, topics):  # type: ignore[no-untyped-def]
            yield StateZnodes((LeaderAndIsr(1, 0, (1,), 1),), (0,))

    r = _Reading(Short({}, False))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        r.topic_states([("t", [0, 1])])
