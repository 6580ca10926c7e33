"""The ISR expander on a real KRaft cluster (3 controllers, 3 brokers, processes), checked
against the active controller's committed image (admin op ``topics``); every admin request is
our own wire client's, sent to a broker, which forwards it to the active controller:

(a) a reassignment adding a replica (and removing the leader's) completes: the leader takes
    the adding replica into the ISR, the controller finishes the move on that AlterPartition
    -- ListPartitionReassignments is empty, replicas and ISR are the target;
(b) after ``kill -9`` of a broker and its restart (registered again, unfenced), every ISR
    that lost it takes it back;
(c) a preferred-replica election (ElectLeaders, PREFERRED) then moves leadership back to
    each partition's first replica."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.cluster.kraft_launcher import KRaftCluster
from adapters.kraft_node.wire_client import WireClient
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from tests.integration.kraft_fixtures import eventually, running_kraft

pytestmark = [pytest.mark.integration]

Partitions = dict[int, tuple[int, tuple[int, ...], frozenset[int]]]
"""index -> (leader, replicas, ISR), as committed"""
SPREAD = 6


WAIT_S = 20.0


@pytest.fixture
def kraft(tmp_path: Path) -> Iterator[KRaftCluster]:
    with running_kraft(tmp_path / "k", 3, tail=30, overrides={
            "broker.heartbeat.interval.ms": "200", "broker.session.timeout.ms": "3000"}) as c:
        yield c


def committed(c: KRaftCluster, topic: str) -> Partitions | None:
    v = c.quorum()
    got = None if v is None else c.controllers[v.leader].ask("topics")
    t = None if got is None or not got.get("active") else got["topics"].get(topic)
    if t is None:
        return None
    return {int(i): (p["leader"], tuple(p["replicas"]), frozenset(p["isr"]))
            for i, p in t["partitions"].items()}


def ask(c: KRaftCluster, broker: int, request: Any) -> Any:
    host, port = c.brokers[broker].address.rsplit(":", 1)
    with WireClient(host, int(port), timeout=30) as client:
        return client.call_value(request)


def test_reassignment_completes_isrs_regrow_after_kill_9_and_preferred_leaders_return(
        kraft: KRaftCluster) -> None:
    c = kraft
    created = ask(c, 1, rq.CreateTopicsRequest((
        rq.CreatableTopic("moves", assignments=((0, (1, 2)),)),
        rq.CreatableTopic("spread", SPREAD, 3)), ()))
    assert [t.error for t in created.topics] == [ErrorCode.NONE] * 2, created
    eventually("both topics led and whole", lambda: all(
        (parts := committed(c, name)) and len(parts) == n and all(
            leader >= 0 and isr == frozenset(replicas) for leader, replicas, isr in parts.values())
        for name, n in (("moves", 1), ("spread", SPREAD))), timeout=WAIT_S)

    # (a) moves-0 [1, 2] -> [2, 3]: 3 is adding, the leader 1 is removed
    moved = ask(c, 2, rq.AlterPartitionReassignmentsRequest(
        (rq.ReassignablePartition("moves", 0, (2, 3)),)))
    assert moved.error == ErrorCode.NONE and [r.error for r in moved.results] == [
        ErrorCode.NONE], moved
    done = eventually("moves-0 on [2, 3], in sync, led by 2", lambda: (
        committed(c, "moves") == {0: (2, (2, 3), frozenset({2, 3}))}), timeout=WAIT_S)
    assert done
    listed = ask(c, 3, rq.ListPartitionReassignmentsRequest())
    assert listed.error == ErrorCode.NONE and listed.reassignments == ()

    # (b) kill -9 broker 3: fenced, out of every ISR; back: every ISR takes it again
    c.kill(3)
    c.wait_brokers((3,), fenced=True, timeout=20)
    lost = eventually("broker 3 out of every ISR", lambda: (
        (s := committed(c, "spread")) and all(3 not in isr for _, _, isr in s.values())
        and (m := committed(c, "moves")) and 3 not in m[0][2] and s), timeout=WAIT_S)
    assert all(leader != 3 for leader, _, _ in lost.values())
    c.start_node(3)
    c.wait_brokers((3,), timeout=30)
    unfenced_at = time.monotonic()
    regrown = eventually("broker 3 back in every ISR", lambda: (
        (s := committed(c, "spread")) and all(isr == frozenset(replicas)
                                              for _, replicas, isr in s.values())
        and committed(c, "moves") == {0: (2, (2, 3), frozenset({2, 3}))} and s), timeout=WAIT_S)
    print(f"ISRs of {SPREAD + 1} partitions regrown {time.monotonic() - unfenced_at:.2f} s "
          "after broker 3 was seen unfenced")

    # (c) the partitions broker 3 should lead are led by others: a preferred election moves
    # them back
    off = [i for i, (leader, replicas, _) in regrown.items() if leader != replicas[0]]
    assert off, regrown  # broker 3 was the first replica of some (3 brokers, 6 partitions)
    elected = ask(c, 1, rq.ElectLeadersRequest(rq.PREFERRED, tuple(
        ("spread", i) for i in range(SPREAD))))
    assert elected.error == ErrorCode.NONE
    errors = {r.partition_id: r.error for r in elected.results}
    assert {i: e for i, e in errors.items() if i in off} == {i: ErrorCode.NONE for i in off}
    assert all(e == ErrorCode.ELECTION_NOT_NEEDED for i, e in errors.items() if i not in off)
    eventually("every spread partition led by its first replica", lambda: (
        (s := committed(c, "spread")) and all(
            leader == replicas[0] and isr == frozenset(replicas)
            for leader, replicas, isr in s.values())), timeout=WAIT_S)
