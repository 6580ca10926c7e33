"""The Prometheus endpoint of a live controller service: every metric issue 4 names (Kafka's
``kafka.controller`` MBeans, named ``kafka_controller_<type>_<name>`` as the JMX exporter
names them; issue 22) is exported, each with the value the cluster calls for."""

from __future__ import annotations

import threading
import urllib.request

import pytest
from kazoo.client import KazooClient
from runtime_helpers import wait_until

from adapters.controller.service import ControllerService
from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.effects import ZkWrite
from fsm.values import TopicAssignment

pytestmark = pytest.mark.integration

KAFKA_NAMES = ("ActiveControllerCount", "OfflinePartitionsCount", "PreferredReplicaImbalanceCount",
               "GlobalTopicCount", "GlobalPartitionCount", "ControllerState", "EventQueueSize",
               "EventQueueTimeMs", "TopicsToDeleteCount", "LeaderElectionRateAndTimeMs",
               "UncleanLeaderElectionsPerSec")
"""Issue 4, item 8; issue 22, item 1."""


def scrape(svc: ControllerService) -> dict[str, float]:
    """``kafka_controller_<Type>_<Name>`` samples of the service's endpoint, by ``<Name>`` (the
    histogram's samples keep their suffix: ``EventQueueTimeMs_count`` ...)."""
    url = f"http://127.0.0.1:{svc.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("kafka_controller_") and " " in line:
            name, value = line.rsplit(" ", 1)
            out[name.split("_", 3)[3]] = float(value)
    return out


def create(client: KazooClient, topic: str, assignment: dict[int, list[int]]) -> None:
    path = P.topic(topic)
    client.create(path, codec.encode(path, TopicAssignment.of(assignment)))


def test_every_kafka_metric_is_exported_with_its_value(make_service, make_broker,
                                                        zk_client: KazooClient) -> None:
    make_broker(1)
    broker2 = make_broker(2)
    svc = make_service(1, metrics_port=0, metrics_refresh_s=0.0)
    wait_until(lambda: svc.is_active, 20, "controller 1 active")
    standby = make_service(2, metrics_port=0, metrics_refresh_s=0.0)
    assert svc.wait_idle(10) and standby.wait_idle(10)

    create(zk_client, "m", {0: [1], 1: [2, 1]})  # m-1 led by its preferred replica 2
    create(zk_client, "p", {0: [3, 1]})  # broker 3 never registers: led by 1, not preferred
    create(zk_client, "o", {0: [2]})  # offline once broker 2 is gone
    create(zk_client, "d", {0: [2]})  # offline too, but being deleted: not counted
    wait_until(lambda: all(zk_client.exists(P.partition_state(t, 0)) for t in "mpod"), 20,
               "the partitions created")
    broker2.unregister()  # m-1 moves to broker 1; o-0 and d-0 have no live replica left
    wait_until(lambda: svc.wait_idle(1) and svc.controller.leader_and_isr(("o", 0)).leader == -1,
               20, "o-0 offline")
    # "d" is deleted; its replica's broker is gone (and no broker answers StopReplica here):
    # it stays queued
    zk_client.create(P.delete_topic("d"), b"")
    wait_until(lambda: svc.wait_idle(1) and "d" in svc.controller.ctx.to_delete, 20,
               "d queued for deletion")

    m = scrape(svc)
    for name in KAFKA_NAMES:
        assert name in m or f"{name}_count" in m or f"{name}_total" in m, name
    assert m["ActiveControllerCount"] == 1
    assert m["GlobalTopicCount"] == 4  # the topic being deleted still counts (as in Kafka)
    assert m["GlobalPartitionCount"] == 5
    assert m["OfflinePartitionsCount"] == 1  # o-0 (d-0 is being deleted)
    assert m["PreferredReplicaImbalanceCount"] == 3  # m-1 (1, not 2), p-0 (1, not 3), o-0 (none)
    assert m["TopicsToDeleteCount"] == 1
    assert m["ControllerState"] == 0  # idle
    assert m["EventQueueSize"] == 0
    assert m["EventQueueTimeMs_count"] >= 6  # at least one per change above
    assert m["EventQueueTimeMs_sum"] >= 0
    assert m["EventQueueTimeMs_bucket{le=\"+Inf\"}"] == m["EventQueueTimeMs_count"]
    assert m["LeaderElectionRateAndTimeMs_count"] >= 1  # broker 2 went away: a BrokerChange
    assert m["UncleanLeaderElectionsPerSec_total"] == 0  # unclean elections are off

    s = scrape(standby)  # a candidate that is not the controller
    assert s["ActiveControllerCount"] == 0
    for name in ("OfflinePartitionsCount", "PreferredReplicaImbalanceCount", "GlobalTopicCount",
                 "GlobalPartitionCount", "TopicsToDeleteCount", "EventQueueSize"):
        assert s[name] == 0, name

    # in the middle of an event: the state of the event in hand, the events waiting behind it
    stalled, release = threading.Event(), threading.Event()

    def stall(write: ZkWrite) -> None:
        if not stalled.is_set():
            stalled.set()
            release.wait(30)

    svc.before_write = stall
    try:
        create(zk_client, "x", {0: [1]})
        wait_until(stalled.is_set, 20, "the event thread in the middle of x's creation")
        zk_client.create(P.delete_topic("m"), b"")  # queued behind it
        wait_until(lambda: svc.queue.size >= 1, 20, "an event waiting")
        m = scrape(svc)
        assert m["ControllerState"] == 3  # Kafka's TopicChange
        assert m["EventQueueSize"] >= 1
    finally:
        release.set()
        svc.before_write = None
    wait_until(lambda: svc.wait_idle(1) and scrape(svc)["TopicsToDeleteCount"] == 2, 20,
               "m queued for deletion too")
    m = scrape(svc)
    assert (m["ControllerState"], m["EventQueueSize"], m["GlobalTopicCount"]) == (0, 0, 5)
