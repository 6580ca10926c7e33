"""The campaign's pure parts: the seeded plan, the password derivation, the figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from adapters.chaos.observe import Metadata, metadata_violations
from adapters.chaos.plan import ActionKind, FaultKind, make_plan
from adapters.chaos.report import FaultRecord, Report, percentile
from adapters.chaos.sessions import java_random_bytes
from adapters.zookeeper.audit import ZkState
from fsm.values import LeaderAndIsr, PartitionStateZk, TopicAssignment
from fsm.znodes import ControllerZnode


def test_the_plan_is_a_function_of_the_seed() -> None:
    assert make_plan(5, 50, 3) == make_plan(5, 50, 3)
    assert make_plan(5, 50, 3) != make_plan(6, 50, 3)


def test_the_first_round_covers_every_kind_and_actions_name_live_topics() -> None:
    plan = make_plan(1, 200, 3)
    assert {s.fault.kind for s in plan[:len(FaultKind)]} == set(FaultKind)
    assert_actions_name_live_topics(plan, {1, 2, 3})


def assert_actions_name_live_topics(plan: Sequence[Any], brokers: set[int]) -> None:
    """Every action of ``plan`` (either campaign's: they share the actions) names a topic
    that exists then -- created, not deleted -- and a partition it has; a create names a
    new topic; every replica set is of distinct ``brokers``."""
    topics: dict[str, int] = {}
    for step in plan:
        a = step.action
        if a.kind is ActionKind.CREATE:
            assert a.topic not in topics
            topics[a.topic] = len(a.assignment)
        elif a.kind is ActionKind.DELETE:
            assert topics.pop(a.topic)
        elif a.kind is ActionKind.ELECT:
            assert set(a.topics) <= set(topics)
        else:
            assert a.topic in topics
            if a.kind is ActionKind.ADD_PARTITIONS:
                topics[a.topic] += len(a.assignment)
            else:
                assert 0 <= a.partition < topics[a.topic]
        for replicas in a.assignment:
            assert len(set(replicas)) == len(replicas) and set(replicas) <= brokers


def test_without_our_own_ensemble_no_zookeeper_server_is_killed() -> None:
    kinds = {s.fault.kind for s in make_plan(1, 200, 3, zookeeper_faults=False)}
    assert FaultKind.ZK_KILL_LEADER not in kinds and FaultKind.ZK_KILL_FOLLOWER not in kinds


def test_java_random_matches_the_jdk() -> None:
    # new java.util.Random(42).nextInt() is -1170105035; nextBytes packs ints low byte first.
    first = int.from_bytes(java_random_bytes(42, 4), "little", signed=True)
    assert first == -1170105035
    assert len(java_random_bytes(7, 16)) == 16


def test_percentiles_and_verdict() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0
    r = Report(seed=1, brokers=3, faults_planned=1, session_timeout_ms=4000)
    r.records.append(FaultRecord(1, "kill-broker", "broker 1", "create t", "written", 2.5))
    assert r.ok and r.to_json()["recovery_seconds"]["max"] == 2.5
    r.stuck.append({"step": 1, "reason": "x"})
    assert not r.ok


@pytest.fixture
def state() -> ZkState:
    li = LeaderAndIsr(leader=1, leader_epoch=3, isr=(1, 2), controller_epoch=2)
    return ZkState(controller=ControllerZnode(broker_id=2), broker_ids=(1, 2),
                   topics={"t": TopicAssignment(((0, (1, 2)),))},
                   topic_names=("t",),
                   partition_states={("t", 0): PartitionStateZk(li, 4)})


def test_metadata_check_compares_every_field(state: ZkState) -> None:
    good = Metadata(2, (1, 2), {("t", 0): (1, 3, (1, 2), (1, 2))}, {})
    assert metadata_violations(state, {1: good, 2: good}) == []
    stale = Metadata(1, (1, 2), {("t", 0): (2, 2, (1, 2), (1, 2)),
                                 ("gone", 0): (1, 0, (1,), (1,))}, {})
    rows = metadata_violations(state, {1: stale, 2: None})
    entities = [r.entity for r in rows]
    assert "broker 1" in entities and "t-0" in entities and "gone-0" in entities
    assert any(r.entity == "broker 2" and "does not answer" in r.detail for r in rows)
