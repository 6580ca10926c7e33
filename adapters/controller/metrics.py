"""Prometheus metrics of the controller service, named as the Prometheus JMX exporter names
Kafka's ``kafka.controller`` MBeans: ``kafka_controller_<type>_<name>``.

* ``KafkaController``: ActiveControllerCount, OfflinePartitionsCount,
  PreferredReplicaImbalanceCount, GlobalTopicCount, GlobalPartitionCount, ControllerState,
  TopicsToDeleteCount (gauges);
* ``ControllerEventManager``: EventQueueSize (gauge), EventQueueTimeMs (histogram, ms);
* ``ControllerStats``: LeaderElectionRateAndTimeMs (histogram, ms: as in Kafka, the time the
  event thread spends on a BrokerChange event, its read of the live brokers included) and
  UncleanLeaderElectionsPerSec (a counter, ``_total``: leaders elected from outside the ISR).

Each service has its own ``CollectorRegistry`` (several services share a test process). The
cluster gauges are computed on the event thread from the controller's state (never from the
HTTP thread, which would race with the event thread), at most every ``refresh_s`` and at once
after an election or resignation.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from fsm.controller.leader_selection import selector_of
from fsm.controller.records import StateChange
from fsm.events import (
    BrokerChange,
    BrokerResponseReceived,
    ClusterLoaded,
    ControlledShutdown,
    ControllerChange,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TimerFired,
    TimerKind,
    TopicChange,
    TopicDeletionRequest,
)
from fsm.partition_states import PartitionState
from fsm.values import LeaderAndIsr

if TYPE_CHECKING:
    from fsm.controller import Controller

KAFKA_CONTROLLER = "kafka_controller_KafkaController_"
EVENT_MANAGER = "kafka_controller_ControllerEventManager_"
CONTROLLER_STATS = "kafka_controller_ControllerStats_"
_MS_BUCKETS = (1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000)

# Kafka's ControllerState values (kafka.controller.ControllerState)
IDLE = 0
CONTROLLER_STATES: dict[type, int] = {
    ControllerChange: 1,
    ClusterLoaded: 1,
    BrokerChange: 2,
    TopicChange: 3,
    PartitionModification: 3,
    TopicDeletionRequest: 4,
    ReassignmentRequest: 5,
    PreferredElectionRequest: 7,
    ControlledShutdown: 8,
    IsrChangeNotification: 9,
    BrokerResponseReceived: 10,
}


def controller_state_of(event: object) -> int:
    if isinstance(event, TimerFired):
        return 6 if event.kind is TimerKind.AUTO_REBALANCE else 4
    return CONTROLLER_STATES.get(type(event), IDLE)


class ControllerMetrics:
    def __init__(self, refresh_s: float = 1.0) -> None:
        self.registry = CollectorRegistry()
        r = self.registry

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(KAFKA_CONTROLLER + name, doc, registry=r)

        self.active = gauge("ActiveControllerCount", "1 on the active controller, else 0")
        self.offline = gauge("OfflinePartitionsCount",
                             "partitions without a live leader (topics being deleted aside)")
        self.imbalance = gauge("PreferredReplicaImbalanceCount",
                               "partitions not led by their preferred replica (topics being "
                               "deleted aside)")
        self.topics = gauge("GlobalTopicCount", "topics")
        self.partitions = gauge("GlobalPartitionCount", "partitions")
        self.state = gauge("ControllerState", "Kafka's ControllerState of the event in hand")
        self.to_delete = gauge("TopicsToDeleteCount", "topics queued for deletion")
        self.queue_size = Gauge(EVENT_MANAGER + "EventQueueSize",
                                "events waiting for the event thread", registry=r)
        self.queue_time = Histogram(
            EVENT_MANAGER + "EventQueueTimeMs", "time an event waited in the queue (ms)",
            buckets=_MS_BUCKETS, registry=r)
        self.election_time = Histogram(
            CONTROLLER_STATS + "LeaderElectionRateAndTimeMs",
            "time the event thread spent on a broker change (ms), as Kafka's timer",
            buckets=_MS_BUCKETS, registry=r)
        self.unclean = Counter(CONTROLLER_STATS + "UncleanLeaderElectionsPerSec",
                               "leaders elected from outside the ISR", registry=r)
        self.refresh_s = refresh_s
        self._last = 0.0
        self._server: object | None = None
        self.port: int | None = None

    def serve(self, port: int, addr: str = "127.0.0.1") -> int:
        """Start the HTTP endpoint (``port`` 0: an ephemeral one); returns the port."""
        server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        self._server = server
        self.port = server.server_address[1]
        return self.port

    def close(self) -> None:
        server = self._server
        if server is not None:
            server.shutdown()  # type: ignore[attr-defined]
            server.server_close()  # type: ignore[attr-defined]
            self._server = None

    def handled(self, event: object, seconds: float) -> None:
        """Record the time the event thread spent on ``event`` (only a BrokerChange is timed,
        under Kafka's LeaderElectionRateAndTimeMs)."""
        if isinstance(event, BrokerChange):
            self.election_time.observe(seconds * 1000.0)

    def count_elections(self, records: list[StateChange]) -> None:
        """Count the unclean elections among a batch of state-change records: committed
        decisions whose new leader the offline selector took from outside the ISR."""
        unclean = sum(1 for r in records if r.kind == "leader"
                      and isinstance(r.target, LeaderAndIsr)
                      and selector_of(r.reason, r.source, r.target) == "offline-unclean")
        if unclean:
            self.unclean.inc(unclean)

    def refresh(self, controller: Controller, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.refresh_s:
            return
        self._last = now
        active = controller.is_active
        self.active.set(1 if active else 0)
        if not active:
            for g in (self.offline, self.imbalance, self.topics, self.partitions, self.to_delete):
                g.set(0)
            return
        ctx = controller.ctx
        deleting = ctx.to_delete
        # as Kafka's ControllerContext: partitions of topics being deleted are not counted
        offline = sum(1 for tp, s in ctx.partition_state.items()
                      if s is PartitionState.OfflinePartition and tp[0] not in deleting)
        assignment = ctx.assignment
        imbalance = 0
        for tp, st in ctx.states.items():
            replicas = assignment.get(tp)
            if replicas and tp[0] not in deleting and st.leader_and_isr.leader != replicas[0]:
                imbalance += 1
        self.offline.set(offline)
        self.imbalance.set(imbalance)
        self.topics.set(len(ctx.topics))
        self.partitions.set(len(assignment))
        self.to_delete.set(len(deleting))
