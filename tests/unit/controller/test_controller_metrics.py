"""The controller's Prometheus registry: Kafka's names as the JMX exporter writes them, and
the unclean-election counter fed from the state-change records."""

from __future__ import annotations

from prometheus_client import generate_latest

from adapters.controller.metrics import ControllerMetrics
from fsm.controller.records import INIT, OFFLINE, PREFERRED, StateChange
from fsm.events import BrokerChange
from fsm.values import LeaderAndIsr


def _samples(m: ControllerMetrics) -> dict[str, float]:
    out = {}
    for line in generate_latest(m.registry).decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_names_carry_the_mbean_type() -> None:
    names = set(_samples(ControllerMetrics()))
    for name in ("kafka_controller_KafkaController_ActiveControllerCount",
                 "kafka_controller_KafkaController_OfflinePartitionsCount",
                 "kafka_controller_KafkaController_GlobalPartitionCount",
                 "kafka_controller_KafkaController_GlobalTopicCount",
                 "kafka_controller_KafkaController_PreferredReplicaImbalanceCount",
                 "kafka_controller_KafkaController_ControllerState",
                 "kafka_controller_KafkaController_TopicsToDeleteCount",
                 "kafka_controller_ControllerEventManager_EventQueueSize",
                 "kafka_controller_ControllerEventManager_EventQueueTimeMs_count",
                 "kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count",
                 "kafka_controller_ControllerStats_UncleanLeaderElectionsPerSec_total"):
        assert name in names, name


def test_unclean_elections_are_counted_from_committed_decisions() -> None:
    m = ControllerMetrics()
    before = LeaderAndIsr(1, 3, (1,), 1)
    records = [
        StateChange("leader", ("t", 0), before, LeaderAndIsr(2, 4, (2,), 1), OFFLINE),  # unclean
        StateChange("leader", ("t", 1), LeaderAndIsr(1, 3, (1, 2), 1),
                    LeaderAndIsr(2, 4, (2,), 1), OFFLINE),  # clean: 2 was in the ISR
        StateChange("leader", ("t", 2), None, LeaderAndIsr(1, 0, (1,), 1), INIT),
        StateChange("leader", ("t", 3), before, LeaderAndIsr(2, 4, (2,), 1), PREFERRED),
        StateChange("partition", ("t", 4), "", "", "offline"),
    ]
    m.count_elections(records)
    m.count_elections([])
    assert _samples(m)["kafka_controller_ControllerStats_UncleanLeaderElectionsPerSec_total"] == 1


def test_only_broker_changes_are_timed_as_leader_elections() -> None:
    m = ControllerMetrics()
    m.handled(BrokerChange(()), 0.25)
    m.handled(object(), 5.0)
    s = _samples(m)
    assert s["kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count"] == 1
    assert s["kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_sum"] == 250.0
