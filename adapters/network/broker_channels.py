"""Where the controller's requests go: the ``BrokerChannels`` interface, which the controller
service (``adapters.controller``) is given.

``channel_manager.ControllerChannelManager`` implements it with real connections (Kafka's
ControllerChannelManager: one queue and one sender thread per broker). ``LoggingChannels`` logs one line per request and keeps
them (tests read ``sent``). A channel hands broker answers back with ``deliver(event)``
(``BrokerResponseReceived``, ``ControlledShutdown``), which enqueues them for the event thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Protocol

from fsm.requests import ControlledShutdownResponse, ControllerRequest
from fsm.values import BrokerInfo

log = logging.getLogger("kcontrol.controller.channels")

Deliver = Callable[[object], None]


class BrokerChannels(Protocol):
    def start(self, deliver: Deliver) -> None:
        """Called once by the service; ``deliver`` enqueues an event for the event thread."""

    def brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        """The registered brokers as last read (endpoints, epochs): before every event that
        carries them is handed to the controller."""

    def send(self, broker_id: int, request: ControllerRequest) -> None:
        """Queue a (stamped) request to ``broker_id``; never blocks the event thread for long."""

    def reply_controlled_shutdown(self, broker_id: int, correlation: int,
                                  response: ControlledShutdownResponse) -> None: ...

    def remove_broker(self, broker_id: int) -> None:
        """The broker left: drop its queue and connection."""

    def reset(self) -> None:
        """The controller resigned: drop every queue (requests not sent are discarded)."""

    def close(self) -> None: ...


class LoggingChannels:
    """Logs one line per request; records ``(broker_id, request)`` in ``sent``."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.log = logger or log
        self.sent: list[tuple[int, object]] = []
        self.replies: list[tuple[int, int, ControlledShutdownResponse]] = []
        self.removed: list[int] = []
        self.live: tuple[BrokerInfo, ...] = ()
        self.deliver: Deliver | None = None
        self._lock = threading.Lock()

    def start(self, deliver: Deliver) -> None:
        self.deliver = deliver

    def brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        self.live = live

    def send(self, broker_id: int, request: ControllerRequest) -> None:
        with self._lock:
            self.sent.append((broker_id, request))
        self.log.info("-> broker %d: %s", broker_id, _describe(request))

    def reply_controlled_shutdown(self, broker_id: int, correlation: int,
                                  response: ControlledShutdownResponse) -> None:
        with self._lock:
            self.replies.append((broker_id, correlation, response))
        self.log.info("-> broker %d: ControlledShutdownResponse %s remaining=%d", broker_id,
                      response.error.name, len(response.remaining))

    def remove_broker(self, broker_id: int) -> None:
        with self._lock:
            self.removed.append(broker_id)
        self.log.info("remove channel to broker %d", broker_id)

    def reset(self) -> None:
        self.log.info("resigned: channels reset")

    def close(self) -> None:
        pass

    def requests(self, api: str | None = None) -> list[tuple[int, object]]:
        with self._lock:
            return [(b, r) for b, r in self.sent if api is None or getattr(r, "api", None) == api]


def _describe(request: object) -> str:
    api = getattr(request, "api", type(request).__name__)
    parts = [api]
    for field in ("controller_epoch", "broker_epoch"):
        if hasattr(request, field):
            parts.append(f"{field}={getattr(request, field)}")
    for field in ("partitions", "partition_states", "states"):
        v = getattr(request, field, None)
        if v is not None:
            with contextlib.suppress(TypeError):
                parts.append(f"{field}={len(v)}")
            break
    return " ".join(parts)
