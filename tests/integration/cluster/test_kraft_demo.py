"""The KRaft stage of ``make run`` (``kcontrol cluster demo --mode kraft``) as a person runs
it: every step narrated with what it observed, the failover to a different controller in a
later epoch, exit 0, and no process of it left behind. Once the broker role is built, no step
may be skipped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cluster.kraft_launcher import PLAN_FILE, has_broker_role
from adapters.cluster.launcher import REPO_ROOT

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_kraft_demo_runs_every_step_and_leaves_nothing_running(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "cluster", "demo", "--mode", "kraft",
         "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=str(REPO_ROOT), env=env)
    out = done.stdout + done.stderr
    plan = json.loads((tmp_path / "kraft" / PLAN_FILE).read_text())
    left = [n["pid"] for n in plan["nodes"] if n["pid"] is not None and _alive(n["pid"])]
    assert not left, out
    assert done.returncode == 0, out
    for step in range(1, 7):
        assert f"KRaft step {step}:" in out
    assert re.search(r"controller (30\d\d) is the active controller .*epoch (\d+)", out)
    moved = re.search(r"active controller: (\d+) -> (\d+), epoch (\d+) -> (\d+), "
                      r"([\d.]+) s after the kill", out)
    assert moved, out
    assert moved[1] != moved[2] and int(moved[4]) > int(moved[3])
    assert "everything it started is stopped" in out
    if has_broker_role():
        assert "skipped:" not in out, out
        assert len(re.findall(r"broker \d: registered, broker epoch \d+, unfenced", out)) == 3
        assert re.search(r"leader of kraft-demo-\d: broker (\d) -> broker (\d)", out), out
        assert "snapshots: " in out and ".checkpoint" in out
