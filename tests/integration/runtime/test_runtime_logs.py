"""Issue 22, item 2: ``kcontrol controller`` writes its state changes to
``--log-dir``/state-change.log and not to the server log (stderr), as Kafka's log4j
configuration does; ``--log-config FILE`` replaces that setup."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from runtime_helpers import wait_until

from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.values import TopicAssignment

pytestmark = pytest.mark.integration


def _start(args: list[str], stderr: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    with stderr.open("wb") as err:
        return subprocess.Popen([sys.executable, "-m", "adapters.cli", "controller", *args],
                                env=env, stdout=subprocess.DEVNULL, stderr=err)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _create_topic(client: KazooClient) -> None:
    path = P.topic("logged")
    client.create(path, codec.encode(path, TopicAssignment.of({0: [1]})))


def test_state_changes_land_in_state_change_log_not_the_server_log(
        zk_chroot: str, zk_client: KazooClient, tmp_path: Path) -> None:
    server_log, state_log = tmp_path / "server.log", tmp_path / "logs" / "state-change.log"
    proc = _start(["--broker-id", "1", "--zookeeper", zk_chroot, "--session-timeout-ms", "4000",
                   "--log-dir", str(tmp_path / "logs")], server_log)
    try:
        wait_until(lambda: "became controller with epoch 1" in _read(server_log), 30,
                   "elected")
        _create_topic(zk_client)
        wait_until(lambda: "logged-0" in _read(state_log), 30, "logged-0's state changes")
    finally:
        _stop(proc)
    assert proc.returncode == 0
    changes = _read(state_log)
    assert "kcontrol.state.change:" in changes and "NewPartition" in changes
    server = _read(server_log)
    assert "became controller with epoch 1" in server
    assert "elected with epoch 1" in changes  # the state-change line of the election
    assert "kcontrol.state.change" not in server and "logged-0" not in server


def test_log_config_replaces_the_default_setup(zk_chroot: str, zk_client: KazooClient,
                                               tmp_path: Path) -> None:
    everything = tmp_path / "everything.log"
    config = {"version": 1,
              "formatters": {"plain": {"format": "CUSTOM %(name)s %(message)s"}},
              "handlers": {"file": {"class": "logging.FileHandler", "formatter": "plain",
                                    "filename": str(everything)}},
              "root": {"level": "INFO", "handlers": ["file"]}}
    config_file = tmp_path / "logging.json"
    config_file.write_text(json.dumps(config))
    server_log = tmp_path / "server.log"
    proc = _start(["--broker-id", "1", "--zookeeper", zk_chroot, "--session-timeout-ms", "4000",
                   "--log-dir", str(tmp_path / "logs"), "--log-config", str(config_file)],
                  server_log)
    try:
        wait_until(lambda: "became controller with epoch 1" in _read(everything), 30,
                   "elected")
        _create_topic(zk_client)
        wait_until(lambda: "CUSTOM kcontrol.state.change" in _read(everything), 30,
                   "the state changes in the configured file")
    finally:
        _stop(proc)
    assert proc.returncode == 0
    assert not (tmp_path / "logs").exists()  # the default setup is replaced, not added to
    assert "became controller" not in _read(server_log)
