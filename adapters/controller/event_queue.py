"""The controller's event queue: bounded, FIFO, with markers that coalesce.

Items are events (``fsm.events`` values) or ``Marker``s: "re-read X" (what a kazoo watch
callback enqueues; the event thread reads the data when it processes the marker). A marker
already queued makes an identical new one redundant -- the read happens when the queued one is
processed and sees the newest data, re-registering the watch -- so identical markers coalesce
(always, not only when full). Markers are always accepted (kazoo's threads must never block);
distinct markers are bounded by the number of watches (7 + one per topic).

Other events (broker responses, controlled shutdowns, timers) block their producer while the
queue holds ``capacity`` items (backpressure on the network and timer threads), up to
``put_timeout``, then are dropped with an ERROR line. ``SessionStateChange`` (kazoo's listener)
is always accepted.

Metrics hooks: ``size`` (EventQueueSize), and ``get`` returns each item's enqueue time
(EventQueueTimeMs); ``coalesced`` counts markers merged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

from fsm.events import SessionStateChange
from fsm.reads.markers import Marker

__all__ = ["CLOSED", "DEFAULT_CAPACITY", "EventQueue", "Marker"]

log = logging.getLogger("kcontrol.controller.queue")

DEFAULT_CAPACITY = 10_000


class _Closed:
    pass


CLOSED = _Closed()


class EventQueue:
    def __init__(self, capacity: int = DEFAULT_CAPACITY, put_timeout: float = 30.0) -> None:
        if capacity < 1:
            raise ValueError(f"queue capacity must be at least 1, not {capacity}")
        self.capacity = capacity
        self.put_timeout = put_timeout
        self._items: deque[tuple[object, float]] = deque()
        self._markers: set[Marker] = set()
        self._cond = threading.Condition()
        self._closed = False
        self.coalesced = 0
        self.dropped = 0

    @property
    def size(self) -> int:
        return len(self._items)

    def put(self, item: object, *, front: bool = False) -> bool:
        """Enqueue ``item``; False when it was coalesced or dropped."""
        with self._cond:
            if self._closed:
                return False
            if isinstance(item, Marker):
                if item in self._markers:
                    self.coalesced += 1
                    return False
                self._markers.add(item)
            elif not isinstance(item, SessionStateChange) and len(self._items) >= self.capacity:
                deadline = time.monotonic() + self.put_timeout
                while len(self._items) >= self.capacity and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.dropped += 1
                        log.error("event queue full (%d): dropped %r", self.capacity, item)
                        return False
                    self._cond.wait(left)
            entry = (item, time.monotonic())
            if front:
                self._items.appendleft(entry)
            else:
                self._items.append(entry)
            self._cond.notify_all()
            return True

    def put_front_many(self, items: Iterable[object]) -> None:
        """Put ``items`` back at the front, in their order (held events after a pause)."""
        with self._cond:
            now = time.monotonic()
            for item in reversed(list(items)):
                if isinstance(item, Marker):
                    if item in self._markers:
                        self.coalesced += 1
                        continue
                    self._markers.add(item)
                self._items.appendleft((item, now))
            self._cond.notify_all()

    def get(self, timeout: float | None = None) -> tuple[object, float] | None:
        """The next item and its enqueue time (monotonic); ``(CLOSED, t)`` once closed; None
        on timeout."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._items and not self._closed:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(left)
            if self._closed:
                return CLOSED, time.monotonic()
            item, t = self._items.popleft()
            if isinstance(item, Marker):
                self._markers.discard(item)
            self._cond.notify_all()
            return item, t

    def retain(self, keep: Callable[[object], bool]) -> int:
        """Drop the queued items ``keep`` refuses; returns how many were dropped."""
        with self._cond:
            before = len(self._items)
            self._items = deque(e for e in self._items if keep(e[0]))
            self._markers = {e[0] for e in self._items if isinstance(e[0], Marker)}
            self._cond.notify_all()
            return before - len(self._items)

    def clear_and_put(self, item: object) -> None:
        """Kafka's ``clearAndPut``: forget everything queued, then ``item`` (session expiry)."""
        with self._cond:
            self._items.clear()
            self._markers.clear()
            self._items.append((item, time.monotonic()))
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
