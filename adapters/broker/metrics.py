"""A broker process's Prometheus endpoint: its controller service's metrics plus the broker's.
Kafka's MBeans are named as the Prometheus JMX exporter names them,
``kafka_<domain>_<type>_<name>``; what Kafka does not have is named ``kcontrol_...``:

* ``kafka_network_RequestChannel_RequestQueueSize`` (data plane) and
  ``kafka_network_RequestChannel_ControlPlaneRequestQueueSize`` (KIP-291);
* ``kafka_server_KafkaRequestHandlerPool_RequestHandlerAvgIdlePercent`` and
  ``kafka_server_KafkaRequestHandlerPool_ControlPlaneRequestHandlerIdlePercent``: the handler
  threads' idle ratio (0..1) since the previous scrape;
* ``kcontrol_broker_requests_total{plane}``: requests handled per plane;
* ``kafka_controller_ControllerChannelManager_QueueSize{broker_id}`` (seed 003),
  ``kcontrol_controller_channel_in_flight{broker_id}`` and
  ``kcontrol_controller_channel_dropped_total``;
* ``kcontrol_broker_controller_requests_total{api,result}``: controller requests answered,
  ``result`` "applied" or the error's name (STALE_BROKER_EPOCH: fenced by KIP-380), and
  ``kcontrol_broker_foreign_epoch_applied_total``: requests applied although stamped with
  another broker epoch (an independent check of the core's fence; it must stay 0);
  ``kcontrol_broker_last_applied_timestamp_seconds{api}``: when the last one was applied;
* ``kafka_server_KafkaServer_BrokerState`` with Kafka's numbers (0 NotRunning, 1 Starting,
  2 RecoveringFromUncleanShutdown, 3 RunningAsBroker, 6 PendingControlledShutdown,
  7 BrokerShuttingDown) and ``kcontrol_broker_epoch`` (-1 when not registered).

Everything is sampled when scraped (a custom collector), so nothing runs between scrapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from fsm.broker_states import BrokerState

if TYPE_CHECKING:
    from adapters.broker.process import BrokerNode

KAFKA_BROKER_STATE = {
    BrokerState.NOT_RUNNING: 0,
    BrokerState.STARTING: 1,
    BrokerState.RECOVERY: 2,
    BrokerState.RUNNING: 3,
    BrokerState.PENDING_CONTROLLED_SHUTDOWN: 6,
    BrokerState.SHUTTING_DOWN: 7,
}


class BrokerCollector:
    def __init__(self, node: BrokerNode) -> None:
        self.node = node

    def collect(self) -> Iterator[Metric]:
        node = self.node
        service = node.service
        if service is not None:
            yield from service.metrics.registry.collect()
        yield from self._planes()
        yield from self._channels()
        yield from self._answers()
        state, epoch = node.state_and_epoch()
        yield _gauge("kafka_server_KafkaServer_BrokerState",
                     "the broker's lifecycle state (Kafka's numbers)", KAFKA_BROKER_STATE[state])
        yield _gauge("kcontrol_broker_epoch", "the broker epoch (czxid of its registration)",
                     -1 if epoch is None else epoch)

    def _planes(self) -> Iterator[Metric]:
        server = self.node.server
        if server is None:
            return
        m = server.metrics()
        names = {"data": ("RequestQueueSize", "RequestHandlerAvgIdlePercent"),
                 "control": ("ControlPlaneRequestQueueSize",
                             "ControlPlaneRequestHandlerIdlePercent")}
        total = CounterMetricFamily("kcontrol_broker_requests",
                                    "requests handled, per plane", labels=["plane"])
        for plane, (queue_name, idle_name) in names.items():
            if f"{plane}_plane_queue_size" not in m:
                continue
            yield _gauge(f"kafka_network_RequestChannel_{queue_name}",
                         f"requests waiting in the {plane}-plane queue",
                         m[f"{plane}_plane_queue_size"])
            yield _gauge(f"kafka_server_KafkaRequestHandlerPool_{idle_name}",
                         f"idle ratio of the {plane}-plane handler threads since the last scrape",
                         m[f"{plane}_plane_handler_idle_ratio"])
            total.add_metric([plane], m[f"{plane}_plane_requests_total"])
        yield total

    def _channels(self) -> Iterator[Metric]:
        channels = self.node.channels
        if channels is None:
            return
        m = channels.metrics()
        size = GaugeMetricFamily("kafka_controller_ControllerChannelManager_QueueSize",
                                 "requests queued for a broker", labels=["broker_id"])
        flight = GaugeMetricFamily("kcontrol_controller_channel_in_flight",
                                   "1 when a request to the broker awaits its answer",
                                   labels=["broker_id"])
        for key, value in sorted(m.items()):
            parts = key.split("_")
            if len(parts) >= 3 and parts[0] == "broker":
                rest = "_".join(parts[2:])
                if rest == "queue_size":
                    size.add_metric([parts[1]], value)
                elif rest == "in_flight":
                    flight.add_metric([parts[1]], value)
        yield size
        yield flight
        dropped = CounterMetricFamily("kcontrol_controller_channel_dropped",
                                      "requests dropped (unknown broker, full queue)")
        dropped.add_metric([], m.get("dropped_total", 0.0))
        yield dropped


    def _answers(self) -> Iterator[Metric]:
        counts, foreign, last = self.node.handler.answer_counts()
        answers = sorted(counts.items())
        total = CounterMetricFamily("kcontrol_broker_controller_requests",
                                    "controller requests answered, by api and result "
                                    "(applied, or the error: STALE_BROKER_EPOCH...)",
                                    labels=["api", "result"])
        for (api, result), n in answers:
            total.add_metric([api, result], n)
        yield total
        applied = CounterMetricFamily("kcontrol_broker_foreign_epoch_applied",
                                      "controller requests applied although stamped with "
                                      "another broker epoch than the broker's (must stay 0)")
        applied.add_metric([], foreign)
        yield applied
        when = GaugeMetricFamily("kcontrol_broker_last_applied_timestamp_seconds",
                                 "wall-clock time the last controller request of the api was "
                                 "applied (when the metadata cache last changed, for "
                                 "UpdateMetadata)", labels=["api"])
        for api, t in sorted(last.items()):
            when.add_metric([api], t)
        yield when


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class BrokerMetricsServer:
    """The HTTP endpoint (``/metrics``) on 127.0.0.1."""

    def __init__(self, node: BrokerNode) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(BrokerCollector(node))  # type: ignore[arg-type]
        self._server: object | None = None
        self.port: int | None = None

    def serve(self, port: int, addr: str = "127.0.0.1") -> int:
        server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        self._server = server
        self.port = server.server_address[1]
        return self.port

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()  # type: ignore[attr-defined]
            server.server_close()  # type: ignore[attr-defined]


def scrape(registry: CollectorRegistry) -> str:
    """The exposition text, as an HTTP scrape would get it."""
    return generate_latest(registry).decode()
