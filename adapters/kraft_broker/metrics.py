"""Prometheus metrics of a KRaft broker, named as the Prometheus JMX exporter names Kafka's
``kafka.server:type=KafkaServer`` MBeans (``kafka_server_KafkaServer_<name>``):

* BrokerState -- Kafka's ``BrokerState`` byte of the lifecycle state (``KAFKA_BROKER_STATE_
  VALUE``: 1 STARTING, 2 RECOVERY, 3 RUNNING, 6 PENDING_CONTROLLED_SHUTDOWN, 7 SHUTTING_DOWN,
  0 NOT_RUNNING at the process's end: the endpoint closes after the core heard it);
* MetadataLag -- seed 004's: how far the broker's replayed metadata is behind the high
  watermark it knows (committed offsets not yet applied, never negative);
* LastAppliedRecordOffset -- the last metadata offset the broker applied (-1: none);
* IsFenced -- 1 while the image the broker replayed says it is fenced (or not registered).

Read from the broker's published status (replaced whole after every event of its core), so a
scrape never waits for the core. Served on ``kcontrol.metrics.port`` by a broker-only node; in
combined mode the port is the controller's (``adapters.kraft_node.metrics``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import GaugeMetricFamily

from fsm.kraft.broker_lifecycle_states import KAFKA_BROKER_STATE_VALUE, KRaftBrokerState

log = logging.getLogger("kcontrol.kraft.broker")

PREFIX = "kafka_server_KafkaServer_"
HELP = {
    "BrokerState": "Kafka's BrokerState value of the broker's lifecycle state",
    "MetadataLag": "committed metadata offsets the broker has not applied yet",
    "LastAppliedRecordOffset": "the last metadata offset the broker applied",
    "IsFenced": "1 while the broker's image says it is fenced or not registered",
}


def figures(status: dict[str, Any]) -> dict[str, int]:
    """The gauges from a broker's ``status()``."""
    state = KRaftBrokerState(status.get("state", KRaftBrokerState.NOT_RUNNING.value))
    applied = int(status.get("metadata_offset", -1))
    committed = int(status.get("metadata_high_watermark", 0)) - 1
    return {
        "BrokerState": KAFKA_BROKER_STATE_VALUE[state],
        "MetadataLag": max(committed - applied, 0),
        "LastAppliedRecordOffset": applied,
        "IsFenced": 0 if status.get("fenced") is False else 1,
    }


class _Collector:
    def __init__(self, status: Callable[[], dict[str, Any]]) -> None:
        self.status = status

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, value in figures(self.status()).items():
            yield GaugeMetricFamily(PREFIX + name, HELP[name], value=value)


class BrokerMetrics:
    def __init__(self, status: Callable[[], dict[str, Any]]) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_Collector(status))  # type: ignore[arg-type]
        self._server: Any = None
        self.port: int | None = None

    @classmethod
    def serve(cls, status: Callable[[], dict[str, Any]], port: int,
              addr: str = "127.0.0.1") -> BrokerMetrics:
        """``/metrics`` on ``addr:port`` (0: any free port)."""
        metrics = cls(status)
        server, _thread = start_http_server(port, addr=addr, registry=metrics.registry)
        metrics._server = server
        metrics.port = server.server_address[1]
        return metrics

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
