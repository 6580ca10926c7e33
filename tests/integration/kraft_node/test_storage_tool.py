"""``kcontrol storage`` as a user runs it: the installed console script in a subprocess over
temporary directories -- random-uuid, format, format again (refused), --ignore-formatted,
another cluster id (refused), info; and ``kcontrol node`` refusing unformatted storage, then
running a formatted controller until SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.kraft_node.meta_properties import check_cluster_id

pytestmark = pytest.mark.integration

KCONTROL = Path(sys.executable).with_name("kcontrol")
TIMEOUT_S = 30


def kcontrol(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KCONTROL), *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def test_the_storage_tool_end_to_end(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text(
        "process.roles=broker,controller\nnode.id=1\n"
        "controller.quorum.voters=1@127.0.0.1:19093\ncontroller.listener.names=CONTROLLER\n"
        "listeners=PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093\n"
        f"log.dirs={tmp_path}/logs-a,{tmp_path}/logs-b\n"
        f"metadata.log.dir={tmp_path}/metadata\n")
    dirs = [tmp_path / "logs-a", tmp_path / "logs-b", tmp_path / "metadata"]

    r = kcontrol("storage", "random-uuid")
    assert r.returncode == 0, r.stderr
    cluster_id = r.stdout.strip()
    assert check_cluster_id(cluster_id) == cluster_id
    other = kcontrol("storage", "random-uuid").stdout.strip()
    assert other != cluster_id

    r = kcontrol("node", "--config", str(config), "--log-dir", str(tmp_path / "node-logs"))
    assert r.returncode == 1
    assert f"{dirs[0]}: does not exist" in r.stderr and "kcontrol storage format" in r.stderr

    r = kcontrol("storage", "format", "--config", str(config), "--cluster-id", cluster_id)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"Formatting {d} (cluster.id={cluster_id}, node.id=1)" for d in dirs]
    for d in dirs:
        assert f"cluster.id={cluster_id}\nnode.id=1\nversion=1\n" in \
            (d / "meta.properties").read_text()

    r = kcontrol("storage", "format", "--config", str(config), "--cluster-id", cluster_id)
    assert r.returncode == 1 and "already formatted" in r.stderr

    r = kcontrol("storage", "format", "-c", str(config), "-t", cluster_id, "--ignore-formatted")
    assert r.returncode == 0, r.stderr
    assert all(line.startswith("Skipping ") for line in r.stdout.splitlines()[:3])

    r = kcontrol("storage", "format", "-c", str(config), "-t", other, "--ignore-formatted")
    assert r.returncode == 1
    assert f"formatted for cluster.id {cluster_id}, not {other}" in r.stderr

    r = kcontrol("storage", "info", "--config", str(config))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == f"OK: 3 directories formatted (cluster.id={cluster_id}, node.id=1)."

    (dirs[1] / "meta.properties").unlink()
    r = kcontrol("storage", "info", "--config", str(config))
    assert r.returncode == 1
    assert f"{dirs[1]} (log.dirs): PROBLEM: no meta.properties (not formatted)" in r.stdout

    r = kcontrol("storage", "info", "--config", str(config), "--override", "node.id=x")
    assert r.returncode == 2
    assert r.stderr.strip() == "kcontrol storage info: error: node.id: 'x' is not an integer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kcontrol_node_runs_a_formatted_controller_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = _free_port()
    config = tmp_path / "controller.properties"
    config.write_text(
        f"process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:{port}\n"
        f"controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:{port}\n"
        f"log.dirs={tmp_path}/data\n")
    cluster_id = "MkU3OEVBNTcwNTJENDM2Qg"
    assert kcontrol("storage", "format", "-c", str(config), "-t", cluster_id).returncode == 0
    log = tmp_path / "node.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(KCONTROL), "node", "-c", str(config), "--log-dir",
                                 str(tmp_path / "logs")], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while "candidate -> leader" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        text = log.read_text()
        assert (f"kcontrol.node: node 1 roles=controller cluster.id={cluster_id} "
                f"listeners=CONTROLLER://127.0.0.1:{port} voters=1@127.0.0.1:{port}") in text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
