"""The broker's Prometheus gauges: Kafka's BrokerState values, MetadataLag from the high
watermark and the applied offset (never negative), fenced until the image says otherwise;
served on /metrics under the JMX exporter's names."""

from __future__ import annotations

import urllib.request

from adapters.kraft_broker.metrics import BrokerMetrics, figures


def test_figures_from_a_status() -> None:
    assert figures({"state": "RUNNING", "metadata_offset": 7,
                    "metadata_high_watermark": 12, "fenced": False}) == {
        "BrokerState": 3, "MetadataLag": 4, "LastAppliedRecordOffset": 7, "IsFenced": 0}
    assert figures({"state": "PENDING_CONTROLLED_SHUTDOWN", "metadata_offset": 11,
                    "metadata_high_watermark": 3, "fenced": None}) == {
        "BrokerState": 6, "MetadataLag": 0, "LastAppliedRecordOffset": 11, "IsFenced": 1}
    assert figures({"broker_id": 1})["BrokerState"] == 0  # not started yet


def test_served_under_kafkas_names() -> None:
    status = {"state": "STARTING", "metadata_offset": -1, "metadata_high_watermark": 5}
    metrics = BrokerMetrics.serve(lambda: status, 0)
    try:
        url = f"http://127.0.0.1:{metrics.port}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        assert "kafka_server_KafkaServer_BrokerState 1.0" in text
        assert "kafka_server_KafkaServer_MetadataLag 5.0" in text
        status["state"] = "RUNNING"
        status["metadata_offset"] = 4
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        assert "kafka_server_KafkaServer_BrokerState 3.0" in text
        assert "kafka_server_KafkaServer_MetadataLag 0.0" in text
    finally:
        metrics.close()
