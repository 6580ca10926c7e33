"""``kcontrol chaos`` as a user runs it: its own 3-server ensemble and 3 brokers, 20 faults
that cover every kind, and a clean verdict -- no audit violation, no loss, nothing stuck --
with the figures in the ``--json`` report and nothing left running afterwards."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapters.chaos.plan import FaultKind, make_plan
from adapters.ensemble.processes import process_alive

pytestmark = pytest.mark.integration

FAULTS = 20
SEED = 11
SESSION_MS = 4000
TIMEOUT_S = 900


def _die_with_pytest() -> None:
    # The campaign gets SIGTERM (and stops its cluster) should pytest die.
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))


def processes_in(directory: Path) -> list[int]:
    """Live processes working in ``directory`` (brokers run there, ZooKeeper servers in
    subdirectories of it)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (cwd == str(directory) or cwd.startswith(f"{directory}/")) \
                and process_alive(int(entry.name)):
            out.append(int(entry.name))
    return out


REPORT_KEYS = ("faults", "faults_by_kind", "violations", "lost", "recovery_seconds", "stuck",
               "seed")


def run_chaos(report_path: Path, timeout_s: float, *args: str
              ) -> tuple[subprocess.CompletedProcess[str], str, dict[str, Any]]:
    """``kcontrol chaos ARGS --json REPORT`` in a child process (SIGTERM should pytest die):
    the finished process, its output, the report it wrote."""
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "chaos", *args, "--json", str(report_path)],
        env=env, capture_output=True, text=True, timeout=timeout_s,
        preexec_fn=_die_with_pytest)
    output = done.stdout + done.stderr
    assert report_path.exists(), output[-4000:]
    return done, output, json.loads(report_path.read_text())


def test_short_campaign_every_fault_kind_is_clean(tmp_path: Path) -> None:
    kinds = {step.fault.kind for step in make_plan(SEED, FAULTS, 3)}
    assert kinds == set(FaultKind), "the plan must cover every fault kind"
    directory = tmp_path / "cluster"
    done, output, report = run_chaos(
        tmp_path / "chaos.json", TIMEOUT_S, "--brokers", "3", "--faults", str(FAULTS),
        "--seed", str(SEED), "--session-timeout-ms", str(SESSION_MS), "--dir", str(directory))
    for key in REPORT_KEYS:
        assert key in report, f"{key} missing from the JSON report"
    assert report["violations"] == [], output[-4000:]
    assert report["lost"] == [], output[-4000:]
    assert report["stuck"] == [], output[-4000:]
    assert report["aborted"] is None, output[-4000:]
    assert report["faults"] == FAULTS
    assert report["seed"] == SEED
    assert set(report["faults_by_kind"]) == {k.value for k in FaultKind}
    assert sum(report["faults_by_kind"].values()) == FAULTS
    rec = report["recovery_seconds"]
    assert rec["count"] == FAULTS
    assert 0 <= rec["p50"] <= rec["p99"] <= rec["max"]
    # A pause is over only once the ensemble expired the broker's session.
    paused = [s for s in report["steps"] if s["kind"].startswith("pause-")]
    assert paused and all(any(n.startswith("paused ") and float(n.split()[1][:-1])
                              >= SESSION_MS / 1000.0 for n in s["notes"]) for s in paused)
    assert done.returncode == 0, output[-4000:]
    assert "PASS" in done.stdout
    assert processes_in(directory) == [], "processes left running"
