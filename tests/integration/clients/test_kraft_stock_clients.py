"""Stock Kafka admin clients from PyPI against a KRaft cluster of real processes (3 controllers,
3 brokers, one ``KRaftCluster`` for the module): kafka-python's ``KafkaAdminClient``
(create_topics, delete_topics, describe_topics, describe_cluster) and confluent-kafka's
``AdminClient`` (create_topics, list_topics, describe_cluster), each pointed at a broker, which
forwards the admin requests to the active controller. Every answer is compared with the
controllers' committed image, read from the active controller's admin socket (ops ``topics``
and ``brokers``): the leaders, replicas and ISRs a client is told are the ones committed, and
the brokers it is told of are the registered, unfenced ones at the addresses they registered.
Controllers never appear in a client's view of the cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as CkNewTopic
from kafka import KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError

from adapters.cluster.kraft_launcher import KRaftCluster
from tests.integration.kraft_fixtures import eventually, running_kraft

# kafka-python 3 loads its schemas with importlib.resources calls Python deprecates
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

Partitions = dict[int, tuple[int, tuple[int, ...], frozenset[int]]]
"""index -> (leader, replicas, ISR)"""


@pytest.fixture(scope="module")
def kraft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    with running_kraft(Path(tmp_path_factory.mktemp("kraft-clients")) / "k", 3) as c:
        yield c


def image(c: KRaftCluster, op: str) -> dict[str, Any]:
    """The active controller's answer to ``op`` (its committed image)."""
    v = c.wait_leader(30)
    got = c.controllers[v.leader].request(op)
    assert got["active"], got
    return got


def image_partitions(c: KRaftCluster, topic: str) -> Partitions | None:
    t = image(c, "topics")["topics"].get(topic)
    if t is None:
        return None
    return {int(i): (p["leader"], tuple(p["replicas"]), frozenset(p["isr"]))
            for i, p in t["partitions"].items()}


def led_partitions(c: KRaftCluster, topic: str, count: int) -> Partitions | None:
    """The committed partitions once all ``count`` have a leader."""
    parts = image_partitions(c, topic)
    if parts is None or len(parts) != count or any(p[0] < 0 for p in parts.values()):
        return None
    return parts


def unfenced_brokers(c: KRaftCluster) -> dict[int, tuple[str, int]]:
    """Registered, unfenced brokers -> the address each one's client listener has."""
    regs = image(c, "brokers")["brokers"]
    return {int(b): ("127.0.0.1", c.brokers[int(b)].port)
            for b, r in regs.items() if not r["fenced"]}


def kafka_python(c: KRaftCluster, broker: int) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=c.brokers[broker].address,
                            client_id="kcontrol-kraft-test", request_timeout_ms=15_000)


def confluent(c: KRaftCluster, broker: int) -> AdminClient:
    return AdminClient({"bootstrap.servers": c.brokers[broker].address,
                        "client.id": "kcontrol-kraft-test"})


def kp_described(admin: KafkaAdminClient, topic: str) -> Partitions | None:
    for t in admin.describe_topics([topic]):
        if t["name"] == topic and t["error_code"] == 0:
            return {p["partition_index"]: (p["leader_id"], tuple(p["replica_nodes"]),
                                           frozenset(p["isr_nodes"])) for p in t["partitions"]}
    return None


def ck_listed(admin: AdminClient, topic: str) -> Partitions | None:
    t = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
    if t is None or t.error is not None:
        return None
    return {i: (p.leader, tuple(p.replicas), frozenset(p.isrs)) for i, p in t.partitions.items()}


# ---------------------------------------------------------------- kafka-python


def test_kafka_python_creates_and_describes_a_topic_as_committed(kraft: KRaftCluster) -> None:
    admin = kafka_python(kraft, 1)
    try:
        answer = admin.create_topics([KpNewTopic("kp-orders", 4, 3)], timeout_ms=15_000)
        assert [(t["name"], t["error_code"]) for t in answer["topics"]] == [("kp-orders", 0)]
        committed = eventually("kp-orders led in the committed image",
                               lambda: led_partitions(kraft, "kp-orders", 4))
        assert all(len(replicas) == 3 and isr == frozenset(replicas)
                   for _, replicas, isr in committed.values())
        assert {r for _, replicas, _ in committed.values() for r in replicas} <= set(
            kraft.brokers)  # placed on brokers, never on a controller
        eventually("broker 1's Metadata equal to the image",
                   lambda: kp_described(admin, "kp-orders") == committed)
    finally:
        admin.close()
    other = kafka_python(kraft, 3)  # through another broker: the same committed answer
    try:
        eventually("broker 3's Metadata equal to the image",
                   lambda: kp_described(other, "kp-orders") == committed)
    finally:
        other.close()


