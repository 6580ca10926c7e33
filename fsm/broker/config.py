"""The broker core's constant configuration (passed again to ``BrokerCore.restore``)."""

from __future__ import annotations

from dataclasses import dataclass

from fsm.values import Endpoint


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """What a broker knows about itself before it starts.

    ``controlled_shutdown_max_retries`` is Kafka's ``controlled.shutdown.max.retries``: the
    number of ControlledShutdown attempts (the first one included) before the broker shuts
    down anyway. ``controlled_shutdown_retry_backoff_ms`` is the delay of the
    CONTROLLED_SHUTDOWN_RETRY timer, which serves both as the answer's timeout and as the
    back-off after a failed answer. ``controlled_shutdown_enable`` is Kafka's
    ``controlled.shutdown.enable``: when off, SIGTERM goes straight to SHUTTING_DOWN.
    ``endpoints``/``rack`` are for the adapter that executes ``Register``; the core only
    carries them. ``applied_log_size`` bounds ``BrokerCore.applied_log``.
    ``isr_change_propagation_ms`` is the delay of the ISR_CHANGE_PROPAGATION timer, after
    which an ISR change notification that failed on a lost ZooKeeper connection is written
    again (Kafka's ``ReplicaManager`` propagates pending ISR changes every 2.5 s).
    """

    broker_id: int
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    endpoints: tuple[Endpoint, ...] = ()
    rack: str | None = None
    applied_log_size: int = 64
    isr_change_propagation_ms: int = 2500
