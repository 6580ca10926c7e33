"""The Raft node's timers, kept by the event thread itself.

The core arms and cancels timers by ``(kind, destination)`` (``fsm.raft.effects.ArmTimer``,
``CancelTimer``); re-arming replaces. Unlike the ZooKeeper-mode controller's timers (one
``threading.Timer`` each, firing into the queue) these are deadlines the event thread waits on
between queue items: a follower re-arms its fetch timer and a leader its request timers on
every Fetch, which would start a thread per message; and with no timer thread, a timer
cancelled or re-armed can never fire afterwards from a thread that had already taken it.

The jitter the core asks for (``jitter_ms``) is drawn here, from ``random`` (the core has no
randomness): the delay is ``delay_ms`` plus a uniform draw in ``[0, jitter_ms]``.
"""

from __future__ import annotations

import heapq
import itertools
import random

TimerKey = tuple[str, int]
"""``(kind, destination)``; ``destination`` is -1 except for per-destination timers."""

MAX_TIMERS = 10_000
"""Bound on armed timers: one per kind and destination, so a handful per voter; more is a
bug in the caller."""


class Deadlines:
    """Armed timers as deadlines in milliseconds of a monotonic clock the caller passes in
    (``now_ms``); the event thread alone calls it (no lock)."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()
        self._armed: dict[TimerKey, tuple[float, int]] = {}  # key -> (deadline, generation)
        self._heap: list[tuple[float, int, TimerKey]] = []  # stale entries skipped lazily
        self._gen = itertools.count()

    def arm(self, kind: str, destination: int, delay_ms: int, jitter_ms: int,
            now_ms: float) -> float:
        """Arm (or re-arm) ``(kind, destination)``; returns its deadline."""
        if delay_ms < 0 or jitter_ms < 0:
            raise ValueError(f"timer {kind}/{destination}: negative delay {delay_ms} or "
                             f"jitter {jitter_ms}")
        key = (kind, destination)
        if key not in self._armed and len(self._armed) >= MAX_TIMERS:
            raise RuntimeError(f"more than {MAX_TIMERS} timers armed: a leak")
        jitter = self._rng.uniform(0, jitter_ms) if jitter_ms else 0.0
        deadline = now_ms + delay_ms + jitter
        gen = next(self._gen)
        self._armed[key] = (deadline, gen)
        heapq.heappush(self._heap, (deadline, gen, key))
        if len(self._heap) > 4 * len(self._armed) + 64:  # re-arms leave stale entries
            self._heap = [(d, g, k) for k, (d, g) in self._armed.items()]
            heapq.heapify(self._heap)
        return deadline

    def cancel(self, kind: str, destination: int) -> None:
        self._armed.pop((kind, destination), None)

    def cancel_all(self) -> None:
        self._armed.clear()
        self._heap.clear()

    def armed(self) -> set[TimerKey]:
        return set(self._armed)

    def next_deadline(self) -> float | None:
        """The earliest deadline armed, or None."""
        heap = self._heap
        while heap:
            deadline, gen, key = heap[0]
            if self._armed.get(key, (None, None))[1] == gen:
                return deadline
            heapq.heappop(heap)
        return None

    def pop_due(self, now_ms: float) -> list[TimerKey]:
        """The timers whose deadline is at or before ``now_ms``, earliest first; they are
        disarmed (a timer fires once per arming)."""
        due: list[TimerKey] = []
        heap = self._heap
        while heap and heap[0][0] <= now_ms:
            _, gen, key = heapq.heappop(heap)
            if self._armed.get(key, (None, None))[1] == gen:
                del self._armed[key]
                due.append(key)
        return due
