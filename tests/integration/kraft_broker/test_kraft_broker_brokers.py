"""KRaft brokers as real processes (``kcontrol node --config``, the broker role of
``adapters.kraft_broker``) next to three controller processes (``KRaftCluster``): they fetch
the metadata as observers, register over the wire and are unfenced; kafka-python's admin
client pointed at one broker lists exactly the unfenced brokers and never a controller, and
creates a topic through it (forwarded to the active controller) that every broker's Metadata
then shows with the committed leaders and ISRs; a partition's leader shrinks its ISR
(AlterPartition over the wire, asked through its admin socket) and every broker shows it;
SIGTERM of a broker is a controlled shutdown (its leaderships move before it leaves, and it is
fenced before it exits); kill -9 of a broker gets it fenced once its session times out."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from adapters.cluster.kraft_launcher import KRaftCluster
from adapters.kraft_node.wire_client import parse_address
from adapters.network.codec import dispatch
from adapters.network.codec.apis.metadata import all_topics_request
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import RequestHeader
from tests.integration.kraft_fixtures import committed_topics, eventually, running_kraft

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SESSION_MS = 2000


@pytest.fixture
def kraft(tmp_path: Path) -> Iterator[KRaftCluster]:
    with running_kraft(tmp_path / "k", 3, overrides={
            "broker.heartbeat.interval.ms": "200",
            "broker.session.timeout.ms": str(SESSION_MS)}) as c:
        yield c


def metadata(address: str) -> dict[str, Any]:
    """A broker's Metadata v8 answer (all topics), over the wire."""
    host, port = parse_address(address)
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(dispatch.encode_request(RequestHeader(3, 8, 1, "test"),
                                             all_topics_request(8)))
        reader = FrameReader()
        while True:
            data = sock.recv(65536)
            assert data, "the broker closed the connection"
            frames = reader.feed(data)
            if frames:
                return dispatch.decode_response(3, 8, frames[0])[1]


def committed_topic(c: KRaftCluster, name: str) -> dict[str, Any] | None:
    return committed_topics(c).get(name)


def test_brokers_register_serve_forward_and_shut_down(kraft: KRaftCluster) -> None:
    c = kraft
    brokers = c.wait_brokers((1, 2, 3))
    assert set(brokers) == {1, 2, 3}
    first = c.brokers[1].address
    admin = KafkaAdminClient(bootstrap_servers=first, request_timeout_ms=10_000)
    try:
        cluster = admin.describe_cluster()
        named = sorted((b.get("broker_id", b.get("node_id")), f"{b['host']}:{b['port']}")
                       for b in cluster["brokers"])  # the key's name differs across releases
        assert named == sorted((b, n.address) for b, n in c.brokers.items())
        assert cluster["cluster_id"] == c.cluster_id
        assert cluster["controller_id"] in c.brokers  # a broker (it forwards), never 3000+

        admin.create_topics([NewTopic("orders", 3, 3)])
        topic = eventually("orders committed with leaders", lambda: (
            t := committed_topic(c, "orders")) and len(t["partitions"]) == 3 and all(
            p["leader"] >= 0 for p in t["partitions"].values()) and t)
        want = {int(i): (p["leader"], sorted(p["isr"])) for i, p in topic["partitions"].items()}
        for b, n in c.brokers.items():
            def shown(address: str = n.address) -> dict[int, Any] | None:
                ts = [t for t in metadata(address)["topics"] if t["name"] == "orders"]
                if not ts:
                    return None
                return {p["partition_index"]: (p["leader_id"], sorted(p["isr_nodes"]))
                        for p in ts[0]["partitions"]}
            assert eventually(f"broker {b} shows orders", lambda s=shown: s() == want and s())
            assert all(nid in c.brokers for nid in (x["node_id"]
                                                    for x in metadata(n.address)["brokers"]))
        # the leader of orders-0 shrinks its ISR: AlterPartition to the active controller
        lead = want[0][0]
        shrunk = [lead, next(b for b in want[0][1] if b != lead)]
        got = c.brokers[lead].request("isr_change", topic="orders", partition=0, isr=shrunk)
        assert got["isr"] == shrunk and got["partition_epoch"] >= 1
        assert sorted(committed_topic(c, "orders")["partitions"]["0"]["isr"]) == \
            sorted(shrunk)  # type: ignore[index]
        want[0] = (lead, sorted(shrunk))
        for b, n in c.brokers.items():
            assert eventually(f"broker {b} shows the shrunk ISR", lambda a=n.address: [
                p for t in metadata(a)["topics"] if t["name"] == "orders"
                for p in t["partitions"] if p["partition_index"] == 0
                and sorted(p["isr_nodes"]) == sorted(shrunk)])
    finally:
        admin.close()

    # SIGTERM: a controlled shutdown -- its leaderships move away, then the heartbeat that
    # tells it to stop fences it: fenced in the committed image by the time it has exited
    # (the bound is half the session, after which its lease would fence it anyway)
    leader_of = {i: p[0] for i, p in want.items()}
    victim = leader_of[0]
    assert c.terminate(victim) == "stopped"
    assert c.node(victim).proc.returncode == 0  # type: ignore[union-attr]
    after = committed_topic(c, "orders")
    assert after is not None
    assert all(p["leader"] != victim for p in after["partitions"].values()), after
    assert all(victim not in p["isr"] for p in after["partitions"].values()), after
    c.wait_brokers((victim,), fenced=True, timeout=SESSION_MS / 1000 / 2)

    # kill -9: fenced once the session times out
    other = next(b for b in c.brokers if b != victim)
    t0 = time.monotonic()
    c.kill(other)
    c.wait_brokers((other,), fenced=True, timeout=3 * SESSION_MS / 1000 + 5)
    assert time.monotonic() - t0 >= SESSION_MS / 1000 * 0.5
