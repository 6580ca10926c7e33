"""The world: determinism, canonical snapshots, restore independence, fingerprints, budgets."""

from __future__ import annotations

import subprocess
import sys

from model_check.world import CreateTopic, World, WorldConfig, fingerprint
from model_check.world import actions as A
from model_check.world.runner import Runner

CONFIG = WorldConfig.with_faults(
    3, admin=(CreateTopic("t", ((0, (1, 2, 3)), (1, (2, 3, 1)))),), crash=1, expire_controller=1)


def running() -> World:
    w = World(CONFIG)
    r = Runner(w, out=lambda _line: None)
    r.start_all()
    r.run()
    r.do(A.Action(A.ADMIN, 0, 0))
    r.run()
    return w


def test_run_reaches_quiescence_with_a_controller() -> None:
    w = running()
    assert w.is_quiescent()
    assert w.active_controller() == 1
    assert w.controllers[1].is_active


def test_same_choices_same_state() -> None:
    assert running().snapshot() == running().snapshot()


def test_restore_roundtrip_and_independence() -> None:
    w = running()
    snap = w.snapshot()
    copy = World.restore(snap, CONFIG)
    assert copy.snapshot() == snap
    copy.apply(A.Action(A.CRASH, 2))
    assert w.snapshot() == snap
    assert copy.snapshot() != snap


def test_every_enabled_action_applies_from_a_restored_copy() -> None:
    w = running()
    snap = w.snapshot()
    seen = set()
    for action in w.enabled_actions():
        child = World.restore(snap, CONFIG)
        lines = child.apply(action)
        assert lines, action
        seen.add(fingerprint(child.snapshot()))
    assert len(seen) > 1
    assert w.snapshot() == snap


def test_budgets_bound_faults() -> None:
    w = running()
    w.apply(A.Action(A.CRASH, 3))
    kinds = {a.kind for a in w.enabled_actions()}
    assert A.CRASH not in kinds
    assert A.RESTART not in kinds  # no restart budget in CONFIG


def test_controller_write_fails_after_its_session_expired() -> None:
    w = running()
    w.apply(A.Action(A.CRASH, 2))
    r = Runner(w, out=lambda _line: None)
    r.do(A.Action(A.NOTIFY, 1, "/brokers/ids"))
    r.do(A.Action(A.PROCESS, 1))
    assert 1 in w.writes
    r.do(A.Action(A.EXPIRE_CONTROLLER, 1))
    lines = r.world.apply(A.Action(A.COMMIT, 1))
    assert "FENCED" in lines[0] and any("resigned" in x for x in lines)
    assert not w.controllers[1].is_active


def test_fingerprint_is_stable_across_processes() -> None:
    code = ("from tests.unit.world.test_world import running; "
            "from model_check.world import fingerprint; print(fingerprint(running().snapshot()))")
    outs = set()
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={"PYTHONHASHSEED": seed, "PYTHONPATH": "."})
        outs.add(out.stdout.strip())
    assert outs == {str(fingerprint(running().snapshot()))}
