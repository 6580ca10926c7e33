"""One plane's request queue and its handler threads (Kafka's RequestChannel +
KafkaRequestHandlerPool), and the ``RequestHandler`` protocol they call.

A listener's selector thread parses a request and ``put``s it; ``put`` **blocks** while the
queue is full (Kafka's ``requestQueue.put``): back-pressure, never a drop. While it waits,
that listener reads nothing more -- on the data plane this is exactly the stall KIP-291
describes, which is why the control plane has its own listener, queue and handler.

A handler thread takes a request, calls ``handler.handle(api_key, version, header, body)``,
encodes the answer (``None``: nothing to send, e.g. a request with no response) and hands
the frame back to the listener that read it (``QueuedRequest.reply``). An exception in the
handler or an answer that does not encode closes that connection only.

Metrics (``PlaneMetrics.sample``): queue size, requests waiting to enter the full queue,
the handler idle ratio (time the handler threads spent waiting for work / wall time, over
the interval since the previous sample, averaged over the threads) and requests/s over the
same interval, plus totals.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.host.thread_priority import raise_priority
from adapters.network.codec import RequestHeader, encode_response_pieces

log = logging.getLogger("kcontrol.network")


class Plane(enum.Enum):
    CONTROL = "control"
    DATA = "data"


class RequestHandler(Protocol):
    def handle(self, api_key: int, version: int, header: RequestHeader,
               body: dict[str, Any]) -> dict[str, Any] | bytes | None:
        """The response body for this request (same api and version), or None for none;
        ``bytes`` is a body already encoded for that version."""


Reply = Callable[[bytes | tuple[bytes, ...] | None, bool], None]
"""``reply(frame, close)``: write ``frame`` (None: nothing; a tuple: the frame's pieces, written
one after the other without being joined) on the request's connection,
then close it if ``close``; the listener then reads that connection's next request."""


@dataclass(slots=True)
class QueuedRequest:
    header: RequestHeader
    body: dict[str, Any]
    reply: Reply
    connection: str  # for logs: "PLAINTEXT#3 127.0.0.1:50412"
    enqueued: float = field(default_factory=time.monotonic)


_STOP = object()


class PlaneMetrics:
    def __init__(self, threads: int) -> None:
        self._lock = threading.Lock()
        self._threads = threads
        self._idle_acc = 0.0
        self._idle_since: dict[int, float] = {}
        self._requests = 0
        self._last: tuple[float, float, int] | None = None  # (time, idle total, requests)
        self.waiting_puts = 0

    def idle(self, tid: int) -> None:
        with self._lock:
            self._idle_since[tid] = time.monotonic()

    def busy(self, tid: int, count: bool = True) -> None:
        with self._lock:
            since = self._idle_since.pop(tid, None)
            if since is not None:
                self._idle_acc += time.monotonic() - since
            self._requests += count

    def sample(self) -> dict[str, float]:
        with self._lock:
            now = time.monotonic()
            idle_total = self._idle_acc + sum(now - s for s in self._idle_since.values())
            last = self._last or (now, idle_total, self._requests)
            dt = now - last[0]
            self._last = (now, idle_total, self._requests)
            if dt <= 0:
                ratio = 1.0 if self._idle_since else 0.0
                rate = 0.0
            else:
                ratio = (idle_total - last[1]) / (dt * max(self._threads, 1))
                rate = (self._requests - last[2]) / dt
            return {"handler_idle_ratio": max(0.0, min(1.0, ratio)), "requests_per_sec": rate,
                    "requests_total": float(self._requests),
                    "waiting_puts": float(self.waiting_puts)}


class RequestChannel:
    """A bounded queue of parsed requests and ``threads`` handler threads."""

    def __init__(self, plane: Plane, handler: RequestHandler, *, capacity: int,
                 threads: int = 1) -> None:
        if capacity < 1 or threads < 1:
            raise ValueError("capacity and threads must be >= 1")
        self.plane = plane
        self.handler = handler
        self.capacity = capacity
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self.metrics = PlaneMetrics(threads)
        self._nthreads = threads
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()

    @property
    def size(self) -> int:
        return self.queue.qsize()

    def start(self) -> None:
        for i in range(self._nthreads):
            t = threading.Thread(target=self._run, args=(i,), daemon=True,
                                 name=f"kcontrol-{self.plane.value}-handler-{i}")
            t.start()
            self._threads.append(t)

    def put(self, item: QueuedRequest) -> bool:
        """Blocks while the queue is full (back-pressure); False only when stopping."""
        try:
            self.queue.put_nowait(item)
            return True
        except queue.Full:
            pass
        with self.metrics._lock:
            self.metrics.waiting_puts += 1
        try:
            while not self._stopping.is_set():
                try:
                    self.queue.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False
        finally:
            with self.metrics._lock:
                self.metrics.waiting_puts -= 1

    def begin_stop(self) -> None:
        """Release listeners blocked in ``put`` (they give up) before they are stopped."""
        self._stopping.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        for _ in self._threads:
            with contextlib.suppress(queue.Full):
                self.queue.put(_STOP, timeout=0.5)
        for t in self._threads:
            t.join(timeout)

    def sample(self) -> dict[str, float]:
        out = self.metrics.sample()
        out["queue_size"] = float(self.size)
        out["queue_capacity"] = float(self.capacity)
        return out

    def _run(self, tid: int) -> None:
        if self.plane is Plane.CONTROL:
            raise_priority(f"the control-plane handler {tid}")
        while True:
            self.metrics.idle(tid)
            item = self.queue.get()
            self.metrics.busy(tid, item is not _STOP)
            if item is _STOP or self._stopping.is_set():
                return
            self._serve(item)

    def _serve(self, item: QueuedRequest) -> None:
        h = item.header
        try:
            body = self.handler.handle(h.api_key, h.api_version, h, item.body)
            data = None if body is None else encode_response_pieces(
                h.api_key, h.api_version, h.correlation_id, body)
        except Exception:  # noqa: BLE001 -- one bad request closes one connection
            log.exception("%s: api %d v%d (correlation %d) failed; closing the connection",
                          item.connection, h.api_key, h.api_version, h.correlation_id)
            item.reply(None, True)
            return
        item.reply(data, False)
