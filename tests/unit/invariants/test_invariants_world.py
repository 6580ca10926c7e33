"""The catalogue against the simulated world: every shipped transcript keeps every state and
transition invariant at every step (and the quiescent ones whenever the world is quiescent);
a world driven to quiescence passes ``check_quiescent``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import invariants as I
from model_check.world import CreateTopic, DeleteTopic, Reassign, World, WorldConfig
from model_check.world import actions as A
from model_check.world.global_view import global_view
from model_check.world.runner import Runner
from tests.scenarios.interpreter import Interpreter, parse

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
TRANSCRIPTS = sorted(p for p in SCENARIOS.glob("*.txt") if not p.name.startswith("kraft_"))


class Checked:
    """Wraps ``World.apply``: every step is checked against the whole catalogue."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.steps = 0
        self.quiescent = 0
        self.violations: list[str] = []
        original = World.apply

        def apply(world: World, action: A.Action) -> list[str]:
            before = global_view(world)
            lines = original(world, action)
            after = global_view(world)
            self.steps += 1
            found = I.check_state(after) + I.check_transition(before, after)
            if not after.pending:
                self.quiescent += 1
                found += I.check_quiescent(after)
            self.violations += [f"{action.describe()}: {v}" for v in found]
            return lines

        monkeypatch.setattr(World, "apply", apply)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcript_keeps_every_invariant(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked = Checked(monkeypatch)
    interp = Interpreter()
    for _, command, _ in parse(path.read_text()):
        if command is not None:
            interp.execute(command)
    assert checked.steps > 0
    assert checked.violations == []
    final = global_view(interp.w)
    assert I.check_state(final) == []


def run_to_quiescence(admin: tuple, faults: dict[str, int] | None = None) -> World:
    world = World(WorldConfig.with_faults(3, admin=admin, **(faults or {})))
    runner = Runner(world, out=lambda _line: None)
    runner.start_all()
    runner.run()
    for i in range(len(admin)):
        runner.do(A.Action(A.ADMIN, 0, i))
        runner.run()
    return world


def test_world_driven_to_quiescence_passes_check_quiescent() -> None:
    admin = (CreateTopic("t", ((0, (1, 2, 3)), (1, (2, 3, 1)))),
             CreateTopic("d", ((0, (3, 1)),)),
             Reassign(((("t", 1), (1, 2)),)),
             DeleteTopic("d"))
    world = run_to_quiescence(admin)
    view = global_view(world)
    assert view.pending is False and world.is_quiescent()
    assert view.deleted_topics == ("d",)
    assert view.reassign_targets == ((("t", 1), (1, 2)),)
    assert view.zk is not None and view.zk.assignment[("t", 1)] == (1, 2)
    assert I.check_state(view) == [] and I.check_quiescent(view) == []


def test_quiescent_checks_see_a_broker_left_behind() -> None:
    world = run_to_quiescence((CreateTopic("t", ((0, (1, 2, 3)),)),))
    view = global_view(world)
    assert I.check_quiescent(view) == []
    # the same cluster, but broker 3 never got the leadership and metadata news
    stale = replace(view, brokers=tuple(
        replace(b, replicas=(), metadata=None) if b.broker_id == 3 else b
        for b in view.brokers or ()))
    assert {v.invariant for v in I.check_quiescent(stale)} == {"replicas_follow_zookeeper"}


def test_global_view_of_a_fresh_world() -> None:
    view = global_view(World(WorldConfig(brokers=2)))
    assert view.zk is not None and view.zk.controller is None and view.zk.controller_epoch == 0
    assert [b.up for b in view.brokers or ()] == [False, False]
    assert I.check_state(view) == []


def test_reassignment_completion_races_a_leader_isr_change() -> None:
    """Reproduces the partial commit found by random walks (see the lead's report): the
    controller decides the completion (state ISR 3,2 epoch 1 @v0; topic znode = 2,3; delete
    the reassignment znode); leader 3 changes the ISR to 3,1 before the commit; the state op
    fails, the other two commit: ISR 3,1 is outside replicas 2,3 for good."""
    interp = Interpreter()
    for cmd in ("world brokers=3", "start all", "run", "create-topic t 0:3,2,1", "run",
                "reassign t-0:2,3", "step 2", "isr 3 t-0 3,1", "run"):
        interp.execute(cmd)
    assert I.check_state(global_view(interp.w)) == []


def _interpret(*commands: str) -> Interpreter:
    interp = Interpreter()
    for cmd in commands:
        interp.execute(cmd)
    return interp


def test_a_reassignment_the_controller_refused_is_not_judged() -> None:
    """Broker 3 is down: the controller refuses the move to 3,1 and removes the request from
    ``/admin/reassign_partitions``; the partition keeps 1,2 and nothing is "finished"."""
    interp = _interpret("world brokers=3", "start all", "run", "create-topic t 0:1,2", "run",
                        "crash 3", "run", "reassign t-0:3,1", "run")
    view = global_view(interp.w)
    assert view.pending is False
    assert view.zk is not None and view.zk.assignment[("t", 0)] == (1, 2)
    assert view.zk.reassignments_pending == () and view.reassign_targets == ()
    assert I.check_quiescent(view) == []
    # had the world taken the admin's request for an accepted one, it would be reported
    judged = replace(view, reassign_targets=((("t", 0), (3, 1)),))
    assert [v.invariant for v in I.check_quiescent(judged)] == \
        ["finished_reassignment_has_target_replicas"]


def test_an_accepted_reassignment_is_recorded_and_judged() -> None:
    interp = _interpret("world brokers=3", "start all", "run", "create-topic t 0:1,2,3",
                        "run", "reassign t-0:3,1", "run")
    view = global_view(interp.w)
    assert view.pending is False and view.reassign_targets == ((("t", 0), (3, 1)),)
    assert view.zk is not None and view.zk.assignment[("t", 0)] == (3, 1)
    assert I.check_quiescent(view) == []


def test_the_reassign_tool_refuses_an_unknown_topic_or_partition() -> None:
    for target in ("u-0:1,2", "t-5:1,2"):
        interp = _interpret("world brokers=3", "start all", "run", "create-topic t 0:1,2",
                            "run", f"reassign {target}")
        assert interp.w.zk.get("/admin/reassign_partitions") is None, target
        assert global_view(interp.w).reassign_targets == ()
