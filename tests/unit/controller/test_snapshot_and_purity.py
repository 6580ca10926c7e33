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


_BUILTIN_SCALARS = (int, str, bool, type(None))


def _walk_builtins(value: object, path: str = "snapshot") -> None:
    """Only exact builtins: tuples of ints, strs, bools and None (no subclasses: a
    NamedTuple or an Enum would pickle through Python-level ``__reduce_ex__``)."""
    if type(value) is tuple:
        for i, v in enumerate(value):
            _walk_builtins(v, f"{path}[{i}]")
    else:
        assert type(value) in _BUILTIN_SCALARS, f"{path}: {type(value).__name__} {value!r}"


def _busy_controller() -> Controller:
    """Endpoints and racks, a reassignment in flight, a topic being deleted, a write in
    flight holding decisions and ops with dataclass data."""
    from fsm.events import ReassignmentRequest, WriteResult
    from fsm.values import BrokerInfo, Endpoint

    ctl = active(live=(1, 2, 3, 4), topics={"t": {0: (1, 2), 1: (2, 3)}, "d": {0: (3,)}})
    eps = (Endpoint("PLAINTEXT", "h1", 9092), Endpoint("CONTROLLER", "h1", 9093, "SSL"))
    broker_change(ctl, 2, 3, 4)  # broker 1 fails
    from fsm.events import BrokerChange
    feed(ctl, BrokerChange((BrokerInfo(1, 500, eps, "r1"), BrokerInfo(2, 102),
                            BrokerInfo(3, 103), BrokerInfo(4, 104))))
    ctl.handle(TopicDeletionRequest(frozenset({"d"})))
    ctl.handle(WriteResult(ctl.awaiting_write))
    ctl.handle(ReassignmentRequest(((("t", 0), (3, 4)),)))  # expand: write in flight
    assert ctl.awaiting_write is not None
    return ctl


def test_snapshot_holds_only_builtins() -> None:
    for ctl in (active(), _busy_controller(), loaded(list(TOPICS), [1, 2, 3], list(range(6)))):
        snap = ctl.snapshot()
        _walk_builtins(snap)
        copy = Controller.restore(pickle.loads(pickle.dumps(snap, 5)), ctl.config)
        assert copy.snapshot() == snap
        _walk_builtins(copy.snapshot())


def test_restored_controller_behaves_like_the_original() -> None:
    from fsm.events import WriteResult

    ctl = _busy_controller()
    copy = Controller.restore(pickle.loads(pickle.dumps(ctl.snapshot(), 5)), ctl.config)
    assert copy.live_brokers() == ctl.live_brokers()
    assert copy.leader_and_isr(("t", 1)) == ctl.leader_and_isr(("t", 1))
    assert copy.replica_state(("t", 0), 3) is ctl.replica_state(("t", 0), 3)
    assert copy.partition_state(("t", 0)) is ctl.partition_state(("t", 0))
    for c in (ctl, copy):  # the same effects from here on
        c.out = feed(c, WriteResult(c.awaiting_write))  # expansion: znode, then epoch
        c.out += broker_change(c, 1, 2, 4)
    assert copy.out == ctl.out
    assert copy.snapshot() == ctl.snapshot()


def test_state_path_matches_zk_paths() -> None:
    from fsm import zk_paths
    from fsm.controller.controller import state_path

    for t, p in (("t", 0), ("topic-0001", 999), ("a.b_c-d", 12)):
        assert state_path(t, p) == zk_paths.partition_state(t, p)
