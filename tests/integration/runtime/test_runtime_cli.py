"""``kcontrol controller``: bad connect strings, an unreachable ensemble, and two candidates
racing for /controller on the real ensemble until SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient
from runtime_helpers import controller_znode, wait_until

from adapters.cli import main

pytestmark = pytest.mark.integration


def test_bad_hosts_and_unreachable_ensemble() -> None:
    r = CliRunner().invoke(main, ["controller", "--broker-id", "1", "--zookeeper", "no port:x"])
    assert r.exit_code != 0 and "--zookeeper" in r.output
    r = CliRunner().invoke(main, ["controller", "--broker-id", "1", "--zookeeper",
                                  "127.0.0.1:1", "--connect-timeout", "1"])
    assert r.exit_code == 1
    assert "cannot connect to ZooKeeper at '127.0.0.1:1' within 1 s" in r.output


def test_two_candidates_race(zk_chroot: str, zk_client: KazooClient, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [subprocess.Popen([sys.executable, "-m", "adapters.cli", "controller",
                               "--broker-id", str(b), "--zookeeper", zk_chroot,
                               "--session-timeout-ms", "4000",
                               "--log-dir", str(tmp_path / f"logs-{b}")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for b in (1, 2)]
    try:
        wait_until(lambda: zk_client.exists("/controller"), 30, "a controller elected")
        first, epoch, _ = controller_znode(zk_client)
        assert first in (1, 2) and epoch == 1
        loser = procs[first - 1]
        loser.send_signal(signal.SIGTERM)
        _, err = loser.communicate(timeout=30)
        assert loser.returncode == 0, err[-2000:]
        assert "became controller with epoch 1" in err
        # the state-change log is in --log-dir, not on stderr
        changes = (tmp_path / f"logs-{first}" / "state-change.log").read_text()
        assert "elected with epoch 1" in changes and "elected with epoch" not in err
        wait_until(lambda: controller_znode(zk_client)[:2] == (3 - first, 2), 30,
                   "the other candidate takes over with epoch 2")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.communicate(timeout=30)
    assert all(p.returncode == 0 for p in procs)
