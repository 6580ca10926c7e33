"""The controller service: binds the pure ``fsm.controller.Controller`` to a real ZooKeeper
ensemble (seed 000's "single-threaded event queue model").

Modules: ``service`` (``ControllerService``: the event thread, session mapping, election,
effects), ``event_queue`` (the bounded, coalescing queue), ``timers``, ``metrics``
(Prometheus, Kafka's names). Where its requests go is the network's: the ``BrokerChannels``
interface and ``LoggingChannels`` are in ``adapters.network.broker_channels``, implemented by
``adapters.network.channel_manager``.
"""

from adapters.controller.event_queue import EventQueue, Marker
from adapters.controller.service import ControllerService, ServiceError

__all__ = [
    "ControllerService",
    "EventQueue",
    "Marker",
    "ServiceError",
]
