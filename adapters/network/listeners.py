"""One listener: a bound socket and one selector thread that accepts, reads, parses and
writes (Kafka's Acceptor + one Processor, merged: connections are few here).

Per connection:

- bytes go through the codec's ``FrameReader`` (``max_frame_size``); every complete frame
  is parsed with ``parse_request(frame, supported)``, where ``supported`` is what this
  listener accepts (the control plane: the three controller APIs only);
- **one request in flight per connection** (Kafka mutes a channel until its response is
  sent): the next frame is parsed only after the previous answer was queued for writing,
  so answers leave in request order whatever the number of handler threads. Frames a
  client pipelines wait in the connection (at most ``max_pipelined``; beyond that the
  listener stops reading that socket until the backlog drains);
- oversized, negative-size, truncated or undecodable frames, an API key this listener does
  not accept and an unsupported version of an API other than ApiVersions close **that
  connection only**, with a log line; an unsupported ApiVersions version gets the codec's
  fallback answer (v0 body, UNSUPPORTED_VERSION, the broker's ApiVersions range). Should the
  codec ever raise anything but its own errors (``adapters.network.wire_fuzz`` checks it
  does not), that too closes the one connection (``codec_failure``, with the traceback);
- a listener binds only a loopback address unless its config allows others (checked on the
  address the host name resolves to, not only by the parser).

Data-plane handler threads never touch sockets: they hand the answer frame back through
``_respond``, which queues it and wakes the selector (a socketpair) -- except the control
plane's handler, which writes its answer itself when nothing else is queued on the
connection (under the connection's ``wlock``; ``_respond``) and then wakes the selector only
to read the next request.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import logging
import selectors
import socket
import threading
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from adapters.host.thread_priority import raise_priority
from adapters.network.codec import (
    Action,
    DecodeError,
    FrameError,
    FrameReader,
    FrameTooLarge,
    Rejected,
    parse_request,
)
from adapters.network.listener_config import ListenerSpec
from adapters.network.request_channel import Plane, QueuedRequest, RequestChannel

log = logging.getLogger("kcontrol.network")

R, W = selectors.EVENT_READ, selectors.EVENT_WRITE
RECV_SIZE = 256 * 1024
DEFAULT_MAX_PIPELINED = 16


class OutBuffer:
    """What a connection still has to write: a queue of byte strings sent with one
    ``sendmsg`` (scatter-gather) per write, never joined. A cached 500 KB Metadata answer is
    queued and sent as the very bytes object the cache holds: no copy, no allocation (joining
    it into a frame and a bytearray cost two 500 KB copies and allocations per answer, with
    the interpreter lock held: ~40% of a flooded data plane's time)."""

    __slots__ = ("chunks", "size")

    MAX_IOV = 64

    def __init__(self) -> None:
        self.chunks: deque[memoryview] = deque()
        self.size = 0

    def __bool__(self) -> bool:
        return self.size > 0

    def __len__(self) -> int:
        return self.size

    def __iadd__(self, data: bytes | bytearray | tuple[bytes, ...]) -> OutBuffer:
        for piece in (data if isinstance(data, tuple) else (data,)):
            if piece:
                self.chunks.append(memoryview(piece))
                self.size += len(piece)
        return self

    def send(self, sock: socket.socket) -> int:
        """One ``sendmsg`` of the first chunks; drops what was sent; returns the bytes sent."""
        chunks = self.chunks
        n = sock.sendmsg(chunks if len(chunks) <= self.MAX_IOV
                         else [chunks[i] for i in range(self.MAX_IOV)])
        self.size -= n
        left = n
        while left:
            first = chunks[0]
            if len(first) <= left:
                left -= len(first)
                chunks.popleft()
            else:
                chunks[0] = first[left:]
                left = 0
        return n

    def clear(self) -> None:
        self.chunks.clear()
        self.size = 0


@dataclass(eq=False)
class _Conn:
    cid: int
    sock: socket.socket
    label: str
    reader: FrameReader
    pending: deque[bytes] = field(default_factory=deque)
    out: OutBuffer = field(default_factory=lambda: OutBuffer())
    in_flight: bool = False
    close_after_write: bool = False
    events: int = 0
    closed: bool = False
    wlock: threading.Lock = field(default_factory=threading.Lock)
    """Held to change ``out``, to write to ``sock`` and to close it: the control plane's
    handler thread writes its answers itself (``Listener._respond``)."""


class Listener:
    def __init__(self, spec: ListenerSpec, plane: Plane, channel: RequestChannel,
                 supported: Mapping[int, tuple[int, int]], *, max_frame_size: int,
                 max_pipelined: int = DEFAULT_MAX_PIPELINED,
                 allow_non_loopback: bool = False) -> None:
        self.spec = spec
        self.allow_non_loopback = allow_non_loopback
        self.plane = plane
        self.channel = channel
        self.supported = dict(supported)
        self.max_frame_size = max_frame_size
        self.max_pipelined = max(1, max_pipelined)
        self.closed_reasons: Counter[str] = Counter()
        self.accepted = 0
        self._conns: dict[int, _Conn] = {}
        self._next_cid = 0
        self._responses: deque[tuple[int, bytes | tuple[bytes, ...] | None, bool]] = deque()
        self._sel = selectors.DefaultSelector()
        self._server: socket.socket | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)  # a full wake buffer already means "wake up"
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    # ------------------------------------------------------------------ lifecycle

    def bind(self) -> int:
        """Binds the listener's address; refuses (``OSError``) one that does not resolve to a
        loopback address unless the config allows it (whatever resolved the host name)."""
        family, kind, proto, _, addr = socket.getaddrinfo(
            self.spec.host, self.spec.port, type=socket.SOCK_STREAM)[0]
        if not self.allow_non_loopback and not ipaddress.ip_address(addr[0]).is_loopback:
            raise OSError(errno.EADDRNOTAVAIL, f"{self.spec.host} resolves to {addr[0]}, not a "
                          f"loopback address (non-loopback listeners must be allowed explicitly)")
        srv = socket.socket(family, kind, proto)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            srv.bind(addr)
        except OSError:
            srv.close()
            raise
        srv.listen(128)
        srv.setblocking(False)
        self._server = srv
        self.port = srv.getsockname()[1]
        return self.port

    def start(self) -> None:
        if self._server is None:
            self.bind()
        assert self._server is not None
        self._wake_r.setblocking(False)
        self._sel.register(self._server, R, "accept")
        self._sel.register(self._wake_r, R, "wake")
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-listener-{self.spec.name}")
        self._thread.start()
        log.info("listener %s (%s plane) on %s:%d", self.spec.name, self.plane.value,
                 self.spec.host, self.port)

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
        else:
            self._close_all()

    @property
    def connection_count(self) -> int:
        return len(self._conns)

    def stats(self) -> dict[str, float]:
        out = {"connections": float(len(self._conns)), "accepted_total": float(self.accepted)}
        for reason, n in self.closed_reasons.items():
            out[f"closed_{reason}_total"] = float(n)
        return out

    # ------------------------------------------------------------------ handler side

    def _respond(self, cid: int, data: bytes | tuple[bytes, ...] | None, close: bool) -> None:
        """Called by a handler thread. On the control plane the handler writes the answer
        itself when nothing else waits to be written on that connection (what the socket
        does not take at once stays queued for the listener): the answer leaves without
        waiting for the listener thread to wake and take the interpreter lock from a busy
        data plane (2.5 ms at p99 under a Metadata flood). The listener is still told, to
        read the connection's next request."""
        if data and not close and self.plane is Plane.CONTROL:
            conn = self._conns.get(cid)
            if conn is not None:
                with conn.wlock:
                    if not conn.closed and not conn.out:
                        conn.out += data
                        data = None  # written or queued: the listener has nothing to add
                        with contextlib.suppress(OSError):  # a reset: the listener sees it
                            conn.out.send(conn.sock)
        self._responses.append((cid, data, close))
        if threading.current_thread() is not self._thread:
            self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    # ------------------------------------------------------------------ selector thread

    def _run(self) -> None:
        if self.plane is Plane.CONTROL:
            raise_priority(f"the {self.spec.name} control-plane listener")
        try:
            while not self._stopping:
                for key, mask in self._sel.select(timeout=1.0):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        with contextlib.suppress(OSError):
                            while self._wake_r.recv(4096):
                                pass
                    else:
                        conn: _Conn = key.data
                        if mask & R:
                            self._read(conn)
                        if mask & W and conn.cid in self._conns:
                            self._write(conn)
                self._drain_responses()
        except Exception:  # noqa: BLE001 -- logged; the listener is then closed
            log.exception("listener %s failed", self.spec.name)
        finally:
            self._close_all()

    def _accept(self) -> None:
        assert self._server is not None
        while True:
            try:
                sock, addr = self._server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("listener %s: accept failed: %s", self.spec.name, exc)
                return
            sock.setblocking(False)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._next_cid += 1
            self.accepted += 1
            label = f"{self.spec.name}#{self._next_cid} {addr[0]}:{addr[1]}"
            conn = _Conn(self._next_cid, sock, label, FrameReader(self.max_frame_size))
            self._conns[conn.cid] = conn
            self._interest(conn)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._close(conn, "reset", f"read failed: {exc}", logging.INFO)
            return
        if not data:
            if conn.reader.buffered:
                self._close(conn, "truncated", f"peer closed inside a frame "
                            f"({conn.reader.buffered} bytes buffered)", logging.WARNING)
            else:
                self._close(conn, "eof", "peer closed", logging.DEBUG)
            return
        try:
            conn.pending.extend(conn.reader.feed(data))
        except FrameTooLarge as exc:
            self._close(conn, "frame_too_large", str(exc), logging.WARNING)
            return
        except FrameError as exc:
            self._close(conn, "bad_frame", str(exc), logging.WARNING)
            return
        self._dispatch(conn)

    def _dispatch(self, conn: _Conn) -> None:
        while not conn.in_flight and conn.pending and conn.cid in self._conns:
            data = conn.pending.popleft()
            try:
                parsed = parse_request(data, self.supported)
                answer = parsed.response_frame() if isinstance(parsed, Rejected) \
                    and parsed.action is Action.REPLY else None
            except DecodeError as exc:
                self._close(conn, "decode_error", f"garbage request: {exc}", logging.WARNING)
                return
            except Exception:  # noqa: BLE001 -- a codec bug must cost one connection, not all
                log.exception("%s: the codec failed on a %d-byte frame", conn.label, len(data))
                self._close(conn, "codec_failure", "codec failure", logging.ERROR)
                return
            if isinstance(parsed, Rejected):
                if answer is not None:
                    log.info("%s: %s: answered %s", conn.label, parsed.reason,
                             parsed.error.name)
                    with conn.wlock:
                        conn.out += answer
                    continue
                self._close(conn, "rejected", f"{parsed.reason} ({parsed.error.name}, "
                            f"{self.plane.value} plane)", logging.WARNING)
                return
            conn.in_flight = True
            cid = conn.cid
            item = QueuedRequest(parsed.header, parsed.body,
                                 lambda d, c, _cid=cid: self._respond(_cid, d, c), conn.label)
            if not self.channel.put(item):  # blocks while the plane's queue is full
                return
        if conn.cid in self._conns:
            self._interest(conn)
            if conn.out:
                self._write(conn)

    def _drain_responses(self) -> None:
        while self._responses:
            cid, data, close = self._responses.popleft()
            conn = self._conns.get(cid)
            if conn is None:
                continue  # the connection closed while its request was handled
            conn.in_flight = False
            if data:
                with conn.wlock:
                    conn.out += data
            if close:
                if not conn.out:
                    self._close(conn, "handler_error", "handler failed", logging.WARNING)
                    continue
                conn.close_after_write = True
                conn.pending.clear()
            self._dispatch(conn)

    def _write(self, conn: _Conn) -> None:
        try:
            with conn.wlock:
                conn.out.send(conn.sock)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._close(conn, "reset", f"write failed: {exc}", logging.INFO)
            return
        if not conn.out and conn.close_after_write:
            self._close(conn, "after_answer", "closed after the answer", logging.INFO)
            return
        self._interest(conn)

    def _interest(self, conn: _Conn) -> None:
        want = (R if len(conn.pending) < self.max_pipelined and not conn.close_after_write
                else 0) | (W if conn.out else 0)
        if want == conn.events:
            return
        if conn.events == 0:
            self._sel.register(conn.sock, want, conn)
        elif want == 0:
            self._sel.unregister(conn.sock)
        else:
            self._sel.modify(conn.sock, want, conn)
        conn.events = want

    def _close(self, conn: _Conn, reason: str, detail: str, level: int) -> None:
        log.log(level, "%s: closing the connection (%s plane): %s", conn.label,
                self.plane.value, detail)
        self.closed_reasons[reason] += 1
        self._conns.pop(conn.cid, None)
        if conn.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(conn.sock)
            conn.events = 0
        with conn.wlock:
            conn.closed = True
            with contextlib.suppress(OSError):
                conn.sock.close()

    def _close_all(self) -> None:
        for conn in list(self._conns.values()):
            self._close(conn, "shutdown", "listener stopped", logging.DEBUG)
        for s in (self._server, self._wake_r, self._wake_w):
            if s is not None:
                with contextlib.suppress(OSError):
                    s.close()
        with contextlib.suppress(OSError):
            self._sel.close()
