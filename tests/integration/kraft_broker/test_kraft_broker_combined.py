"""Combined mode: one ``kcontrol node`` process with process.roles=broker,controller (the only
voter). The broker role reads the node's own metadata log: it registers with the controller
in the same process over the controller listener, is unfenced, serves kafka-python
(describe_cluster lists it and only it; create_topics through it is committed and its
Metadata shows the topic led by it); the node's one admin socket answers for both roles;
SIGTERM stops both, exit status 0."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from adapters.cluster.launcher import REPO_ROOT
from adapters.ensemble.processes import free_ports
from adapters.raft_node.admin import AdminClient
from tests.integration import kraft_fixtures

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
T = TypeVar("T")


def eventually(what: str, probe: Callable[[], T | None]) -> T:
    """``probe()`` until truthy, every 0.1 s; an exception counts as not up yet."""
    return kraft_fixtures.eventually(what, probe, pause=0.1, retry_on=(Exception,))


def test_a_combined_node_serves_as_broker_and_controller(tmp_path: Path) -> None:
    client_port, controller_port, admin_port = free_ports(3)
    config = tmp_path / "server.properties"
    config.write_text("\n".join([
        "process.roles=broker,controller", "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
        f"listeners=PLAINTEXT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller_port}",
        "controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        f"log.dirs={tmp_path / 'data'}", "broker.heartbeat.interval.ms=200",
        "broker.session.timeout.ms=2000", f"kcontrol.admin.port={admin_port}", ""]))
    cli = [sys.executable, "-m", "adapters.cli"]
    subprocess.run([*cli, "storage", "format", "--config", str(config), "--cluster-id",
                    CLUSTER_ID], check=True, cwd=REPO_ROOT, capture_output=True, timeout=60)
    log_path = tmp_path / "node.log"
    with open(log_path, "wb") as err:
        proc = subprocess.Popen([*cli, "node", "--config", str(config)], cwd=REPO_ROOT,
                                stdout=err, stderr=subprocess.STDOUT)
    admin = None
    try:
        admin = eventually("the broker answers", lambda: KafkaAdminClient(
            bootstrap_servers=f"127.0.0.1:{client_port}", request_timeout_ms=5000))
        cluster = eventually("the broker unfenced", lambda: (
            c := admin.describe_cluster()) and c["brokers"] and c)  # type: ignore[union-attr]
        assert [(b.get("broker_id", b.get("node_id")), b["port"]) for b in cluster["brokers"]] \
            == [(1, client_port)]
        assert cluster["cluster_id"] == CLUSTER_ID
        admin.create_topics([NewTopic("combined", 2, 1)])
        topics = eventually("the topic led", lambda: [
            t for t in admin.describe_topics(["combined"])  # type: ignore[union-attr]
            if t["partitions"] and all(p["leader_id"] == 1 for p in t["partitions"])])
        assert len(topics[0]["partitions"]) == 2
        with AdminClient("127.0.0.1", admin_port) as ops:  # one admin socket, both roles
            assert ops.request("brokers")["active"]
            st = ops.request("broker_status")
            assert st["state"] == "RUNNING" and st["fenced"] is False and st["leaders"] == 2
            assert ops.request("broker_state")["offset"] == st["metadata_offset"]
        admin.close()
        admin = None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        text = log_path.read_text()
        assert "lifecycle RUNNING -> PENDING_CONTROLLED_SHUTDOWN" in text
    except BaseException:
        print(log_path.read_text(errors="replace")[-4000:])
        raise
    finally:
        if admin is not None:
            admin.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
