"""A local KRaft cluster of real processes: ``KRaftCluster`` elects a leader, survives the
active controller's kill -9 (a standby takes over in a later epoch, the killed one rejoins),
reports a node that cannot start with its log; ``kcontrol cluster up --mode kraft`` prints
the bootstrap servers once ready and, on SIGINT, stops every process it started."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.cluster.kraft_launcher import (
    PLAN_FILE,
    KRaftCluster,
    KRaftClusterError,
    has_broker_role,
)
from adapters.cluster.launcher import REPO_ROOT

pytestmark = pytest.mark.integration


def _brokers() -> int:
    """Brokers once the broker role runs (``kcontrol node``), else controllers only."""
    return 3 if has_broker_role() else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead; only its parent has not asked yet
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_a_standby_takes_over_from_a_killed_active_controller(tmp_path: Path) -> None:
    c = KRaftCluster(tmp_path / "k", 3, _brokers())
    try:
        first = c.up(timeout=30)
        assert first.leader in c.controllers and first.epoch >= 1
        c.kill(first.leader)
        after = c.wait_leader(30, exclude=(first.leader,))
        assert after.leader != first.leader and after.epoch > first.epoch
        c.restart(first.leader)
        again = c.wait_leader(30, min_epoch=after.epoch)
        assert c.statuses().keys() == set(c.controllers)
        assert again.epoch >= after.epoch
        if c.brokers:
            epochs = c.wait_brokers(timeout=30)
            assert set(epochs) == set(c.brokers)
    finally:
        lines = c.stop()
    pids = [n.pid for n in c.nodes() if n.pid is not None]
    assert pids and not any(_alive(p) for p in pids), lines


def test_a_node_that_cannot_start_is_reported_with_its_log(tmp_path: Path) -> None:
    c = KRaftCluster(tmp_path / "k", 3, 0,
                     overrides={"controller.quorum.election.timeout.ms": "soon"})
    with pytest.raises(KRaftClusterError,
                       match=r"exited with status|formatting storage failed") as info:
        c.up(timeout=30)
    assert "election" in str(info.value)  # the node's own words name what it refused
    assert not any(n.running for n in c.nodes())


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if sel.select(max(deadline - time.monotonic(), 0.0)):
                return proc.stdout.readline()
        raise TimeoutError(f"no ready line within {timeout:g} s")
    finally:
        sel.close()


def test_cluster_up_kraft_is_ready_then_stops_everything_on_sigint(tmp_path: Path) -> None:
    run_dir = tmp_path / "up"
    brokers = _brokers()
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "cluster", "up", "--mode", "kraft",
         "--controllers", "3", "--brokers", str(max(brokers, 1)), "--dir", str(run_dir),
         "--timeout", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO_ROOT),
        # a test suite started in the background of a non-interactive shell (``make test &``)
        # ignores SIGINT, and Python keeps an inherited SIG_IGN: give the child Ctrl-C back
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pids: list[int] = []
    try:
        line = _read_line(proc, 40).strip()
        plan = json.loads((run_dir / PLAN_FILE).read_text())
        pids = [n["pid"] for n in plan["nodes"] if n["pid"] is not None]
        assert len(pids) == 3 + brokers
        want = plan["bootstrap.servers"] if brokers else ",".join(
            f"127.0.0.1:{n['port']}" for n in plan["nodes"] if n["role"] == "controller")
        assert line == want
        assert all(_alive(p) for p in pids)
        tools = _tools(plan, brokers)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for p in pids:  # nothing may outlive the test, whatever happened
            if _alive(p):
                os.kill(p, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert f"cluster id:               {plan['cluster_id']}" in err
    assert f"controller.quorum.voters: {plan['controller.quorum.voters']}" in err
    assert "every node stopped" in err
    assert not [p for p in pids if _alive(p)]
    for command, output in tools.items():  # the commands it suggests work on the cluster
        assert f"  kcontrol {command}" in err
        assert output, command


def _kcontrol(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "adapters.cli", *args], capture_output=True,
                          text=True, timeout=30, cwd=str(REPO_ROOT))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _tools(plan: dict, brokers: int) -> dict[str, bool]:
    """Run the tools ``cluster up`` suggests against the live cluster: whether each said
    what it should."""
    controllers = ",".join(f"127.0.0.1:{n['port']}" for n in plan["nodes"]
                           if n["role"] == "controller")
    first_dir = Path(plan["nodes"][0]["config"]).with_suffix("")
    out = {
        f"quorum describe --bootstrap-controller {controllers} --status":
            "LeaderId:" in _kcontrol("quorum", "describe", "--bootstrap-controller",
                                     controllers, "--status"),
        f"metadata-shell --directory {first_dir} ls /image/topics/byName":
            _kcontrol("metadata-shell", "--directory", str(first_dir), "ls",
                      "/image/topics/byName") == "",
    }
    out[f"audit --kraft {first_dir.parent}"] = "invariants hold" in _kcontrol(
        "audit", "--kraft", str(first_dir.parent))
    if brokers:
        first_broker = plan["bootstrap.servers"].split(",")[0]
        out[f"cluster-id --bootstrap-server {first_broker}"] = plan["cluster_id"] in _kcontrol(
            "cluster-id", "--bootstrap-server", first_broker)
    return out
