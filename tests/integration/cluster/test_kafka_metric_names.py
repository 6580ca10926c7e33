"""Issue 22, item 1: a live broker (the controller) and a live standby controller export
Kafka's metric names as the Prometheus JMX exporter writes them, and every metric the
shipped Grafana dashboard queries is one a live scrape exposes."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from cluster_helpers import SESSION_MS, wait_until
from prometheus_client.parser import text_string_to_metric_families

from adapters.broker import BrokerNode, BrokerSettings
from adapters.controller.service import ControllerService
from adapters.network import parse_listener_config

pytestmark = pytest.mark.integration

DASHBOARD = Path(__file__).resolve().parents[3] / "docs" / "grafana" / "kcontrol-dashboard.json"

CONTROLLER_NAMES = (
    "kafka_controller_KafkaController_ActiveControllerCount",
    "kafka_controller_KafkaController_OfflinePartitionsCount",
    "kafka_controller_KafkaController_GlobalPartitionCount",
    "kafka_controller_KafkaController_GlobalTopicCount",
    "kafka_controller_KafkaController_PreferredReplicaImbalanceCount",
    "kafka_controller_KafkaController_ControllerState",
    "kafka_controller_KafkaController_TopicsToDeleteCount",
    "kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs",
    "kafka_controller_ControllerStats_UncleanLeaderElectionsPerSec",
    "kafka_controller_ControllerEventManager_EventQueueSize",
    "kafka_controller_ControllerEventManager_EventQueueTimeMs",
)
BROKER_NAMES = (
    "kafka_server_KafkaServer_BrokerState",
    "kafka_server_KafkaRequestHandlerPool_RequestHandlerAvgIdlePercent",
    "kafka_server_KafkaRequestHandlerPool_ControlPlaneRequestHandlerIdlePercent",
    "kafka_network_RequestChannel_RequestQueueSize",
    "kafka_network_RequestChannel_ControlPlaneRequestQueueSize",
    "kafka_controller_ControllerChannelManager_QueueSize",
)

_PROMQL_WORDS = {"sum", "min", "max", "avg", "count", "rate", "irate", "increase",
                 "histogram_quantile", "by", "without", "on", "ignoring", "group_left",
                 "group_right", "and", "or", "unless", "offset", "bool", "topk", "bottomk"}


def scrape(port: int) -> tuple[set[str], set[str]]:
    """The metric family names and the sample names an endpoint exposes."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    families, samples = set(), set()
    for fam in text_string_to_metric_families(text):
        families.add(fam.name)
        samples.update(s.name for s in fam.samples)
    return families, samples


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression references: label matchers, ranges, strings and
    grouping clauses removed, then every identifier that is not a function or a keyword."""
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", expr)
    return {m.group(0) for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr)
            if m.group(0) not in _PROMQL_WORDS}


def dashboard_exprs() -> list[tuple[str, str]]:
    """(panel title, expr) of every target of every panel."""
    board = json.loads(DASHBOARD.read_text())
    assert board["__inputs"][0]["name"] == "DS_PROMETHEUS"
    out = []
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
        for target in panel["targets"]:
            out.append((panel["title"], target["expr"]))
    return out


def test_kafka_names_are_exported_and_the_dashboard_queries_only_them(zk_chroot: str) -> None:
    config = parse_listener_config("CONTROLLER://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                                   "CONTROLLER")
    node = BrokerNode(BrokerSettings(1, zk_chroot, config, session_timeout_ms=SESSION_MS,
                                     metrics_port=0)).start()
    standby = ControllerService(2, zk_chroot, session_timeout_ms=SESSION_MS, metrics_port=0)
    try:
        wait_until(lambda: node.is_controller, 30, "the broker's controller elected")
        standby.start()
        assert node.metrics.port is not None and standby.metrics_port is not None
        wait_until(lambda: "kafka_controller_ControllerChannelManager_QueueSize"
                   in scrape(node.metrics.port)[0], 30, "the controller's channel to broker 1")
        broker_families, broker_samples = scrape(node.metrics.port)
        standby_families, standby_samples = scrape(standby.metrics_port)
    finally:
        standby.stop()
        node.close()
    for name in CONTROLLER_NAMES:
        assert name in broker_families, name  # the broker's own controller, active
        assert name in standby_families, name  # a candidate that is not the controller
    for name in BROKER_NAMES:
        assert name in broker_families, name
    exposed = broker_families | broker_samples | standby_families | standby_samples
    assert not [n for n in exposed if n.startswith("kafka_") and n.count("_") < 3
                or not n.startswith(("kafka_", "kcontrol_", "python_", "process_"))]
    exprs = dashboard_exprs()
    assert len(exprs) >= 13
    referenced = set()
    for title, expr in exprs:
        names = metric_names(expr)
        assert names, (title, expr)
        assert names <= exposed, (title, sorted(names - exposed))
        referenced |= names
    # the panels the dashboard is there for
    for name in ("kafka_controller_KafkaController_ActiveControllerCount",
                 "kafka_controller_KafkaController_OfflinePartitionsCount",
                 "kafka_controller_ControllerStats_UncleanLeaderElectionsPerSec_total",
                 "kafka_controller_ControllerEventManager_EventQueueSize",
                 "kafka_server_KafkaServer_BrokerState"):
        assert name in referenced, name


def test_metric_names_reads_promql() -> None:
    expr = ('histogram_quantile(0.99, sum by (le, instance) '
            '(rate(a_b_bucket{job="x", le!="1"}[5m]))) / on (instance) c_total')
    assert metric_names(expr) == {"a_b_bucket", "c_total"}
