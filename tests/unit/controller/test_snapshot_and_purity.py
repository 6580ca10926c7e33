"""Canonical snapshots, restore, and the purity of fsm/."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.controller import Controller, ControllerConfig
from fsm.events import ClusterLoaded, ControllerChange, TopicDeletionRequest
from fsm.values import ClusterSnapshot, TopicAssignment

from .harness import active, broker_change, brokers, feed, state

CFG = ControllerConfig(broker_id=1)
TOPICS = {"a": {0: (1, 2), 1: (2, 3)}, "b": {0: (3, 1, 2)}, "c": {0: (2,), 1: (1, 3), 2: (3,)}}


def loaded(order: list[str], live: list[int], state_order: list[int]) -> Controller:
    ctl = Controller(CFG)
    feed(ctl, ControllerChange(None, 0, 0))
    states = [((t, p), state(r[0], r)) for t in TOPICS for p, r in TOPICS[t].items()]
    states = [states[i] for i in state_order]
    snap = ClusterSnapshot(
        live_brokers=brokers(*live),
        topics=tuple((t, TopicAssignment.of(TOPICS[t])) for t in order),
        partition_states=tuple(states))
    feed(ctl, ClusterLoaded(snap))
    return ctl


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(TOPICS)), st.permutations([1, 2, 3]),
       st.permutations(list(range(6))))
def test_snapshot_is_canonical(order, live, state_order) -> None:
    a = loaded(list(TOPICS), [1, 2, 3], list(range(6)))
    b = loaded(order, live, state_order)
    assert a.snapshot() == b.snapshot()
    broker_change(a, 1, 2)
    broker_change(b, 2, 1)
    assert a.snapshot() == b.snapshot()


def test_restore_round_trip_and_independence() -> None:
    ctl = active()
    broker_change(ctl, 1, 2)
    ctl.handle(TopicDeletionRequest(frozenset({"ghost"})))  # a write in flight
    snap = ctl.snapshot()
    pickle.dumps(snap)
    copy = Controller.restore(snap, CFG)
    assert copy.snapshot() == snap
    assert copy.awaiting_write == ctl.awaiting_write
    from fsm.events import WriteResult
    copy.handle(WriteResult(copy.awaiting_write))
    broker_change(copy, 1, 2, 3)
    assert ctl.snapshot() == snap  # the original is untouched


FORBIDDEN = {"adapters", "model_check", "kazoo", "socket", "threading", "time", "random",
             "asyncio", "subprocess", "datetime"}


def test_fsm_imports_nothing_impure() -> None:
    root = Path(__file__).resolve().parents[3] / "fsm"
    bad = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            bad += [f"{path}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert not bad, bad
