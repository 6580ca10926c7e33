"""``kcontrol chaos --mode kraft`` as a user runs it: 3 controllers and 3 brokers, 12 faults
-- the first round of the plan, every kind once (those the machine cannot do are left out,
and the report says why) -- and a clean verdict: no violation, no lost topic, no lost
committed record, nothing stuck, every recovery within the target; the figures in the
``--json`` report, and no process or mount left afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.kraft_chaos.plan import KFaultKind, make_plan
from tests.integration.chaos.test_chaos_campaign import REPORT_KEYS, processes_in, run_chaos

pytestmark = pytest.mark.integration

FAULTS = 12
SEED = 7
SESSION_MS = 4000
FETCH_MS = 1500
TIMEOUT_S = 600


def mounts_under(directory: Path) -> list[str]:
    with open("/proc/mounts") as f:
        return [line.split()[1] for line in f if line.split()[1].startswith(str(directory))]


def test_short_kraft_campaign_every_fault_kind_is_clean(tmp_path: Path) -> None:
    assert {s.fault.kind for s in make_plan(SEED, FAULTS, 3)} == set(KFaultKind)
    directory = tmp_path / "cluster"
    done, output, report = run_chaos(
        tmp_path / "kraft-chaos.json", TIMEOUT_S, "--mode", "kraft", "--brokers", "3",
        "--faults", str(FAULTS), "--seed", str(SEED), "--session-timeout-ms", str(SESSION_MS),
        "--fetch-timeout-ms", str(FETCH_MS), "--dir", str(directory))
    for key in (*REPORT_KEYS, "actions_by_kind", "machine", "steps", "mode",
                "lost_committed_records", "recovery_seconds_by_kind", "recovery_over_target"):
        assert key in report, f"{key} missing from the JSON report"
    assert report["mode"] == "kraft" and report["seed"] == SEED
    assert report["violations"] == [], output[-4000:]
    assert report["lost"] == [], output[-4000:]
    assert report["lost_committed_records"] == [], output[-4000:]
    assert report["stuck"] == [], output[-4000:]
    assert report["recovery_over_target"] == [], output[-4000:]
    assert report["aborted"] is None, output[-4000:]
    assert report["faults"] == FAULTS
    expected = {k.value for k in KFaultKind} - set(report["left_out"])
    assert set(report["faults_by_kind"]) == expected
    assert report["recovery_seconds"]["count"] == FAULTS
    assert report["ledger"]["records"] > 0
    assert sum(report["actions_by_kind"].values()) >= FAULTS
    paused = [s for s in report["steps"] if s["kind"].startswith("pause-")]
    assert paused and all(any(n.startswith("paused ") and float(n.split()[1][:-1])
                              >= SESSION_MS / 1000.0 for n in s["notes"]) for s in paused)
    assert done.returncode == 0, output[-4000:]
    assert "PASS" in output
    assert processes_in(directory) == [], "processes left running"
    assert mounts_under(tmp_path) == [], "a filesystem left mounted"
