"""``kcontrol reassign --generate``: the topics file, the broker list and the deterministic
proposal; and the JSON printed, which ``--reassignment-json-file`` reads back."""

from __future__ import annotations

import re

import pytest

from adapters.admin.errors import AdminError
from adapters.admin.reassign import PlanError, parse_plan, plan_json
from adapters.admin.reassign_generate import parse_broker_list, parse_topics_to_move, propose


def test_topics_file() -> None:
    text = '{"version": 1, "topics": [{"topic": "b"}, {"topic": "a"}]}'
    assert parse_topics_to_move(text) == ["b", "a"]
    for bad, message in {
        "nope": "not valid JSON",
        "[]": '"topics" list',
        '{"topics": []}': "lists no topic",
        '{"topics": [{"name": "a"}]}': 'topics[0] must be an object with a "topic"',
        '{"topics": [{"topic": "a"}, {"topic": "a"}]}': "duplicate entries: a",
    }.items():
        with pytest.raises(PlanError, match=re.escape(message)):
            parse_topics_to_move(bad)


def test_broker_list() -> None:
    assert parse_broker_list("3, 1,2") == [3, 1, 2]
    with pytest.raises(ValueError, match="duplicate entries: 1"):
        parse_broker_list("1,2,1")
    with pytest.raises(ValueError, match="'x', which is not a broker id"):
        parse_broker_list("1,x")
    with pytest.raises(ValueError, match="an empty entry"):
        parse_broker_list("1,,2")


def test_proposal_is_a_deterministic_round_robin() -> None:
    current = {"t": {0: (1, 2), 1: (2, 3), 2: (3, 1)}, "a": {0: (1,)}}
    plan = propose(current, [6, 4, 5])
    assert plan == (
        (("a", 0), (4,)),
        (("t", 0), (4, 5)),
        (("t", 1), (5, 6)),
        (("t", 2), (6, 4)),
    )
    assert propose(current, [4, 5, 6]) == plan
    with pytest.raises(AdminError, match="larger than available brokers: 1"):
        propose(current, [4])


def test_proposal_spreads_leaders_and_followers() -> None:
    plan = propose({"t": {p: (1, 2, 3) for p in range(6)}}, [1, 2, 3])
    leaders = [r[0] for _, r in plan]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]
    assert all(len(set(r)) == 3 for _, r in plan)


def test_printed_json_is_kafkas_and_reads_back() -> None:
    plan = ((("t", 0), (2, 1)),)
    text = plan_json(plan, log_dirs=True)
    assert text == (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,1],'
        '"log_dirs":["any","any"]}]}'
    )
    assert parse_plan(text) == plan
