"""Brokers across a failover of the active controller and a restart of their own: with the
active controller killed (-9), a CreateTopics sent to a broker is forwarded to the controller
elected next (answered, committed); the brokers heartbeat to it and stay unfenced. A broker
stopped while its topic is deleted finds the topic's replica directories stray when it comes
back (a new incarnation, a new broker epoch) and deletes them; the replicas it still holds
are kept. At the end ``kcontrol audit`` reads both brokers (``broker_state`` on their admin
sockets) and every invariant holds."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from adapters.cluster.kraft_launcher import KRaftCluster
from tests.integration.kraft_fixtures import committed_topics, eventually, running_kraft

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

@pytest.fixture
def kraft(tmp_path: Path) -> Iterator[KRaftCluster]:
    with running_kraft(tmp_path / "k", 2, overrides={
            "broker.heartbeat.interval.ms": "200", "broker.session.timeout.ms": "3000"}) as c:
        yield c


def replica_dirs(c: KRaftCluster, broker: int) -> set[str]:
    return {p.name for p in c.brokers[broker].data_dir.iterdir()
            if (p / "replica.properties").exists()}


def test_forwarding_survives_a_failover_and_a_restarted_broker_drops_stray_replicas(
        kraft: KRaftCluster) -> None:
    c = kraft
    old = c.wait_leader(30)
    c.kill(old.leader)
    admin = KafkaAdminClient(bootstrap_servers=c.brokers[1].address, request_timeout_ms=20_000)
    try:
        admin.create_topics([NewTopic("after", 2, 2)])  # forwarded to whoever leads next
        new = c.wait_leader(30, exclude=(old.leader,))
        assert new.leader != old.leader
        assert "after" in committed_topics(c)
        c.wait_brokers((1, 2), timeout=20)  # heartbeating to the new active controller

        eventually("broker 2 holds both replicas of 'after'",
                   lambda: replica_dirs(c, 2) >= {"after-0", "after-1"})
        admin.create_topics([NewTopic("kept", 1, 2)])
        eventually("broker 2 holds 'kept'", lambda: "kept-0" in replica_dirs(c, 2))
        assert c.terminate(2) == "stopped"
        admin.delete_topics(["after"])
        eventually("'after' gone from the committed image",
                   lambda: "after" not in committed_topics(c))
        assert replica_dirs(c, 2) >= {"after-0", "after-1", "kept-0"}  # still on disk
        c.start_node(2)
        c.wait_brokers((2,), timeout=20)
        eventually("broker 2 deleted the stray replicas of 'after'",
                   lambda: replica_dirs(c, 2) == {"kept-0"})
    finally:
        admin.close()
    # the audit reads both brokers over their admin sockets: every invariant holds
    audit = subprocess.run([sys.executable, "-m", "adapters.cli", "audit", "--kraft",
                            str(c.root)], capture_output=True, text=True, timeout=60)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "2 broker process(es) read" in audit.stdout and "invariants hold" in audit.stdout
