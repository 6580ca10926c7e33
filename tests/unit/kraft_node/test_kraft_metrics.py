"""The KRaft controller's gauges: counted from the controller's image as Kafka counts them
(unfenced vs fenced brokers, partitions without a leader), offsets including the log's
control records, read through the event thread; a halted node reports MetadataErrorCount 1
and no active controller; a node too busy to answer keeps the figures read before."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from prometheus_client import generate_latest

from adapters.kraft_node.metrics import PREFIX, KRaftMetrics, figures
from fsm.kraft.image.brokers import BrokerRegistration
from fsm.kraft.image.partitions import PartitionImage, TopicImage


def controller(active: bool = True) -> Any:
    brokers = {1: BrokerRegistration(1, 5, b"a" * 16, fenced=False),
               2: BrokerRegistration(2, 6, b"b" * 16, fenced=True),
               3: BrokerRegistration(3, 7, b"c" * 16, fenced=False)}
    topics = {b"t" * 16: TopicImage("t", b"t" * 16, {
        0: PartitionImage((1, 2), (1,), leader=1), 1: PartitionImage((2, 3), (2,), leader=-1),
        2: PartitionImage((3, 1), (3,), leader=3)})}
    image = SimpleNamespace(brokers=brokers, topics=topics)
    return SimpleNamespace(image=image, active=active, next_offset=40, committed_offset=30)


def test_figures_count_as_kafka_does() -> None:
    f = figures(controller(), high_watermark=35)
    assert f == {"ActiveControllerCount": 1, "ActiveBrokerCount": 2, "FencedBrokerCount": 1,
                 "GlobalTopicCount": 1, "GlobalPartitionCount": 3,
                 "OfflinePartitionsCount": 1, "LastAppliedRecordOffset": 39,
                 "LastCommittedRecordOffset": 34, "MetadataErrorCount": 0}


def test_a_fresh_leader_counts_its_control_record() -> None:
    c = SimpleNamespace(image=SimpleNamespace(brokers={}, topics={}), active=True,
                        next_offset=0, committed_offset=-1)
    f = figures(c, high_watermark=1)
    assert f["LastCommittedRecordOffset"] == 0 and f["LastAppliedRecordOffset"] == 0


class Shell:
    def __init__(self) -> None:
        self.status = SimpleNamespace(high_watermark=35, failure=None)
        self.busy = False

    def call(self, fn: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if not self.busy:
            future.set_result(fn())
        return future


def scrape(m: KRaftMetrics) -> dict[str, float]:
    text = generate_latest(m.registry).decode()
    return {line.split()[0][len(PREFIX):]: float(line.split()[1])
            for line in text.splitlines() if line.startswith(PREFIX)}


def test_scrapes_read_through_the_event_thread_and_keep_the_last_when_busy() -> None:
    shell = Shell()
    node = SimpleNamespace(shell=shell, controller=controller())
    m = KRaftMetrics(node, read_timeout_s=0.05)
    assert scrape(m)["ActiveBrokerCount"] == 2
    node.controller.image.brokers.clear()
    shell.busy = True
    assert scrape(m)["ActiveBrokerCount"] == 2  # the figures of the read before
    shell.busy = False
    assert scrape(m)["ActiveBrokerCount"] == 0


def test_a_halted_node_reports_an_error_and_no_active_controller() -> None:
    shell = Shell()
    m = KRaftMetrics(SimpleNamespace(shell=shell, controller=controller()))
    assert scrape(m)["ActiveControllerCount"] == 1
    shell.status.failure = "OSError: fsync failed"
    got = scrape(m)
    assert got["MetadataErrorCount"] == 1 and got["ActiveControllerCount"] == 0
