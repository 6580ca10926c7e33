"""``run_node`` in a subprocess: a controller-only node starts from its ``NodeSettings``,
serves its listener, elects itself (one voter), exports Kafka's KRaft controller metrics
(ActiveControllerCount 1 once it leads) and stops with exit status 0 on SIGTERM; a node whose
listener port is taken exits with status 1 and a line naming the failure."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapters.ensemble.processes import free_ports
from adapters.kraft_node.wire_client import WireClient, WireError
from fsm.raft.messages import DescribeQuorumRequest

pytestmark = pytest.mark.integration

PREFIX = "kafka_controller_KafkaController_"
NAMES = tuple(PREFIX + n for n in (
    "ActiveControllerCount", "ActiveBrokerCount", "FencedBrokerCount", "GlobalPartitionCount",
    "OfflinePartitionsCount", "LastAppliedRecordOffset", "LastCommittedRecordOffset",
    "MetadataErrorCount"))
ROOT = Path(__file__).absolute().parents[3]
WAIT_S = 15.0
SCRIPT = """
import sys
from pathlib import Path
from adapters.kraft_node.runtime import run_node
from adapters.kraft_node.settings import NodeSettings
port, admin, directory = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
metrics = int(sys.argv[4])
settings = NodeSettings(
    process_roles=frozenset({"controller"}), node_id=1,
    quorum_voters={1: ("127.0.0.1", port)}, controller_listener_names=("CONTROLLER",),
    listeners={"CONTROLLER": ("127.0.0.1", port)}, metadata_log_dir=directory,
    log_dirs=(directory,), admin_port=admin, metrics_port=metrics,
    controller_quorum_election_timeout_ms=300, controller_quorum_fetch_timeout_ms=600)
sys.exit(run_node(settings, "MkU3OEVBNTcwNTJENDM2Qk"))
"""


def start(tmp_path: Path, port: int, admin: int, metrics: int = 0
          ) -> subprocess.Popen[bytes]:
    with open(tmp_path / "node.log", "ab") as err:
        return subprocess.Popen([sys.executable, "-c", SCRIPT, str(port), str(admin),
                                 str(tmp_path / "meta"), str(metrics)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err)


def scrape(port: int) -> dict[str, float]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return {}
    return {s.name: s.value for fam in text_string_to_metric_families(text)
            for s in fam.samples}


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def leader_of(port: int) -> int | None:
    try:
        with WireClient("127.0.0.1", port, timeout=2) as c:
            return c.call_value(DescribeQuorumRequest()).leader_id  # type: ignore[no-any-return]
    except WireError:
        return None


def test_a_controller_starts_leads_and_stops_on_sigterm(tmp_path: Path) -> None:
    port, admin, metrics = free_ports(3)
    proc = start(tmp_path, port, admin, metrics)
    try:
        deadline = time.monotonic() + WAIT_S
        while leader_of(port) != 1 or \
                scrape(metrics).get(PREFIX + "ActiveControllerCount") != 1:
            assert proc.poll() is None, (tmp_path / "node.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "node.log").read_text()
            time.sleep(0.05)
        figures = scrape(metrics)
        assert set(NAMES) <= set(figures), figures
        assert figures[PREFIX + "LastCommittedRecordOffset"] >= 0
        assert figures[PREFIX + "FencedBrokerCount"] == 0
        assert figures[PREFIX + "MetadataErrorCount"] == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT_S) == 0
        text = (tmp_path / "node.log").read_text()
        assert "node 1 (controller) of cluster MkU3OEVBNTcwNTJENDM2Qk starting" in text
        assert "node 1 stopped (exit status 0)" in text
        assert (tmp_path / "meta" / "__cluster_metadata-0").is_dir()
    finally:
        stop(proc)


def test_a_taken_port_fails_the_start_with_status_1(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        (admin,) = free_ports(1)
        proc = start(tmp_path, port, admin)
        try:
            assert proc.wait(WAIT_S) == 1
        finally:
            stop(proc)
    text = (tmp_path / "node.log").read_text()
    assert "node 1 (controller) did not start: OSError" in text
