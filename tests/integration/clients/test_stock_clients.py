"""Stock Kafka clients from PyPI against kcontrol brokers: kafka-python (pure Python) and
confluent-kafka (librdkafka) bootstrap from any broker's PLAINTEXT listener and list the
topics with the leaders, replicas and ISRs the controller decided -- compared with
ZooKeeper's partition state znodes. What they need from a broker is ApiVersions and
Metadata: kafka-python 3 opens with ApiVersions v4 and librdkafka with v3 (flexible), so
both go through the version negotiation, including the fallback answer for a version the
broker lacks (checked against a broker that serves ApiVersions only up to v2)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer
from kazoo.client import KazooClient

from adapters.cluster import Cluster
from adapters.network import RequestHandler
from adapters.network.broker_handler import BrokerRequestHandler
from adapters.network.codec import DEFAULT_MAX_FRAME_SIZE, ApiKey
from adapters.network.listener_config import ListenerSpec
from adapters.network.listeners import Listener
from adapters.network.request_channel import Plane, RequestChannel
from fsm.broker import BrokerConfig, BrokerCore
from fsm.events import BrokerMetadataLoaded, BrokerRegistered, BrokerStarted, RequestReceived
from fsm.requests import UpdateMetadataPartition, UpdateMetadataRequest
from fsm.values import BrokerInfo, Endpoint
from tests.integration.cluster.cluster_helpers import zk_state

# kafka-python 3 loads its schemas with importlib.resources calls Python deprecates
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

HOST = "127.0.0.1"
Partitions = dict[tuple[str, int], tuple[int, frozenset[int], tuple[int, ...]]]


def zk_partitions(observer: KazooClient, names: list[str]) -> tuple[Partitions, int]:
    """(topic, partition) -> (leader, ISR, replicas) for the topics ``names``, and the
    controller, from ZooKeeper."""
    st = zk_state(observer)
    out = {}
    for topic in names:
        for p, replicas in st.topics[topic].partitions:
            li = st.partition_states[(topic, p)].leader_and_isr
            out[(topic, p)] = (li.leader, frozenset(li.isr), tuple(replicas))
    assert st.controller is not None
    return out, st.controller.broker_id


def registered_endpoints(cluster: Cluster) -> dict[int, tuple[str, int]]:
    return {b: (HOST, p.data_port) for b, p in cluster.brokers.items()}


@pytest.mark.parametrize("bootstrap", [1, 2, 3])
def test_kafka_python_bootstraps_and_lists_topics(cluster: Cluster, observer: KazooClient,
                                                  client_topics: dict, bootstrap: int) -> None:
    TOPICS = client_topics  # noqa: N806
    want, controller = zk_partitions(observer, sorted(TOPICS))
    port = cluster.brokers[bootstrap].data_port
    admin = KafkaAdminClient(bootstrap_servers=f"{HOST}:{port}", client_id="kcontrol-test",
                             request_timeout_ms=10_000)
    try:
        assert set(admin.list_topics()) == set(TOPICS)
        described = admin.describe_topics(sorted(TOPICS))
        cluster_info = admin.describe_cluster()
    finally:
        admin.close()
    got = {}
    for t in described:
        assert t["error_code"] == 0, t
        for p in t["partitions"]:
            assert p["error_code"] == 0, p
            got[(t["name"], p["partition_index"])] = (
                p["leader_id"], frozenset(p["isr_nodes"]), tuple(p["replica_nodes"]))
    assert got == want
    assert cluster_info["controller_id"] == controller
    named = {b.get("broker_id", b.get("node_id")): (b["host"], b["port"])
             for b in cluster_info["brokers"]}  # the key's name differs across releases
    assert named == registered_endpoints(cluster)

    consumer = KafkaConsumer(bootstrap_servers=f"{HOST}:{port}", client_id="kcontrol-test",
                             request_timeout_ms=10_000)
    try:
        assert consumer.topics() == set(TOPICS)
        for topic, (partitions, _rf) in TOPICS.items():
            assert consumer.partitions_for_topic(topic) == set(range(partitions))
    finally:
        consumer.close()
    # kafka-python 3 asks for ApiVersions v4 first: the broker answered the fallback
    log = cluster.brokers[bootstrap].log_file.read_text(errors="replace")
    assert "API_VERSIONS v4 unsupported (supported 0-3): answered UNSUPPORTED_VERSION" in log


@pytest.mark.parametrize("bootstrap", [1, 2, 3])
def test_confluent_kafka_bootstraps_and_lists_topics(cluster: Cluster, observer: KazooClient,
                                                     client_topics: dict, bootstrap: int) -> None:
    TOPICS = client_topics  # noqa: N806
    want, controller = zk_partitions(observer, sorted(TOPICS))
    port = cluster.brokers[bootstrap].data_port
    admin = AdminClient({"bootstrap.servers": f"{HOST}:{port}", "client.id": "kcontrol-test"})
    md = admin.list_topics(timeout=15)
    assert md.controller_id == controller
    assert {b: (m.host, m.port) for b, m in md.brokers.items()} == registered_endpoints(cluster)
    assert set(md.topics) == set(TOPICS)
    got = {}
    for topic, tmd in md.topics.items():
        assert tmd.error is None, tmd.error
        for p, pmd in tmd.partitions.items():
            assert pmd.error is None, pmd.error
            got[(topic, p)] = (pmd.leader, frozenset(pmd.isrs), tuple(pmd.replicas))
    assert got == want


# ---------------------------------------------------------------- the fallback, in-process

EPOCH = 100
OLD_API_VERSIONS = {ApiKey.API_VERSIONS: (0, 2), ApiKey.METADATA: (0, 8)}


@pytest.fixture
def old_broker() -> Iterator[int]:
    """A one-broker data plane that serves ApiVersions only up to v2 (as a Kafka broker
    before 2.4 does) and Metadata from a real ``BrokerCore`` holding topic "legacy" (two
    partitions on this broker, id 7). Yields its port."""
    core = BrokerCore(BrokerConfig(7))
    core.handle(BrokerStarted())
    core.handle(BrokerMetadataLoaded((), ()))
    core.handle(BrokerRegistered(EPOCH))
    handler: RequestHandler = BrokerRequestHandler(core, advertised=OLD_API_VERSIONS)
    channel = RequestChannel(Plane.DATA, handler, capacity=10, threads=1)
    listener = Listener(ListenerSpec("PLAINTEXT", HOST, 0), Plane.DATA, channel,
                        OLD_API_VERSIONS, max_frame_size=DEFAULT_MAX_FRAME_SIZE)
    port = listener.bind()
    me = BrokerInfo(7, EPOCH, (Endpoint("PLAINTEXT", HOST, port),))
    parts = tuple(UpdateMetadataPartition("legacy", p, 1, 7, 0, (7,), 0, (7,)) for p in (0, 1))
    core.handle(RequestReceived(UpdateMetadataRequest(7, 1, EPOCH, parts, (me,)), 1))
    channel.start()
    listener.start()
    try:
        yield port
    finally:
        listener.stop()
        channel.stop()


def _fallbacks(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if "answered UNSUPPORTED_VERSION" in r.getMessage()]


def test_librdkafka_falls_back_from_api_versions_v3(old_broker: int,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kcontrol.network")
    admin = AdminClient({"bootstrap.servers": f"{HOST}:{old_broker}"})
    md = admin.list_topics(timeout=15)
    assert md.controller_id == 7
    assert {p: (m.leader, m.isrs) for p, m in md.topics["legacy"].partitions.items()} == {
        0: (7, [7]), 1: (7, [7])}
    assert any("API_VERSIONS v3 unsupported (supported 0-2)" in m
               for m in _fallbacks(caplog.records))


def test_kafka_python_falls_back_from_api_versions_v4(old_broker: int,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kcontrol.network")
    done: dict[str, Any] = {}

    def run() -> None:  # kafka-python may retry for long: bounded by the join below
        consumer = KafkaConsumer(bootstrap_servers=f"{HOST}:{old_broker}",
                                 request_timeout_ms=10_000)
        try:
            done["partitions"] = consumer.partitions_for_topic("legacy")
        finally:
            consumer.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)
    assert done.get("partitions") == {0, 1}
    assert any("API_VERSIONS v4 unsupported (supported 0-2)" in m
               for m in _fallbacks(caplog.records))
