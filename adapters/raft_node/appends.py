"""Appends from a local client (the admin socket, tests, benchmarks): a ``LocalAppend`` is
queued for the event thread, which makes it the core's ``ClientAppend`` at the log end in
the leader's epoch; its ``AppendTicket`` says when it is committed (the high watermark passed
its end) or why it failed (not the leader, refused, leadership lost before the commit)."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

MAX_PENDING = 100_000
"""Bound on appends waiting for their commit; a client past it is refused."""


class AppendTicket:
    """One append's fate, set by the event thread, waited on by its client."""

    __slots__ = ("base_offset", "end_offset", "epoch", "error", "_done")

    def __init__(self) -> None:
        self.base_offset = -1
        self.end_offset = -1
        self.epoch = -1
        self.error: str | None = None
        self._done = threading.Event()

    def commit(self) -> None:
        self._done.set()

    def fail(self, error: str) -> None:
        self.error = error
        self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float) -> bool:
        """True once committed or failed (``error``); False if neither within ``timeout``."""
        return self._done.wait(timeout)


@dataclass(frozen=True, slots=True)
class LocalAppend:
    """Queue item: append ``records`` as one batch if this node leads."""

    records: tuple[Any, ...]
    ticket: AppendTicket


class PendingAppends:
    """Tickets appended and not yet committed, in offset order (event thread only)."""

    def __init__(self) -> None:
        self._q: deque[AppendTicket] = deque()

    def __len__(self) -> int:
        return len(self._q)

    def add(self, ticket: AppendTicket) -> None:
        self._q.append(ticket)

    def committed(self, high_watermark: int) -> None:
        q = self._q
        while q and q[0].end_offset <= high_watermark:
            q.popleft().commit()

    def fail_all(self, error: str) -> None:
        while self._q:
            self._q.popleft().fail(error)
