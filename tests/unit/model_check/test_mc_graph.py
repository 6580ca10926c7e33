"""The explored graph: GraphML export, and recoverability (every reachable state can still
reach a quiescent, healthy one) -- on the clean core, on a constructed stuck controller and
on a hand-made graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from adapters.cli import main
from invariants.view import NO_LEADER, ControllerView, GlobalView, PartitionStateView, ZkView
from model_check.checks import default_checks
from model_check.counterexample import rebuild, replay, replay_doc
from model_check.graph import CANNOT_RECOVER, GraphTooLarge, StateGraph, unhealthy
from model_check.scenario import load, loads
from model_check.search import bfs

DELETION = """
description = "2 brokers; the topic is deleted"
brokers = 2
depth = 30
[world]
auto_leader_rebalance = false
[[topics]]
name = "t"
partitions = 1
replication_factor = 2
[[admin]]
op = "delete-topic"
topic = "t"
"""


@pytest.fixture
def deaf_to_deletion(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A controller that never acts on ``/admin/delete_topics`` (a test-only bug)."""
    from fsm.controller import controller
    from fsm.events import TopicDeletionRequest

    monkeypatch.setattr(controller, "_DISPATCH", {**controller._DISPATCH,
                                                  TopicDeletionRequest: lambda c, ev: None})
    yield


def test_the_clean_core_can_always_recover() -> None:
    for sc in (load("smoke"), loads(DELETION, name="deletion"), load("mutants-shutdown")):
        g = StateGraph()
        r = bfs(sc, default_checks(), graph=g)
        assert r.verdict == "pass", (sc.name, r.violation)
        assert len(g.order) == r.distinct_states
        assert g.g.number_of_edges() > len(g.order) - 1
        assert g.first_unrecoverable() is None
        assert any(g.g.nodes[fp]["healthy"] for fp in g.order)


def test_a_stuck_deletion_is_reported_with_its_shortest_trace(deaf_to_deletion) -> None:
    sc = loads(DELETION, name="deletion")
    checks = default_checks()
    r = bfs(sc, checks, graph=StateGraph())
    v = r.violation
    assert r.verdict == "violation" and v is not None and v.invariant == CANNOT_RECOVER
    assert "deletion of t is pending" in v.detail
    assert v.depth == 1  # right after the admin's request: nothing can ever delete it
    trace = rebuild(sc, v.setup, v.path, v.invariant, v.detail)
    assert trace.explored()[0].describe() == "admin #1"
    again = replay(replay_doc(trace), checks, out=lambda _line: None)
    assert again.reproduced  # judged again by exploring everything reachable from there


def test_the_same_trace_recovers_on_the_clean_core(deaf_to_deletion,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    sc = loads(DELETION, name="deletion")
    checks = default_checks()
    r = bfs(sc, checks, graph=StateGraph())
    trace = rebuild(sc, r.violation.setup, r.violation.path, "", "")
    monkeypatch.undo()
    doc = replay_doc(trace)
    doc["invariant"] = CANNOT_RECOVER
    assert replay(doc, checks, out=lambda _line: None).found is None


def _view(healthy: bool) -> GlobalView:
    leader = 1 if healthy else NO_LEADER
    zk = ZkView(controller=1, controller_epoch=1, brokers=((1, 5),),
                assignments=((("t", 0), (1,)),),
                partitions=((("t", 0), PartitionStateView(leader, 1, (1,), 1, 1)),))
    return GlobalView(zk=zk, controllers=(ControllerView(1, True, True, 1),), brokers=(),
                      pending=False)


def test_recoverability_on_a_hand_made_graph() -> None:
    """0 -> 1 -> 2 (healthy); 0 -> 3 <-> 4 (a cycle that is never healthy); 5 not expanded."""
    g = StateGraph()
    for fp, ok in ((0, False), (1, False), (2, True), (3, False), (4, False), (5, False)):
        g.add_state(fp, 0, _view(ok))
    for a, b in ((0, 1), (1, 2), (0, 3), (3, 4), (4, 3), (4, 5)):
        g.add_step(a, b, f"{a}->{b}")
    for fp in (0, 1, 2, 3, 4):
        g.mark_expanded(fp)
    assert g.first_unrecoverable() is None  # 3 and 4 may still get out through 5
    g = StateGraph()
    for fp, ok in ((0, False), (1, False), (2, True), (3, False), (4, False)):
        g.add_state(fp, 0, _view(ok))
    for a, b in ((0, 1), (1, 2), (0, 3), (3, 4), (4, 3)):
        g.add_step(a, b, f"{a}->{b}")
    for fp in range(5):
        g.mark_expanded(fp)
    stuck = g.first_unrecoverable()
    assert stuck is not None and stuck.fp == 3 and stuck.reachable == 1  # 4
    assert "no live leader" in stuck.reason
    assert g.mark_recoverable() == 2


def test_health() -> None:
    assert unhealthy(_view(True)) is None
    assert "no live leader" in (unhealthy(_view(False)) or "")
    assert unhealthy(GlobalView(pending=True)) == "something is in flight"
    no_controller = GlobalView(zk=ZkView(), controllers=(ControllerView(1, True, False, 0),),
                               brokers=_view(True).brokers, pending=False)
    assert unhealthy(no_controller) is None  # no broker is up
    from dataclasses import replace

    from invariants.view import BrokerView
    up = replace(no_controller, brokers=(BrokerView(1, True, "RUNNING", 5, 0),))
    assert "no controller" in (unhealthy(up) or "")


def test_the_graph_is_bounded() -> None:
    with pytest.raises(GraphTooLarge, match="--graph-limit"):
        bfs(load("smoke"), default_checks(), graph=StateGraph(limit=20))


def test_cli_writes_graphml(tmp_path: Path) -> None:
    out, report = tmp_path / "smoke.graphml", tmp_path / "r.json"
    r = CliRunner().invoke(main, ["check", "smoke", "--graph", str(out), "--json", str(report)])
    assert r.exit_code == 0, r.output
    assert "0 cannot recover" in r.output
    g = nx.read_graphml(out)
    doc = json.loads(report.read_text())
    assert g.number_of_nodes() == doc["distinct_states"] == doc["graph"]["states"]
    attrs = next(iter(g.nodes(data=True)))[1]
    assert {"depth", "healthy", "quiescent", "recoverable", "expanded"} <= set(attrs)
    assert all("action" in d for _, _, d in g.edges(data=True))
    r = CliRunner().invoke(main, ["check", "smoke", "--graph", str(out), "--graph-limit", "10"])
    assert r.exit_code == 2 and "--graph-limit" in r.output
