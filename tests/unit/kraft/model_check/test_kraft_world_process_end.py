"""The KRaft world ends a broker's process through its core: a crash hands the dying core
``Crashed`` and an exit ``Exited`` -- the lifecycle table's moves into NOT_RUNNING, traced and
reached -- before a fresh core takes its place; what it led stays on its disk."""

from __future__ import annotations

from typing import Any

from fsm.kraft.broker.effects import Exit, LifecycleChange
from fsm.kraft.broker.events import Crashed, Exited
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState as S
from model_check.kraft.scenario import load_kraft
from model_check.kraft.search import start
from model_check.kraft.world import KAction, KRaftWorld


def _world(name: str) -> tuple[KRaftWorld, list[tuple[str, Any, list[Any]]]]:
    world = start(load_kraft(name)).snapshot
    seen: list[tuple[str, Any, list[Any]]] = []
    world.trace = lambda who, event, effects: seen.append((who, event, list(effects)))
    world.reached = set()
    return world, seen


def test_a_crash_takes_the_dying_cores_move_to_not_running() -> None:
    world, seen = _world("kraft-smoke")
    dying = world.brokers[2]
    local = {k for k, _ in dying.replicas()}
    assert dying.state is S.RUNNING and local
    world.apply(KAction("crash", 2))
    assert seen == [("b2", Crashed(), [LifecycleChange(S.RUNNING, S.NOT_RUNNING)])]
    assert dying.state is S.NOT_RUNNING and dying.broker_epoch is None
    assert world.brokers[2] is not dying and world.brokers[2].state is S.NOT_RUNNING
    assert world.disk[2] == local
    assert world.reached is not None
    assert ("kraft-broker-lifecycle", "RUNNING", "NOT_RUNNING") in world.reached
    assert ("broker-event", "Crashed") in world.reached


def test_an_exit_after_shutting_down_takes_the_move_too() -> None:
    world, seen = _world("kraft-stop")  # controlled shutdown off: SIGTERM exits at once
    world.apply(KAction("admin", 0))
    assert [(who, type(e).__name__, effects) for who, e, effects in seen] == [
        ("b2", "SigTerm", [LifecycleChange(S.RUNNING, S.SHUTTING_DOWN), Exit()]),
        ("b2", "Exited", [LifecycleChange(S.SHUTTING_DOWN, S.NOT_RUNNING)]),
    ]
    assert seen[1][1] == Exited()
    assert world.brokers[2].state is S.NOT_RUNNING and not world.alive(2)
    assert world.reached is not None
    assert ("kraft-broker-lifecycle", "SHUTTING_DOWN", "NOT_RUNNING") in world.reached
