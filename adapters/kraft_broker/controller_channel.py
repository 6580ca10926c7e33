"""``ControllerChannel``: one connection of the broker to the active controller's controller
listener, at the byte level. The broker keeps two, as Kafka keeps one channel per purpose:
one for its own requests (registration, heartbeats, AlterPartition: ``core_requests``), one
for the clients' admin requests it forwards (``forwarding``) -- the controller answers each
connection in request order, and a heartbeat must not wait behind a CreateTopics that waits
for its commit.

The active controller is the Raft leader the broker's observer follows (``leader_changed``);
its address is that voter's entry of ``controller.quorum.voters``. One I/O thread, one
selector, non-blocking sockets:

* ``submit(api_key, version, body, done, timeout_s)`` queues a request (body already
  encoded for that version) and never blocks; a full queue (``queue_limit``) refuses it
  (``done(None, lost)`` at once). ``done(frame, None)`` hands back the response frame
  (size prefix removed, correlation id first) or ``done(None, lost)`` its loss (a ``Lost``:
  why, and whether it was sent), on the I/O thread, exactly once;
* the thread connects to the leader when there is something to send (after a failure,
  again only after a backoff from ``retry_backoff_ms`` doubling to ``max_backoff_ms``),
  writes requests with fresh correlation ids (at most ``max_in_flight`` unanswered), and
  matches the answers;
* a request unanswered for its timeout is lost, and so is the connection (a controller that
  does not answer in time is taken for gone, as Kafka's NetworkClient does); a request that
  found no leader before its timeout is lost; a lost connection loses its requests in
  flight; a new leader closes the connection to the old one (its requests are lost: the
  caller retries, now towards the new leader).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from adapters.network.codec.errors import FrameError
from adapters.network.codec.framing import FrameReader

log = logging.getLogger("kcontrol.kraft.broker")

Address = tuple[str, int]


class Lost(str):
    """Why a request got no answer (a ``str``); ``sent``: whether it may have reached a
    controller (False: it never left the queue, so sending it again cannot do it twice)."""

    sent: bool

    def __new__(cls, reason: str, sent: bool) -> Lost:
        self = super().__new__(cls, reason)
        self.sent = sent
        return self


Done = Callable[[bytes | None, Lost | None], None]
FrameRequest = Callable[[int, int, int, str, bytes], bytes]
"""(api key, version, correlation id, client id, body) -> the whole request frame."""

MAX_FRAME_SIZE = 64 * 1024 * 1024
_READ_SIZE = 256 * 1024
_POLL_S = 0.1
_CORRELATION = struct.Struct(">i")


@dataclass(slots=True)
class _Request:
    api_key: int
    version: int
    body: bytes
    done: Done
    deadline: float
    correlation_id: int = -1


@dataclass(slots=True, eq=False)
class _Conn:
    node_id: int
    address: Address
    sock: socket.socket
    connect_deadline: float
    reader: FrameReader = field(default_factory=lambda: FrameReader(MAX_FRAME_SIZE))
    out: bytearray = field(default_factory=bytearray)
    connected: bool = False
    closed: bool = False
    in_flight: dict[int, _Request] = field(default_factory=dict)


@dataclass(slots=True)
class ChannelStats:
    sent: int = 0
    answered: int = 0
    lost: int = 0
    timeouts: int = 0
    connects: int = 0
    connect_failures: int = 0
    refused: int = 0


class ControllerChannel:
    def __init__(self, broker_id: int, voters: Mapping[int, Address], frame_request: FrameRequest,
                 *, retry_backoff_ms: int = 20, max_backoff_ms: int = 1000,
                 queue_limit: int = 1024, max_in_flight: int = 16,
                 purpose: str = "controller") -> None:
        if queue_limit < 1 or max_in_flight < 1 or retry_backoff_ms < 0 \
                or max_backoff_ms < retry_backoff_ms:
            raise ValueError("need queue_limit, max_in_flight >= 1 and "
                             "0 <= retry_backoff_ms <= max_backoff_ms")
        self.broker_id = broker_id
        self.voters = dict(voters)
        self.frame_request = frame_request
        self.purpose = purpose
        self.client_id = f"broker-{broker_id}-{purpose}-to-controller"
        self.retry_backoff_s = retry_backoff_ms / 1000
        self.max_backoff_s = max_backoff_ms / 1000
        self.queue_limit = queue_limit
        self.max_in_flight = max_in_flight
        self.stats = ChannelStats()
        self._queue: deque[_Request] = deque()
        self._lock = threading.Lock()
        self._leader = -1
        self._conn: _Conn | None = None
        self._backoff_s = 0.0
        self._next_attempt = 0.0
        self._next_correlation = 0
        self._leader_cond = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-broker-{broker_id}-{purpose}-channel")

    # ------------------------------------------------------------------ other threads
    def start(self) -> ControllerChannel:
        self._thread.start()
        return self

    @property
    def leader(self) -> int:
        return self._leader

    def leader_changed(self, leader_id: int) -> None:
        """The observer follows ``leader_id`` now (-1: it looks for one)."""
        with self._lock:
            if leader_id == self._leader:
                return
            log.info("[broker %d] %s channel: active controller %s (was %s)", self.broker_id,
                     self.purpose, leader_id if leader_id >= 0 else "unknown",
                     self._leader if self._leader >= 0 else "unknown")
            self._leader = leader_id
            self._backoff_s, self._next_attempt = 0.0, 0.0
            self._leader_cond.notify_all()
        self._wake()

    def wait_leader(self, timeout: float, other_than: int = -1) -> int:
        """The known leader once there is one (other than ``other_than``), else -1 at the
        timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._leader < 0 or self._leader == other_than:
                left = deadline - time.monotonic()
                if left <= 0 or self._closing.is_set():
                    return -1
                self._leader_cond.wait(left)
            return self._leader

    def submit(self, api_key: int, version: int, body: bytes, done: Done,
               timeout_s: float) -> bool:
        request = _Request(api_key, version, body, done, time.monotonic() + timeout_s)
        with self._lock:
            full = len(self._queue) >= self.queue_limit or self._closing.is_set()
            if not full:
                self._queue.append(request)
        if full:
            self.stats.refused += 1
            _call(done, None, Lost("the controller channel is full or closed", False))
            return False
        self._wake()
        return True

    def close(self, timeout: float = 5.0) -> None:
        self._closing.set()
        with self._lock:
            self._leader_cond.notify_all()
        self._wake()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if not self._thread.is_alive():
            self._fail_all("the broker is stopping")
            for s in (self._wake_r, self._wake_w):
                s.close()
            self._selector.close()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            self._wake_w.send(b"\0")

    # ------------------------------------------------------------------ the I/O thread
    def _run(self) -> None:
        try:
            while not self._closing.is_set():
                self._pump(time.monotonic())
                for key, mask in self._selector.select(self._poll_timeout()):
                    if key.data is None:
                        with contextlib.suppress(BlockingIOError, OSError):
                            while self._wake_r.recv(4096):
                                pass
                        continue
                    conn: _Conn = key.data
                    if mask & selectors.EVENT_WRITE and not conn.closed:
                        self._on_writable(conn)
                    if mask & selectors.EVENT_READ and not conn.closed:
                        self._on_readable(conn)
        except Exception:  # a bug: logged, every waiting request lost
            log.exception("[broker %d] controller channel failed", self.broker_id)
        finally:
            self._fail_all("the controller channel stopped")

    def _poll_timeout(self) -> float:
        now = time.monotonic()
        timeout = _POLL_S
        with self._lock:
            if self._queue:
                timeout = min(timeout, self._queue[0].deadline - now)
                if self._conn is None:
                    timeout = min(timeout, self._next_attempt - now)
        if self._conn is not None:
            for r in self._conn.in_flight.values():
                timeout = min(timeout, r.deadline - now)
        return max(timeout, 0.0)

    def _pump(self, now: float) -> None:
        conn = self._conn
        leader = self._leader
        if conn is not None and conn.node_id != leader:
            self._drop(conn, f"node {leader} leads now" if leader >= 0 else "no leader known",
                       logging.INFO)
            conn = None
        self._expire_queued(now)
        if conn is None:
            with self._lock:
                waiting = bool(self._queue)
            if waiting and leader >= 0 and now >= self._next_attempt:
                self._connect(leader, now)
            return
        if not conn.connected:
            if now >= conn.connect_deadline:
                self.stats.connect_failures += 1
                self._drop(conn, "connect timed out")
            return
        expired = [c for c, r in conn.in_flight.items() if now >= r.deadline]
        if expired:
            for c in expired:
                r = conn.in_flight.pop(c)
                self.stats.timeouts += 1
                _call(r.done, None, Lost(f"no answer from controller {conn.node_id} in time", True))
            self._drop(conn, f"{len(expired)} requests unanswered in time")
            return
        self._write_requests(conn, now)

    def _expire_queued(self, now: float) -> None:
        with self._lock:
            expired = [r for r in self._queue if now >= r.deadline]
            for r in expired:
                self._queue.remove(r)
        for r in expired:
            self.stats.lost += 1
            _call(r.done, None, Lost("no active controller reachable in time"
                                     if self._leader < 0 else
                                     f"controller {self._leader} not reachable in time", False))

    def _write_requests(self, conn: _Conn, now: float) -> None:
        while len(conn.in_flight) < self.max_in_flight:
            with self._lock:
                if not self._queue:
                    break
                r = self._queue.popleft()
            r.correlation_id = self._next_correlation
            self._next_correlation = (self._next_correlation + 1) & 0x7FFFFFFF
            try:
                data = self.frame_request(r.api_key, r.version, r.correlation_id,
                                          self.client_id, r.body)
            except Exception as exc:  # noqa: BLE001 -- a bad request loses itself only
                _call(r.done, None, Lost(f"request does not encode: {exc}", False))
                continue
            conn.in_flight[r.correlation_id] = r
            conn.out += data
            self.stats.sent += 1
        self._flush(conn)

    def _connect(self, node_id: int, now: float) -> None:
        address = self.voters.get(node_id)
        if address is None:
            log.warning("[broker %d] leader %d is not in controller.quorum.voters",
                        self.broker_id, node_id)
            self._next_attempt = now + self.max_backoff_s
            return
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        timeout = max(self.max_backoff_s, 1.0)
        conn = _Conn(node_id, address, sock, now + timeout)
        self._conn = conn
        code = sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
            self.stats.connect_failures += 1
            self._drop(conn, f"connect failed: {errno.errorcode.get(code, code)}",
                       logging.INFO)
            return
        self._selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)

    def _on_writable(self, conn: _Conn) -> None:
        if not conn.connected:
            code = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code != 0:
                self.stats.connect_failures += 1
                self._drop(conn, f"connect failed: {errno.errorcode.get(code, code)}",
                           logging.INFO)
                return
            conn.connected = True
            self.stats.connects += 1
            self._backoff_s = 0.0
            log.info("[broker %d] %s channel: connected to controller %d at %s:%d",
                     self.broker_id, self.purpose, conn.node_id, *conn.address)
            self._write_requests(conn, time.monotonic())
            return
        self._flush(conn)

    def _flush(self, conn: _Conn) -> None:
        if conn.closed or not conn.connected:
            return
        if conn.out:
            try:
                sent = conn.sock.send(conn.out)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as e:
                self._drop(conn, f"write failed: {e}")
                return
            del conn.out[:sent]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0)
        if self._selector.get_key(conn.sock).events != events:
            self._selector.modify(conn.sock, events, conn)

    def _on_readable(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self._drop(conn, f"read failed: {e}")
            return
        if not data:
            self._drop(conn, "closed by the controller", logging.INFO)
            return
        try:
            frames = conn.reader.feed(data)
        except FrameError as e:
            self._drop(conn, f"bad frame: {e}")
            return
        for frame in frames:
            if len(frame) < 4:
                self._drop(conn, f"a {len(frame)}-byte answer")
                return
            correlation_id = _CORRELATION.unpack_from(frame, 0)[0]
            r = conn.in_flight.pop(correlation_id, None)
            if r is None:
                log.info("[broker %d] an answer nobody waits for (correlation id %d)",
                         self.broker_id, correlation_id)
                continue
            self.stats.answered += 1
            _call(r.done, frame, None)
        self._write_requests(conn, time.monotonic())

    def _drop(self, conn: _Conn, reason: str, level: int = logging.WARNING) -> None:
        if conn.closed:
            return
        conn.closed = True
        log.log(level, "[broker %d] %s channel: connection to controller %d closed: %s",
                self.broker_id, self.purpose, conn.node_id, reason)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        conn.sock.close()
        if self._conn is conn:
            self._conn = None
            self._backoff_s = min(self.max_backoff_s,
                                  max(self.retry_backoff_s, self._backoff_s * 2))
            self._next_attempt = time.monotonic() + self._backoff_s
        lost, conn.in_flight = conn.in_flight, {}
        for r in lost.values():
            self.stats.lost += 1
            _call(r.done, None, Lost(f"connection to controller {conn.node_id} lost: {reason}",
                                     True))

    def _fail_all(self, reason: str) -> None:
        if self._conn is not None:
            self._drop(self._conn, reason, logging.INFO)
        with self._lock:
            queued, self._queue = list(self._queue), deque()
        for r in queued:
            _call(r.done, None, Lost(reason, False))


def _call(done: Done, frame: bytes | None, error: Lost | None) -> None:
    try:
        done(frame, error)
    except Exception:  # noqa: BLE001 -- a caller's bug must not stop the channel
        log.exception("controller channel: a completion callback failed")
