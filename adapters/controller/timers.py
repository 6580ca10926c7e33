"""Controller timers (``StartTimer``/``CancelTimer``): one ``threading.Timer`` per kind; firing
only enqueues ``TimerFired(kind)`` for the event thread."""

from __future__ import annotations

import threading
from collections.abc import Callable

from fsm.events import TimerFired, TimerKind


class Timers:
    def __init__(self, enqueue: Callable[[object], object]) -> None:
        self._enqueue = enqueue
        self._timers: dict[TimerKind, threading.Timer] = {}
        self._lock = threading.Lock()

    def start(self, kind: TimerKind, delay_ms: int) -> None:
        with self._lock:
            old = self._timers.pop(kind, None)
            if old is not None:
                old.cancel()
            t = threading.Timer(max(delay_ms, 0) / 1000.0, self._fire, (kind, None))
            t.daemon = True
            t.name = f"kcontrol-timer-{kind.value}"
            t.args = (kind, t)
            self._timers[kind] = t
            t.start()

    def _fire(self, kind: TimerKind, timer: threading.Timer) -> None:
        with self._lock:
            if self._timers.get(kind) is not timer:
                return  # cancelled or replaced meanwhile
            del self._timers[kind]
        self._enqueue(TimerFired(kind))

    def cancel(self, kind: TimerKind) -> None:
        with self._lock:
            t = self._timers.pop(kind, None)
        if t is not None:
            t.cancel()

    def cancel_all(self) -> None:
        with self._lock:
            timers, self._timers = list(self._timers.values()), {}
        for t in timers:
            t.cancel()

    def pending(self) -> set[TimerKind]:
        with self._lock:
            return set(self._timers)
