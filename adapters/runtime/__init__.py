"""The controller service: binds the pure ``fsm.controller.Controller`` to a real ZooKeeper
ensemble (seed 000's "single-threaded event queue model").

Modules: ``service`` (``ControllerService``: the event thread, session mapping, election,
effects), ``event_queue`` (the bounded, coalescing queue), ``channels`` (the ``BrokerChannels``
interface and ``LoggingChannels``), ``timers``, ``metrics`` (Prometheus, Kafka's names).
"""

from adapters.runtime.channels import BrokerChannels, LoggingChannels
from adapters.runtime.event_queue import EventQueue, Marker
from adapters.runtime.service import ControllerService, ServiceError

__all__ = [
    "BrokerChannels",
    "ControllerService",
    "EventQueue",
    "LoggingChannels",
    "Marker",
    "ServiceError",
]
