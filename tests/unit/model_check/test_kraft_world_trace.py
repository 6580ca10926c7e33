"""The KRaft world's trace hook: told of every event a core handles and its effects, and no
part of the state (``key`` and copies are unchanged by it)."""

from __future__ import annotations

from typing import Any

from fsm.kraft.broker.events import Start
from fsm.kraft.controller.events import AppendRecords, ControllerRequest
from model_check.kraft.scenario import KRaftScenario
from model_check.kraft.world import KAction, KRaftWorld


def _world() -> KRaftWorld:
    return KRaftWorld.fresh(KRaftScenario("t", brokers=1, controllers=1, init="empty"))


def test_the_trace_sees_events_and_effects_and_is_no_part_of_the_state() -> None:
    plain, traced = _world(), _world()
    seen: list[tuple[str, Any, tuple[Any, ...]]] = []
    traced.trace = lambda who, event, effects: seen.append((who, event, tuple(effects)))
    for w in (plain, traced):
        w.apply(KAction("start", 1))
        w.apply(KAction("deliver-request", 1))
    assert [(who, type(e)) for who, e, _ in seen] == [("b1", Start), ("c0", ControllerRequest)]
    assert any(isinstance(f, AppendRecords) for f in seen[1][2])
    assert plain.key() == traced.key()
    copy = traced.snapshot()
    assert copy.trace is traced.trace
    assert copy.key() == traced.key()
