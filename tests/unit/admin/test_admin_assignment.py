"""Kafka's replica assignment rule, the manual-assignment parser and the reassignment plan parser
(pure: no ZooKeeper)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.admin.assignment import (
    assign_replicas,
    number_partitions,
    parse_replica_assignment,
    validate_assignment,
)
from adapters.admin.errors import AdminError
from adapters.admin.reassign import PlanError, parse_plan


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[int], int, int, int | None, int]:
    brokers = draw(st.lists(st.integers(0, 1000), min_size=1, max_size=12, unique=True))
    rf = draw(st.integers(1, len(brokers)))
    partitions = draw(st.integers(1, 60))
    start = draw(st.none() | st.integers(0, len(brokers) - 1))
    seed = draw(st.integers(0, 2**32))
    return brokers, rf, partitions, start, seed


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_every_partition_gets_rf_distinct_registered_brokers(layout) -> None:
    brokers, rf, partitions, start, seed = layout
    out = assign_replicas(brokers, partitions, rf, start_index=start, rng=random.Random(seed))
    assert sorted(out) == list(range(partitions))
    for replicas in out.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= set(brokers)


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_leaders_are_spread_evenly(layout) -> None:
    brokers, rf, partitions, start, seed = layout
    out = assign_replicas(brokers, partitions, rf, start_index=start, rng=random.Random(seed))
    leads = Counter(replicas[0] for replicas in out.values())
    counts = [leads.get(b, 0) for b in brokers]
    assert max(counts) - min(counts) <= 1


@settings(max_examples=200, deadline=None)
@given(layouts(), st.integers(1, 30))
def test_added_partitions_continue_the_numbering(layout, extra) -> None:
    brokers, rf, partitions, start, seed = layout
    out = assign_replicas(brokers, extra, rf, start_index=start or 0, start_partition=partitions)
    assert sorted(out) == list(range(partitions, partitions + extra))
    assert all(len(set(r)) == rf for r in out.values())


def test_kafkas_documented_example() -> None:
    # AdminUtils' doc comment: 5 brokers, 10 partitions, RF 3, start index 0.
    out = assign_replicas([4, 3, 2, 1, 0], 10, 3, start_index=0)
    assert out == {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }


def test_refusals_use_kafkas_wording() -> None:
    with pytest.raises(AdminError, match="Replication factor: 4 larger than available brokers: 3"):
        assign_replicas([1, 2, 3], 2, 4)
    with pytest.raises(AdminError, match="Number of partitions must be larger than 0"):
        assign_replicas([1], 0, 1)
    with pytest.raises(AdminError, match="larger than available brokers: 0"):
        assign_replicas([], 1, 1)


def test_manual_assignment_parser_reads_kafkas_format() -> None:
    """kafka-topics --replica-assignment: commas separate partitions, colons brokers."""
    assert parse_replica_assignment("1:2,3:4") == [(1, 2), (3, 4)]
    assert parse_replica_assignment("3") == [(3,)]
    assert parse_replica_assignment("1,2,3") == [(1,), (2,), (3,)]
    assert parse_replica_assignment(" 1 : 2 , 2:3 ") == [(1, 2), (2, 3)]
    bad = [
        ("", "empty"),
        ("  ", "empty"),
        ("1:2,,3:4", "partition 1 lists no broker"),
        ("1:2,", "partition 1 lists no broker"),
        ("1::2", "partition 0 ('1::2') has an empty broker id"),
        ("1:x", "'x', which is not a broker id"),
        ("1:-2", "'-2', which is not a broker id"),
        ("1:2:1", "lists broker 1 twice"),
        ("1:2,3", "partition 1 ('3') has 1 replica(s), partition 0 has 2"),
        ("0:1,2,3", "partition 1 ('2') has 1 replica(s)"),  # the old PARTITION:BROKERS form
    ]
    for text, words in bad:
        with pytest.raises(ValueError, match=re.escape(words)) as info:
            parse_replica_assignment(text)
        if "twice" not in words:
            assert "1:2,3:4 puts partition 0 on brokers 1,2" in str(info.value)


def test_new_partitions_are_numbered_after_the_existing_ones() -> None:
    assert number_partitions([(3, 1)], existing=2, total=3) == {2: (3, 1)}
    # every partition listed (kafka-topics' --alter): the existing entries are ignored
    assert number_partitions([(1, 2), (2, 3), (3, 1)], existing=2, total=3) == {2: (3, 1)}
    with pytest.raises(AdminError, match="needs the 1 new one"):
        number_partitions([(1, 2), (2, 3)], existing=2, total=3)


def test_manual_assignment_validation() -> None:
    validate_assignment({0: (1, 2), 1: (2, 1)}, [1, 2])
    cases = [
        ({1: (1,)}, "consecutive"),
        ({0: (1, 1)}, "Duplicate replica"),
        ({0: (1, 2), 1: (1,)}, "same number of replicas"),
        ({0: (1, 9)}, "not registered: 9"),
    ]
    for assignment, message in cases:
        with pytest.raises(AdminError, match=message):
            validate_assignment(assignment, [1, 2])


def test_plan_parser() -> None:
    text = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,2,1]}]}'
    assert parse_plan(text) == ((("t", 0), (3, 2, 1)),)
    any_dirs = '{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["any"]}]}'
    assert parse_plan(any_dirs) == ((("t", 0), (1,)),)
    bad = {
        "not json": "not valid JSON",
        '{"partitions":[]}': "cannot be empty",
        '{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}': "empty replica list",
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}': "duplicate entries",
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1]},'
        '{"topic":"t","partition":0,"replicas":[2]}]}': "duplicate topic partitions",
        '{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}': "non-negative integer",
        '{"version":2,"partitions":[]}': "unknown version",
    }
    for text, message in bad.items():
        with pytest.raises(PlanError, match=message):
            parse_plan(text)
