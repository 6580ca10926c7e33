"""The KRaft broker core's constant configuration."""

from __future__ import annotations

from dataclasses import dataclass

from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature


@dataclass(frozen=True, slots=True)
class KRaftBrokerConfig:
    """What a KRaft broker knows about itself before it starts.

    ``listeners``, ``rack`` and ``supported_features`` go into its BrokerRegistration.
    ``heartbeat_interval_ms`` is Kafka's ``broker.heartbeat.interval.ms``: the delay between
    two heartbeats, and the back-off after a failed registration or heartbeat.
    ``initial_registration_timeout_ms`` is ``initial.broker.registration.timeout.ms``: a
    broker that has not registered that long after ``Start`` shuts down. Kafka heartbeats
    faster while it waits to catch up (``starting_heartbeat_ms``, 10 ms). While it waits to be
    told it may shut down, a broker heartbeats every ``shutdown_heartbeat_ms`` (50 ms): Kafka
    sends only the second heartbeat of a controlled shutdown that soon and the rest at the
    interval, so the shutdown's last step waited up to an interval after it was possible.
    ``controlled_shutdown_enable`` is ``controlled.shutdown.enable``: when off, SIGTERM in
    RUNNING goes straight to SHUTTING_DOWN (the controller fences the broker when its lease
    runs out)."""

    broker_id: int
    cluster_id: str
    listeners: tuple[BrokerEndpoint, ...] = ()
    rack: str | None = None
    supported_features: tuple[BrokerFeature, ...] = ()
    heartbeat_interval_ms: int = 3000
    initial_registration_timeout_ms: int = 60000
    starting_heartbeat_ms: int = 10
    shutdown_heartbeat_ms: int = 50
    controlled_shutdown_enable: bool = True
