"""``ControlledShutdownRouter``: a ControlledShutdown that reached this broker's data plane,
handed to the local controller service, and its answer back to the waiting handler.

The broker's request handler calls ``request(req)``; it blocks (at most ``timeout_s``):

- no controller service attached, or it is not the active controller -> NOT_CONTROLLER
  right away (the sender looks the controller up again and retries);
- otherwise ``submit(ControlledShutdown(req, correlation))`` enqueues the event for the
  controller's event thread, and the handler waits for ``reply(...)``, which the
  controller's channels call for the ``ReplyControlledShutdown`` effect
  (``ControllerChannelManager.reply_controlled_shutdown``);
- no answer in time -> REQUEST_TIMED_OUT; the controller resigning (``fail_all``, from
  the channels' ``reset``) -> NOT_CONTROLLER.

The answer is written on the data-plane connection that carried the request, in order.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

from fsm.errors import ErrorCode
from fsm.events import ControlledShutdown
from fsm.requests import ControlledShutdownRequest, ControlledShutdownResponse

log = logging.getLogger("kcontrol.network")

DEFAULT_TIMEOUT_S = 30.0


class _Waiter:
    __slots__ = ("done", "response", "broker_id")

    def __init__(self, broker_id: int) -> None:
        self.done = threading.Event()
        self.response: ControlledShutdownResponse | None = None
        self.broker_id = broker_id


class ControlledShutdownRouter:
    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pending: dict[int, _Waiter] = {}
        self._ids = itertools.count(1)
        self._submit: Callable[[object], bool] | None = None
        self._is_active: Callable[[], bool] = lambda: False

    def attach(self, submit: Callable[[object], bool], is_active: Callable[[], bool]) -> None:
        """The local controller service: ``submit`` = ``ControllerService.submit``,
        ``is_active`` = ``lambda: service.is_active``."""
        with self._lock:
            self._submit, self._is_active = submit, is_active

    def detach(self) -> None:
        with self._lock:
            self._submit = None
        self.fail_all(ErrorCode.NOT_CONTROLLER)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def request(self, req: ControlledShutdownRequest,
                timeout_s: float | None = None) -> ControlledShutdownResponse:
        with self._lock:
            submit, active = self._submit, self._is_active
        if submit is None or not active():
            return ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)
        waiter = _Waiter(req.broker_id)
        with self._lock:
            correlation = next(self._ids)
            self._pending[correlation] = waiter
        try:
            if not submit(ControlledShutdown(req, correlation)):
                return ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)
            if not waiter.done.wait(self.timeout_s if timeout_s is None else timeout_s):
                log.warning("ControlledShutdown of broker %d: no answer in time",
                            req.broker_id)
                return ControlledShutdownResponse(ErrorCode.REQUEST_TIMED_OUT)
            assert waiter.response is not None
            return waiter.response
        finally:
            with self._lock:
                self._pending.pop(correlation, None)

    def reply(self, broker_id: int, correlation: int,
              response: ControlledShutdownResponse) -> bool:
        """The controller's answer; False when nobody waits for it any more."""
        with self._lock:
            waiter = self._pending.get(correlation)
        if waiter is None or waiter.broker_id != broker_id:
            log.info("ControlledShutdown answer for broker %d (correlation %d): nobody waits",
                     broker_id, correlation)
            return False
        waiter.response = response
        waiter.done.set()
        return True

    def fail_all(self, error: ErrorCode = ErrorCode.NOT_CONTROLLER) -> None:
        with self._lock:
            waiters = list(self._pending.values())
        for w in waiters:
            if not w.done.is_set():
                w.response = ControlledShutdownResponse(error)
                w.done.set()
