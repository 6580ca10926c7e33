"""``ExecutorPort``: the live broker process's side of the broker driver
(``fsm.driver.BrokerDriver``), over its ``BrokerExecutor``.

The process runs the world's loop and differs from it only here: the core is called under
the lock the request handlers hold too, a slice of events at a time; consecutive writes are
pipelined and ISR change notifications merged (``BrokerExecutor._write_many``); a read or
registration that fails on the connection is tried again after ``retry_s``; the
ControlledShutdown goes out on a thread of its own; an exit is ``on_exit``. A response is
the request handler's (``adapters.network.broker_handler``): one here is logged and dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsm.effects import (
    BrokerZkWrite,
    CancelTimer,
    Exit,
    LoadBrokerMetadata,
    Register,
    Respond,
    SendControlledShutdown,
    StartTimer,
)
from fsm.events import BrokerWriteResult

if TYPE_CHECKING:
    from adapters.broker.effects import BrokerExecutor

log = logging.getLogger("kcontrol.broker")


class ExecutorPort:
    """The port of broker executor ``executor`` (its event thread only)."""

    __slots__ = ("executor",)

    may_halt = True  # ``stop`` sets ``_stopping`` from another thread

    def __init__(self, executor: BrokerExecutor) -> None:
        self.executor = executor

    def step(self, events: Sequence[object]) -> list[object]:
        return self.executor._handle_all(list(events))

    def halted(self) -> bool:
        return self.executor._stopping.is_set()

    def write(self, writes: Sequence[BrokerZkWrite]) -> list[BrokerWriteResult]:
        return self.executor._write_many(list(writes))

    def respond(self, effect: Respond) -> object | None:
        log.error("%s a response outside a request (correlation %d) dropped",
                  self.executor.prefix, effect.correlation)
        return None

    def send_controlled_shutdown(self, effect: SendControlledShutdown) -> object | None:
        self.executor._send_controlled_shutdown(effect.request)
        return None

    def register(self, effect: Register) -> object | None:
        return self.executor._register()

    def load_metadata(self, effect: LoadBrokerMetadata) -> object | None:
        return self.executor._load()

    def start_timer(self, effect: StartTimer) -> object | None:
        self.executor.timers.start(effect.kind, effect.delay_ms)
        return None

    def cancel_timer(self, effect: CancelTimer) -> object | None:
        self.executor.timers.cancel(effect.kind)
        return None

    def exit(self, effect: Exit) -> object | None:
        executor = self.executor
        log.info("%s shutdown complete in the core: exiting", executor.prefix)
        executor.on_exit()
        return None
