"""``ServicePort``: the live controller service's side of the controller driver
(``fsm.driver``).

The service runs the world's loop (``ControllerDriver``) and differs from it only here: a
write is committed at once by ``ZkWriter`` (the event thread blocks on it), so ``write``
answers with its result; a marker is read by kazoo (``ZkReader``; a read that fails on a
lost connection is held by the service until it is connected again); requests go to the
channel manager, timers to ``Timers``; electing and resigning move the watch generation,
the metrics and ``/controller`` (``ControllerService._became``, ``_resigned``,
``_release_controller``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsm.effects import CancelTimer, ReplyControlledShutdown, SendRequest, StartTimer, ZkWrite
from fsm.events import WriteResult
from fsm.reads.markers import Marker
from fsm.values import BrokerInfo

if TYPE_CHECKING:
    from adapters.controller.service import ControllerService


class ServicePort:
    """The port of controller service ``service`` (one per service; event thread only)."""

    __slots__ = ("service",)

    def __init__(self, service: ControllerService) -> None:
        self.service = service

    def write(self, write: ZkWrite) -> WriteResult | None:
        return self.service._commit(write)

    def read(self, marker: Marker) -> object | None:
        return self.service._materialize(marker)

    def defer(self, items: Sequence[object]) -> None:
        self.service.queue.put_front_many(list(items))

    def send(self, effect: SendRequest) -> None:
        self.service.channels.send(effect.broker_id, effect.request)

    def reply_controlled_shutdown(self, effect: ReplyControlledShutdown) -> None:
        self.service.channels.reply_controlled_shutdown(effect.broker_id, effect.correlation,
                                                        effect.response)

    def announce_brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        self.service.channels.brokers(live)

    def remove_broker_channel(self, broker_id: int) -> None:
        self.service.channels.remove_broker(broker_id)

    def start_timer(self, effect: StartTimer) -> None:
        self.service.timers.start(effect.kind, effect.delay_ms)

    def cancel_timer(self, effect: CancelTimer) -> None:
        self.service.timers.cancel(effect.kind)

    def became_controller(self, epoch: int) -> None:
        self.service._became(epoch)

    def resigned(self, reason: str) -> None:
        self.service._resigned(reason)

    def release_controller(self) -> None:
        service = self.service
        if not service.controller.is_active:
            service._release_controller()
