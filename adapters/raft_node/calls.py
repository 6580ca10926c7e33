"""Work other threads hand the event thread besides Raft events: ``Call`` (run a function
between two events: reads of the log or of the controller's image, which only the event
thread may touch) and ``Replies`` (the answers a hosted quorum controller sends through
``Reply(token, ...)``, each to the future its request is waiting on)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

MAX_WAITING = 100_000
"""Bound on controller requests waiting for their answer."""


@dataclass(frozen=True, slots=True)
class Call:
    """Queue item: run ``fn`` on the event thread and set ``future`` to its result."""

    fn: Callable[[], Any]
    future: Future[Any]

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn()
        except Exception as exc:  # noqa: BLE001 -- handed to the caller
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)


class Replies:
    """Tokens of requests handed to the controller -> their futures (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[int, Future[Any]] = {}
        self._ids = itertools.count(1)

    def open(self) -> tuple[int, Future[Any]]:
        future: Future[Any] = Future()
        with self._lock:
            if len(self._waiting) >= MAX_WAITING:
                future.set_exception(RuntimeError(f"{MAX_WAITING} controller requests "
                                                  "already wait for their answer"))
                return -1, future
            token = next(self._ids)
            self._waiting[token] = future
        return token, future

    def answer(self, token: Any, response: Any) -> bool:
        """Set the answer of ``token``; False if nobody waits on it (any more)."""
        with self._lock:
            future = self._waiting.pop(token, None)
        if future is None:
            return False
        future.set_result(response)
        return True

    def fail(self, token: Any, error: str) -> None:
        with self._lock:
            future = self._waiting.pop(token, None)
        if future is not None:
            future.set_exception(RuntimeError(error))

    def fail_all(self, error: str) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            future.set_exception(RuntimeError(error))