def test_kafka_python_is_refused_what_the_controller_refuses(kraft: KRaftCluster) -> None:
    admin = kafka_python(kraft, 2)
    try:
        admin.create_topics([KpNewTopic("kp-once", 1, 1)], timeout_ms=15_000)
        before = eventually("kp-once committed", lambda: led_partitions(kraft, "kp-once", 1))
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([KpNewTopic("kp-once", 2, 2)], timeout_ms=15_000)
        with pytest.raises(InvalidReplicationFactorError):
            admin.create_topics([KpNewTopic("kp-too-wide", 1, 4)], timeout_ms=15_000)
    finally:
        admin.close()
    assert image_partitions(kraft, "kp-once") == before  # unchanged by the refused create
    assert image_partitions(kraft, "kp-too-wide") is None


def test_kafka_python_deletes_a_topic(kraft: KRaftCluster) -> None:
    admin = kafka_python(kraft, 2)
    try:
        admin.create_topics([KpNewTopic("kp-doomed", 2, 2)], timeout_ms=15_000)
        eventually("kp-doomed committed", lambda: led_partitions(kraft, "kp-doomed", 2))
        eventually("kp-doomed in broker 2's topics", lambda: "kp-doomed" in admin.list_topics())
        answer = admin.delete_topics(["kp-doomed"], timeout_ms=15_000)
        assert [(t["name"], t["error_code"]) for t in answer["topics"]] == [("kp-doomed", 0)]
        assert image_partitions(kraft, "kp-doomed") is None  # answered once committed
        eventually("kp-doomed gone from broker 2's topics",
                   lambda: "kp-doomed" not in admin.list_topics())
    finally:
        admin.close()


def test_kafka_python_describes_the_cluster_of_unfenced_brokers(kraft: KRaftCluster) -> None:
    admin = kafka_python(kraft, 1)
    try:
        info = admin.describe_cluster()
    finally:
        admin.close()
    named = {b.get("broker_id", b.get("node_id")): (b["host"], b["port"])
             for b in info["brokers"]}  # the key's name differs across releases
    assert not any(b.get("is_fenced") for b in info["brokers"])
    assert named == unfenced_brokers(kraft) == {
        b: ("127.0.0.1", n.port) for b, n in kraft.brokers.items()}
    assert info["cluster_id"] == kraft.cluster_id
    assert info["controller_id"] in kraft.brokers  # KRaft: clients are given a broker


# ---------------------------------------------------------------- confluent-kafka


def test_confluent_kafka_creates_and_lists_a_topic_as_committed(kraft: KRaftCluster) -> None:
    admin = confluent(kraft, 2)
    futures = admin.create_topics([CkNewTopic("ck-events", num_partitions=3,
                                              replication_factor=2)], request_timeout=15)
    assert futures["ck-events"].result(timeout=20) is None
    committed = eventually("ck-events led in the committed image",
                           lambda: led_partitions(kraft, "ck-events", 3))
    assert all(len(replicas) == 2 for _, replicas, _ in committed.values())
    eventually("librdkafka's Metadata equal to the image",
               lambda: ck_listed(admin, "ck-events") == committed)
    md = admin.list_topics(timeout=10)
    assert {b: (m.host, m.port) for b, m in md.brokers.items()} == unfenced_brokers(kraft)
    assert md.cluster_id == kraft.cluster_id
    eventually("librdkafka's topics equal to the image's",
               lambda: set(admin.list_topics(timeout=10).topics)
               == set(image(kraft, "topics")["topics"]))


def test_confluent_kafka_is_refused_a_replication_factor_over_the_brokers(
        kraft: KRaftCluster) -> None:
    admin = confluent(kraft, 3)
    futures = admin.create_topics([CkNewTopic("ck-too-wide", num_partitions=1,
                                              replication_factor=5)], request_timeout=15)
    with pytest.raises(KafkaException) as info:
        futures["ck-too-wide"].result(timeout=20)
    assert info.value.args[0].name() == "INVALID_REPLICATION_FACTOR"
    assert image_partitions(kraft, "ck-too-wide") is None


def test_confluent_kafka_describes_the_cluster(kraft: KRaftCluster) -> None:
    admin = confluent(kraft, 3)
    result = admin.describe_cluster(request_timeout=15).result(timeout=20)
    assert result.cluster_id == kraft.cluster_id
    assert {n.id: (n.host, n.port) for n in result.nodes} == unfenced_brokers(kraft)
    assert result.controller is not None and result.controller.id in kraft.brokers


def test_each_client_sees_the_others_topic(kraft: KRaftCluster) -> None:
    kp = kafka_python(kraft, 3)
    try:
        kp.create_topics([KpNewTopic("cross", 2, 3)], timeout_ms=15_000)
        committed = eventually("cross committed", lambda: led_partitions(kraft, "cross", 2))
    finally:
        kp.close()
    ck = confluent(kraft, 1)
    eventually("librdkafka through broker 1 names what kafka-python created",
               lambda: ck_listed(ck, "cross") == committed)
