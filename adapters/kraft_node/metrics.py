"""Prometheus metrics of a KRaft controller node, named as the Prometheus JMX exporter names
Kafka's ``kafka.controller:type=KafkaController`` MBeans (``kafka_controller_KafkaController_
<name>``, as ``adapters.controller.metrics`` does for the ZooKeeper-mode controller):

* ActiveControllerCount -- 1 on the active controller, else 0;
* ActiveBrokerCount, FencedBrokerCount -- registered brokers, unfenced and fenced;
* GlobalTopicCount, GlobalPartitionCount, OfflinePartitionsCount (no leader);
* LastAppliedRecordOffset -- the last record in the controller's image (on the active one,
  its last append, committed or not; on a standby, the last one replayed);
* LastCommittedRecordOffset -- the last record known committed;
* MetadataErrorCount -- 1 once the node halted (its event thread stopped on an error), else 0.

Every figure comes from one read on the node's event thread, between two events (``shell.call``),
made when Prometheus scrapes: a consistent snapshot, never a read racing the thread that
changes the image. A node too busy to answer within ``read_timeout_s`` is scraped with the
figures of the read before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import GaugeMetricFamily

log = logging.getLogger("kcontrol.kraft.metrics")

PREFIX = "kafka_controller_KafkaController_"
HELP = {
    "ActiveControllerCount": "1 on the active controller, else 0",
    "ActiveBrokerCount": "registered unfenced brokers",
    "FencedBrokerCount": "registered fenced brokers",
    "GlobalTopicCount": "topics",
    "GlobalPartitionCount": "partitions",
    "OfflinePartitionsCount": "partitions without a leader",
    "LastAppliedRecordOffset": "offset of the last record in the controller's image",
    "LastCommittedRecordOffset": "offset of the last record known committed",
    "MetadataErrorCount": "1 once the node halted on an error, else 0",
}


def figures(controller: Any, high_watermark: int, failed: bool = False) -> dict[str, int]:
    """The gauges' values from a ``QuorumController`` and its log's high watermark (read on
    the event thread). The offsets count the log's control records too (a leader's first
    record is one), as Kafka's do."""
    committed = max(controller.committed_offset, high_watermark - 1)
    image = controller.image
    brokers = image.brokers.values()
    partitions = [p for t in image.topics.values() for p in t.partitions.values()]
    return {
        "ActiveControllerCount": 1 if controller.active else 0,
        "ActiveBrokerCount": sum(1 for b in brokers if not b.fenced),
        "FencedBrokerCount": sum(1 for b in brokers if b.fenced),
        "GlobalTopicCount": len(image.topics),
        "GlobalPartitionCount": len(partitions),
        "OfflinePartitionsCount": sum(1 for p in partitions if p.leader < 0),
        "LastAppliedRecordOffset": max(controller.next_offset - 1, committed),
        "LastCommittedRecordOffset": committed,
        "MetadataErrorCount": 1 if failed else 0,
    }


class _Collector:
    def __init__(self, node: Any, read_timeout_s: float) -> None:
        self.node = node
        self.read_timeout_s = read_timeout_s
        self.last = {name: 0 for name in HELP}

    def read(self) -> dict[str, int]:
        shell = self.node.shell
        failed = shell is not None and shell.status.failure is not None
        controller = self.node.controller
        if shell is None or controller is None:
            return self.last
        if failed:
            self.last = {**self.last, "MetadataErrorCount": 1, "ActiveControllerCount": 0}
            return self.last
        try:
            self.last = shell.call(
                lambda: figures(controller, shell.status.high_watermark)).result(
                self.read_timeout_s)
        except (FutureTimeout, RuntimeError) as exc:
            log.debug("metrics read skipped: %s", exc)
        return self.last

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, value in self.read().items():
            yield GaugeMetricFamily(PREFIX + name, HELP[name], value=value)


class KRaftMetrics:
    def __init__(self, node: Any, read_timeout_s: float = 2.0) -> None:
        self.registry = CollectorRegistry()
        self.collector = _Collector(node, read_timeout_s)
        self.registry.register(self.collector)  # type: ignore[arg-type]
        self._server: Any = None
        self.port: int | None = None

    @classmethod
    def serve(cls, node: Any, port: int, addr: str = "127.0.0.1") -> KRaftMetrics:
        """The endpoint on ``addr:port`` (0: any free port), serving ``/metrics``."""
        metrics = cls(node)
        server, _thread = start_http_server(port, addr=addr, registry=metrics.registry)
        metrics._server = server
        metrics.port = server.server_address[1]
        log.info("node %d: metrics on http://%s:%d/metrics", node.args.node_id, addr,
                 metrics.port)
        return metrics

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
