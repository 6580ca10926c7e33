"""``kcontrol cluster up|status|down`` as a user runs them: its own ZooKeeper ensemble and a
broker, then nothing left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.ensemble.processes import process_alive

pytestmark = pytest.mark.integration


def kcontrol(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, "-m", "adapters.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def recorded_pids(directory: Path) -> list[int]:
    """Every pid the state files name: the brokers and the ensemble's servers."""
    pids = []
    cluster = json.loads((directory / "cluster.json").read_text())
    pids += [b["pid"] for b in cluster["brokers"] if b["pid"]]
    ensemble = directory / "zookeeper" / "ensemble.json"
    if ensemble.exists():
        pids += [s["pid"] for s in json.loads(ensemble.read_text())["servers"] if s["pid"]]
    return pids


def test_up_status_down_leaves_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    log_config = tmp_path / "logging.json"  # every line, state changes too, on stderr
    log_config.write_text(json.dumps({
        "version": 1, "formatters": {"f": {"format": "CFG %(name)s: %(message)s"}},
        "handlers": {"err": {"class": "logging.StreamHandler", "formatter": "f",
                             "stream": "ext://sys.stderr"}},
        "root": {"level": "INFO", "handlers": ["err"]}}))
    try:
        up = kcontrol("cluster", "up", "--brokers", "2", "--dir", str(directory),
                      "--session-timeout-ms", "4000", "--log-config", str(log_config))
        assert up.returncode == 0, up.stderr
        connect = up.stdout.strip().splitlines()[-1]
        assert connect.count("127.0.0.1:") == 3  # the embedded 3-server ensemble
        assert "controller: broker" in up.stderr and "PLAINTEXT" in up.stderr
        pids = recorded_pids(directory)
        assert len(pids) == 5 and all(process_alive(p) for p in pids)

        again = kcontrol("cluster", "up", "--dir", str(directory))
        assert again.returncode == 1 and "already holds a running cluster" in again.stderr

        status = kcontrol("cluster", "status", "--dir", str(directory))
        assert status.returncode == 0, status.stdout + status.stderr
        assert "controller: broker" in status.stdout
        for bid in (1, 2):  # --log-config reached every broker and replaced the default
            assert "CFG kcontrol.broker.state.change: " in (
                directory / f"broker-{bid}.log").read_text(errors="replace")
            assert not (directory / f"broker-{bid}").exists()
    finally:
        down = kcontrol("cluster", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stderr
    assert down.stdout.count(": stopped") == 5, down.stdout
    assert not any(process_alive(p) for p in pids)
    assert recorded_pids(directory) == []
    status = kcontrol("cluster", "status", "--dir", str(directory))
    assert status.returncode == 1
    nothing = kcontrol("cluster", "down", "--dir", str(tmp_path / "none"))
    assert nothing.returncode == 0 and "holds no cluster" in nothing.stdout
