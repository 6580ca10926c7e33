"""The node's event queue: bounded, FIFO within each of two lanes, the Raft lane first.

* the **Raft lane**: messages from the other voters (``Received``) and ``Start``/``Resign``
  -- few at a time (each peer keeps a bounded number of requests in flight);
* the **client lane**: local appends, controller requests, reads run on the event thread
  (``Call``) -- as many as clients care to send.

The event thread takes the Raft lane's next item whenever there is one. A client that
queues thousands of appends (each maybe an fsync) thus never holds a follower's Fetch or a
candidate's Vote behind them for longer than one item: a leader busy with its clients still
answers its followers within their fetch timeout, and keeps its leadership.

Each lane holds at most ``capacity`` items; a producer waits (backpressure) up to
``put_timeout``, then the item is dropped with an ERROR line and ``put`` returns False.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

log = logging.getLogger("kcontrol.raft.queue")

DEFAULT_CAPACITY = 10_000


class _Closed:
    def __repr__(self) -> str:
        return "CLOSED"


CLOSED = _Closed()


class Inbox:
    def __init__(self, capacity: int = DEFAULT_CAPACITY, put_timeout: float = 5.0) -> None:
        if capacity < 1:
            raise ValueError(f"queue capacity must be at least 1, not {capacity}")
        self.capacity = capacity
        self.put_timeout = put_timeout
        self._raft: deque[object] = deque()
        self._client: deque[object] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0

    @property
    def size(self) -> int:
        return len(self._raft) + len(self._client)

    def put(self, item: object, *, client: bool = False) -> bool:
        """Queue ``item`` in its lane; False if it was dropped (full too long, or closed)."""
        lane = self._client if client else self._raft
        with self._cond:
            if len(lane) >= self.capacity:
                deadline = time.monotonic() + self.put_timeout
                while len(lane) >= self.capacity and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.dropped += 1
                        log.error("raft node queue full (%d %s items): dropped %r",
                                  self.capacity, "client" if client else "Raft", item)
                        return False
                    self._cond.wait(left)
            if self._closed:
                return False
            lane.append(item)
            self._cond.notify_all()
            return True

    def get(self, timeout: float | None) -> object | None:
        """The next item (the Raft lane's first), ``CLOSED`` once closed, None on timeout."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._raft and not self._client and not self._closed:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(left)
            if self._closed:
                return CLOSED
            item = self._raft.popleft() if self._raft else self._client.popleft()
            self._cond.notify_all()
            return item

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
