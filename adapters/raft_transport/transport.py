"""The quorum transport: one I/O thread, a listener for inbound connections, one outbound
connection per voter, bounded queues.

``send`` encodes in the caller's thread (a value that cannot be written raises there) and
never blocks: a request joins its destination's queue (at most ``queue_limit``: the oldest is
dropped, with a log line -- Raft resends), a response joins the queue of answers. The I/O
thread does everything else with non-blocking sockets and one selector: it connects to a
voter when there is something to send (after a failure, again only after a backoff that
starts at ``retry_backoff_ms`` and doubles up to ``max_backoff_ms``), writes requests with a
correlation id (at most ``max_in_flight`` unanswered per voter), hands each response and each
inbound request to ``on_message(source, message)``, and forgets a request unanswered for
``request_timeout_ms`` (Raft's own timers resend), giving the connection up too if nothing at
all came back on it in that time. ``listen`` is an address to bind, or a socket the caller bound.

An answer goes back on the connection its request came in on: ``send(source, response)``
answers the oldest request of that API from ``source`` still waiting. A Fetch supersedes an
older Fetch waiting for over half the request timeout from the same source on the same
connection (a follower resends after its request timeout; the leader keeps only the newest
parked Fetch of a replica and answers it alone): otherwise the answer would go out under the old correlation id, which the
follower has given up, and every later answer on that connection one request behind. ``source`` is the node
id the request names (candidate, leader, replica id), else the ``raft-<id>`` client id of its
header, else -- a tool's DescribeQuorum -- a per-connection id at or below
:data:`ANONYMOUS_BASE`, which ``send`` answers the same way.

A controller node's transport also serves the controller's APIs: a request of an API in
``served.supported`` goes to ``served.handle`` with a way to answer it, keyed by that request
(not by its source), in the connection's request order, bounded per connection and in time
(``served.py``). ApiVersions lists them too.

A request naming another cluster id (one that names none is taken) is answered
``INCONSISTENT_CLUSTER_ID`` here, as Kafka does, and not handed on. A frame that does not
decode, is over ``max_frame_size`` or asks for an API the quorum does
not serve closes that connection only (with a log line); ApiVersions is answered, listing the
quorum's APIs. ``close`` stops the thread, joins it and closes every socket.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.network.codec import dispatch, registry
from adapters.network.codec.errors import CodecError
from adapters.network.codec.raft_convert import RaftConverter, error_body, source_of
from adapters.network.codec.raft_frames import (
    decode_response,
    encode_body,
    encode_request,
    encode_response,
    parse_request,
    peek_correlation_id,
)
from adapters.network.codec.raft_registry import (
    RAFT_SUPPORTED,
    SEND_VERSIONS,
    RaftApiKey,
    api_name,
)
from adapters.raft_transport.connection import Connection, InFlight
from adapters.raft_transport.served import Inbound, ServedApis, peek_correlation
from fsm.errors import ErrorCode

log = logging.getLogger("kcontrol.raft.transport")

ANONYMOUS_BASE = -1000
"""Inbound connections that name no node id get ids ``ANONYMOUS_BASE - n`` (n = 0, 1, ...)."""
CLIENT_ID_PREFIX = "raft-"
API_VERSIONS_KEY = 18
DEFAULT_MAX_FRAME_SIZE = 16 * 1024 * 1024
_READ_SIZE = 256 * 1024
_POLL_S = 0.1  # the longest the loop sleeps with nothing scheduled (checks close promptly)

Address = tuple[str, int]
OnMessage = Callable[[int, object], None]


@dataclass(slots=True)
class _Peer:
    node_id: int
    address: Address
    queue: deque[tuple[int, int, bytes]] = field(default_factory=deque)  # (key, version, body)
    conn: Connection | None = None
    backoff_s: float = 0.0
    next_attempt: float = 0.0


@dataclass(slots=True)
class _Waiting:
    """An inbound request waiting for the shell's answer."""

    conn: Connection
    api_key: int
    api_version: int
    correlation_id: int
    arrived: float = 0.0  # monotonic seconds


@dataclass(slots=True)
class TransportStats:
    """Counters, for tests and metrics (read without a lock: approximate while running)."""

    dropped_requests: int = 0  # oldest dropped from a full queue
    dropped_responses: int = 0  # no request waiting for it, or the answer queue full
    bad_frames: int = 0  # connections closed for a frame that did not decode
    timeouts: int = 0  # connections given up for a request that was not answered in time
    connects: int = 0  # outbound connections established
    connect_failures: int = 0
    served_timeouts: int = 0  # served-API requests answered as timed out


class RaftTransport:
    def __init__(
        self,
        node_id: int,
        voters: Mapping[int, Address],
        listen: Address | socket.socket,
        on_message: OnMessage,
        *,
        converter: RaftConverter,
        retry_backoff_ms: int = 20,
        max_backoff_ms: int = 1000,
        request_timeout_ms: int = 2000,
        queue_limit: int = 64,
        max_in_flight: int = 8,
        answer_limit: int = 1024,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_inbound_connections: int = 64,
        max_out_buffer: int = 64 * 1024 * 1024,
        served: ServedApis | None = None,
        served_timeout_ms: int | None = None,
        served_in_flight: int = 16,
    ) -> None:
        if queue_limit < 1 or max_in_flight < 1 or answer_limit < 1 or served_in_flight < 1:
            raise ValueError("queue_limit, max_in_flight, answer_limit and served_in_flight "
                             "must be >= 1")
        if retry_backoff_ms < 0 or max_backoff_ms < retry_backoff_ms or request_timeout_ms <= 0:
            raise ValueError("need 0 <= retry_backoff_ms <= max_backoff_ms, request_timeout_ms > 0")
        self.node_id = node_id
        self.converter = converter
        self.on_message = on_message
        self.client_id = f"{CLIENT_ID_PREFIX}{node_id}"
        self.retry_backoff_s = retry_backoff_ms / 1000
        self.max_backoff_s = max_backoff_ms / 1000
        self.request_timeout_s = request_timeout_ms / 1000
        self.queue_limit = queue_limit
        self.max_in_flight = max_in_flight
        self.answer_limit = answer_limit
        self.max_frame_size = max_frame_size
        self.max_inbound_connections = max_inbound_connections
        self.max_out_buffer = max_out_buffer
        self.stats = TransportStats()
        self.served = served
        self.served_timeout_s = (request_timeout_ms if served_timeout_ms is None
                                 else served_timeout_ms) / 1000
        self.served_in_flight = served_in_flight
        self._served: dict[int, Inbound] = {}  # handle -> request still unanswered
        self._served_deadlines: deque[Inbound] = deque()  # arrival order = deadline order
        self._served_answers: deque[tuple[int, bytes]] = deque()  # (handle, frame)
        self._next_handle = 0
        self._peers = {
            nid: _Peer(nid, (host, port)) for nid, (host, port) in voters.items() if nid != node_id
        }
        self._answers: deque[tuple[int, int, bytes, dict[str, Any]]] = deque()
        """(destination, key, body encoded at the send version, the wire dict: encoded again
        for a request of another version)"""
        self._waiting: dict[int, deque[_Waiting]] = {}
        self._inbound: set[Connection] = set()
        self._next_correlation = 0
        self._next_anonymous = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._closed = False
        self._selector = selectors.DefaultSelector()
        if isinstance(listen, socket.socket):  # bound by the caller (tests: ports known first)
            self._listener = listen
            self._listener.listen()
        else:
            self._listener = socket.create_server(listen)
        self._listener.setblocking(False)
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(
            target=self._run, name=f"raft-transport-{node_id}", daemon=True
        )

    # ------------------------------------------------------------------ the shell's API
    @property
    def address(self) -> Address:
        """The listener's bound (host, port): the port chosen when ``listen`` asked for 0."""
        host, port = self._listener.getsockname()[:2]
        return host, port

    def start(self) -> RaftTransport:
        self._thread.start()
        return self

    def __enter__(self) -> RaftTransport:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, destination: int, message: object) -> None:
        """Queues ``message`` (a request or response of ``fsm.raft.messages``) for
        ``destination``; never blocks. Raises ``TypeError``/``EncodeError`` for a value that
        cannot be written, ``KeyError`` for a request to a node that is not a voter."""
        key, is_request, wire = self.converter.to_wire(message)
        version = SEND_VERSIONS[key]
        if is_request:
            peer = self._peers.get(destination)
            if peer is None:
                raise KeyError(f"node {destination} is not a voter this node can reach "
                               f"(voters: {sorted(self._peers)})")
            body = encode_body(key, version, wire, response=False)
            with self._lock:
                if len(peer.queue) >= self.queue_limit:
                    old_key, _, _ = peer.queue.popleft()
                    self.stats.dropped_requests += 1
                    log.warning("raft transport %d: queue to %d full (%d): dropped the oldest "
                                "request (%s)", self.node_id, destination, self.queue_limit,
                                api_name(old_key))
                peer.queue.append((key, version, body))
        else:
            body = encode_body(key, version, wire, response=True)
            with self._lock:
                if len(self._answers) >= self.answer_limit:
                    dest, old_key, _, _ = self._answers.popleft()
                    self.stats.dropped_responses += 1
                    log.warning("raft transport %d: answer queue full: dropped the oldest "
                                "(%s to %d)", self.node_id, api_name(old_key), dest)
                self._answers.append((destination, key, body, wire))
        self._wake()

    def close(self, timeout: float = 5.0) -> None:
        """Stops the I/O thread, joins it, closes every socket. Idempotent."""
        if self._closed:
            return
        self._closing.set()
        self._wake()
        if self._thread.is_alive():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.error("raft transport %d: I/O thread did not stop in %.1f s",
                          self.node_id, timeout)
        if not self._thread.is_alive():
            self._shutdown_sockets()
            self._closed = True

    # ------------------------------------------------------------------ the I/O thread
    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            self._wake_w.send(b"\0")

    def _run(self) -> None:
        try:
            while not self._closing.is_set():
                now = time.monotonic()
                self._pump(now)
                for key, mask in self._selector.select(self._poll_timeout(now)):
                    self._on_event(key, mask)
        except Exception:  # a bug: log it rather than die silently
            log.exception("raft transport %d: I/O thread failed", self.node_id)
            raise

    def _poll_timeout(self, now: float) -> float:
        timeout = _POLL_S
        if self._served_deadlines:
            timeout = min(timeout, self._served_deadlines[0].deadline - now)
        for peer in self._peers.values():
            if peer.conn is None and peer.queue:
                timeout = min(timeout, peer.next_attempt - now)
            if peer.conn is not None:
                deadline = peer.conn.oldest_deadline()
                if deadline is not None:
                    timeout = min(timeout, deadline - now)
        return max(timeout, 0.0)

    def _on_event(self, key: selectors.SelectorKey, mask: int) -> None:
        if key.data == "accept":
            self._accept()
        elif key.data == "wake":
            with contextlib.suppress(BlockingIOError, OSError):
                while self._wake_r.recv(4096):
                    pass
        else:
            conn: Connection = key.data
            if mask & selectors.EVENT_WRITE and not conn.closed:
                self._on_writable(conn)
            if mask & selectors.EVENT_READ and not conn.closed:
                self._on_readable(conn)

    def _pump(self, now: float) -> None:
        """Moves queued requests and answers onto connections; connects; times out."""
        with self._lock:
            answers = list(self._answers)
            self._answers.clear()
        for destination, key, body, wire in answers:
            self._answer(destination, key, body, wire)
        if self.served is not None:
            self._pump_served(now)
        for peer in self._peers.values():
            conn = peer.conn
            if conn is None:
                if peer.queue and now >= peer.next_attempt:
                    self._connect(peer, now)
                continue
            if not conn.connected:
                if now >= conn.connect_deadline:
                    self.stats.connect_failures += 1
                    self._drop(conn, f"connect timed out after {self.request_timeout_s:.1f} s")
                continue
            deadline = conn.oldest_deadline()
            if deadline is not None and now >= deadline:
                self._expire(conn, now)
                if conn.closed:
                    continue
            self._write_requests(peer, conn, now)

    def _write_requests(self, peer: _Peer, conn: Connection, now: float) -> None:
        while len(conn.in_flight) < self.max_in_flight and len(conn.out) < self.max_out_buffer:
            with self._lock:
                if not peer.queue:
                    break
                key, version, body = peer.queue.popleft()
            correlation_id = self._next_correlation
            self._next_correlation = (self._next_correlation + 1) & 0x7FFFFFFF
            conn.in_flight[correlation_id] = InFlight(key, version, now + self.request_timeout_s)
            conn.out += encode_request(key, version, correlation_id, self.client_id, body)
        self._flush(conn)

    def _expire(self, conn: Connection, now: float) -> None:
        """Forgets the requests on ``conn`` unanswered for ``request_timeout_ms`` (Raft resends
        on its own timer); gives the connection up if nothing at all came back on it in that
        time (a dead peer or a half-open connection)."""
        expired = [c for c, f in conn.in_flight.items() if now >= f.deadline]
        for c in expired:
            del conn.in_flight[c]
        self.stats.timeouts += len(expired)
        log.info("raft transport %d: %d requests %s unanswered in %.1f s", self.node_id,
                 len(expired), conn.label, self.request_timeout_s)
        if now - conn.last_received >= self.request_timeout_s:
            self._drop(conn, f"nothing received in {self.request_timeout_s:.1f} s")

    def _answer(self, destination: int, key: int, body: bytes, wire: dict[str, Any]) -> None:
        """Writes the answer on the connection of the oldest request of API ``key`` from
        ``destination`` still waiting (requests of other APIs from it may wait longer)."""
        waiting = self._waiting.get(destination)
        match = None
        if waiting:
            for w in [w for w in waiting if w.conn.closed]:
                waiting.remove(w)
            match = next((w for w in waiting if w.api_key == key), None)
        if match is None:
            self.stats.dropped_responses += 1
            log.info("raft transport %d: no %s request from %d waits for an answer: dropped",
                     self.node_id, api_name(key), destination)
            return
        waiting.remove(match)  # type: ignore[union-attr]
        conn = match.conn
        if len(conn.out) >= self.max_out_buffer:
            self._drop(conn, "the client does not read its answers")
            return
        if match.api_version != SEND_VERSIONS[key]:  # an older client (DescribeQuorum v0)
            body = encode_body(key, match.api_version, wire, response=True)
        conn.out += encode_response(key, match.api_version, match.correlation_id, body)
        self._flush(conn)

    # ------------------------------------------------------------------ sockets
    def _accept(self) -> None:
        try:
            sock, address = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            log.warning("raft transport %d: accept failed: %s", self.node_id, e)
            return
        if len(self._inbound) >= self.max_inbound_connections:
            log.warning("raft transport %d: %d inbound connections: refused %s",
                        self.node_id, len(self._inbound), address)
            sock.close()
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(sock, self.max_frame_size, inbound=True, peer=None,
                          label=f"from {address[0]}:{address[1]}",
                          client_key=ANONYMOUS_BASE - self._next_anonymous)
        self._next_anonymous += 1
        self._inbound.add(conn)
        self._selector.register(sock, selectors.EVENT_READ, conn)

    def _connect(self, peer: _Peer, now: float) -> None:
        sock = socket.socket(socket.AF_INET6 if ":" in peer.address[0] else socket.AF_INET,
                             socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(sock, self.max_frame_size, inbound=False, peer=peer.node_id,
                          label=f"to {peer.node_id} ({peer.address[0]}:{peer.address[1]})")
        conn.connect_deadline = now + self.request_timeout_s
        peer.conn = conn
        code = sock.connect_ex(peer.address)
        if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
            self.stats.connect_failures += 1
            self._drop(conn, f"connect failed: {errno.errorcode.get(code, code)}")
            return
        self._selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)

    def _on_writable(self, conn: Connection) -> None:
        if not conn.connected:
            code = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code != 0:
                self.stats.connect_failures += 1
                self._drop(conn, f"connect failed: {errno.errorcode.get(code, code)}")
                return
            conn.connected = True
            conn.last_received = time.monotonic()  # the request timeout counts from here
            self.stats.connects += 1
            peer = self._peers[conn.peer]  # type: ignore[index]
            peer.backoff_s = 0.0
            log.info("raft transport %d: connected %s", self.node_id, conn.label)
            self._write_requests(peer, conn, time.monotonic())
            return
        self._flush(conn)

    def _flush(self, conn: Connection) -> None:
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
        events = (0 if conn.muted else selectors.EVENT_READ) | (
            selectors.EVENT_WRITE if conn.out else 0)
        key = self._selector.get_map().get(conn.sock)
        if key is None:
            if events:
                self._selector.register(conn.sock, events, conn)
        elif not events:
            self._selector.unregister(conn.sock)  # muted with nothing to write
        elif key.events != events:
            self._selector.modify(conn.sock, events, conn)

    def _on_readable(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self._drop(conn, f"read failed: {e}")
            return
        if not data:
            self._drop(conn, "closed by the other end", logging.INFO)
            return
        conn.last_received = time.monotonic()
        try:
            frames = conn.reader.feed(data)
            for frame in frames:
                if conn.closed:
                    return
                if conn.inbound and (conn.muted or conn.backlog):
                    conn.backlog.append(frame)  # read once answers went out
                elif conn.inbound:
                    self._on_request(conn, frame)
                else:
                    self._on_response(conn, frame)
        except CodecError as e:
            self.stats.bad_frames += 1
            self._drop(conn, f"bad frame: {e}")
        except Exception as e:  # a bug on one connection's input: that connection only
            self.stats.bad_frames += 1
            log.exception("raft transport %d: unexpected error on %s", self.node_id,
                          conn.label)
            self._drop(conn, f"unexpected error: {type(e).__name__}: {e}")

    def _on_request(self, conn: Connection, frame: bytes) -> None:
        if frame[:2] == API_VERSIONS_KEY.to_bytes(2, "big"):
            self._on_api_versions(conn, frame)
            return
        if self.served is not None and len(frame) >= 8 and \
                int.from_bytes(frame[:2], "big") in self.served.supported:
            self._on_served(conn, frame)
            return
        request = parse_request(frame)
        theirs = self.converter.cluster_id_of(request.api_key, request.body)
        ours = self.converter.cluster_id
        if theirs is not None and ours is not None and theirs != ours:
            log.warning("raft transport %d: %s %s names cluster %r, not %r: answered "
                        "INCONSISTENT_CLUSTER_ID", self.node_id, api_name(request.api_key),
                        conn.label, theirs, ours)
            body = error_body(request.api_key, ErrorCode.INCONSISTENT_CLUSTER_ID)
            conn.out += encode_response(request.api_key, request.api_version,
                                        request.header.correlation_id, body)
            self._flush(conn)
            return
        message = self.converter.from_wire(request.api_key, True, request.body)
        source = source_of(message)
        if source is None:
            source = _client_node(request.header.client_id)
        if source is None:
            source = conn.client_key
        waiting = self._waiting.setdefault(source, deque())
        now = time.monotonic()
        if request.api_key == RaftApiKey.FETCH:  # a resend: the leader parks only the newest
            stale = now - self.request_timeout_s / 2
            for w in [w for w in waiting if w.conn is conn and w.api_key == request.api_key
                      and w.arrived <= stale]:
                waiting.remove(w)
        if len(waiting) >= self.answer_limit:
            waiting.popleft()
        waiting.append(_Waiting(conn, request.api_key, request.api_version,
                                request.header.correlation_id, now))
        self._deliver(source, message)

    def _on_api_versions(self, conn: Connection, frame: bytes) -> None:
        versions_range = registry.SUPPORTED[API_VERSIONS_KEY]
        parsed = dispatch.parse_request(frame, {API_VERSIONS_KEY: versions_range})
        if isinstance(parsed, dispatch.Rejected):
            if parsed.action is dispatch.Action.CLOSE:
                self._drop(conn, parsed.reason)
                return
            conn.out += parsed.response_frame()
        else:
            advertised = {**RAFT_SUPPORTED, API_VERSIONS_KEY: versions_range}
            if self.served is not None:
                advertised |= self.served.supported
            body = dispatch.api_versions_body(parsed.api_version, dict(sorted(advertised.items())))
            conn.out += dispatch.encode_response(
                API_VERSIONS_KEY, parsed.api_version, parsed.header.correlation_id, body
            )
        self._flush(conn)

    # ------------------------------------------------------------------ served APIs
    def _on_served(self, conn: Connection, frame: bytes) -> None:
        assert self.served is not None
        handle = self._next_handle
        self._next_handle += 1
        request = Inbound(handle, int.from_bytes(frame[:2], "big"),
                          int.from_bytes(frame[2:4], "big"), peek_correlation(frame), frame,
                          time.monotonic() + self.served_timeout_s, conn)
        self._served[handle] = request
        self._served_deadlines.append(request)
        conn.served.append(request)
        if len(conn.served) >= self.served_in_flight:
            conn.muted = True
            self._flush(conn)
        self.served.handle(request, lambda answer: self._served_reply(handle, answer))

    def _served_reply(self, handle: int, answer: bytes) -> None:
        """Any thread: the answer to the served request ``handle``."""
        with self._lock:
            if len(self._served_answers) >= self.answer_limit + len(self._served):
                self.stats.dropped_responses += 1
                return
            self._served_answers.append((handle, answer))
        self._wake()

    def _pump_served(self, now: float) -> None:
        assert self.served is not None
        with self._lock:
            answers = list(self._served_answers)
            self._served_answers.clear()
        touched: set[Connection] = set()
        for handle, answer in answers:
            request = self._served.pop(handle, None)
            if request is None:  # timed out (answered already) or its connection closed
                self.stats.dropped_responses += 1
                continue
            request.answer = answer
            touched.add(request.conn)
        deadlines = self._served_deadlines
        while deadlines and (deadlines[0].deadline <= now or deadlines[0].answer is not None
                             or deadlines[0].handle not in self._served):
            request = deadlines.popleft()
            if self._served.pop(request.handle, None) is None:
                continue
            self.stats.served_timeouts += 1
            log.warning("raft transport %d: api key %d request %s (correlation id %d) "
                        "unanswered in %.1f s: answered as timed out", self.node_id,
                        request.api_key, request.conn.label, request.correlation_id,
                        self.served_timeout_s)
            try:
                request.answer = self.served.expired(request)
            except Exception:  # noqa: BLE001 -- a bug: that connection only
                log.exception("raft transport %d: no timed-out answer for api key %d",
                              self.node_id, request.api_key)
                self._drop(request.conn, "no answer could be written")
                continue
            touched.add(request.conn)
        for conn in touched:
            self._release(conn)

    def _release(self, conn: Connection) -> None:
        """Writes the answers at the head of ``conn``'s served requests that are ready; once
        fewer than ``served_in_flight`` wait, reads the frames held back while muted."""
        if conn.closed:
            return
        while conn.served and conn.served[0].answer is not None:
            conn.out += conn.served.popleft().answer  # type: ignore[operator]
        if len(conn.out) >= self.max_out_buffer:
            self._drop(conn, "the client does not read its answers")
            return
        if conn.muted and len(conn.served) < self.served_in_flight:
            conn.muted = False
            try:
                while conn.backlog and not conn.muted and not conn.closed:
                    self._on_request(conn, conn.backlog.popleft())
            except CodecError as e:
                self.stats.bad_frames += 1
                self._drop(conn, f"bad frame: {e}")
            except Exception as e:  # a bug on one connection's input: that connection only
                self.stats.bad_frames += 1
                log.exception("raft transport %d: unexpected error on %s", self.node_id,
                              conn.label)
                self._drop(conn, f"unexpected error: {type(e).__name__}: {e}")
        self._flush(conn)

    def _on_response(self, conn: Connection, frame: bytes) -> None:
        correlation_id = peek_correlation_id(frame)
        request = conn.in_flight.pop(correlation_id, None)
        if request is None:  # the answer to a request given up (timed out): too late
            log.info("raft transport %d: a late answer %s (correlation id %d): ignored",
                     self.node_id, conn.label, correlation_id)
            return
        _, body = decode_response(request.api_key, request.api_version, frame)
        message = self.converter.from_wire(request.api_key, False, body)
        self._deliver(conn.peer, message)  # type: ignore[arg-type]
        peer = self._peers[conn.peer]  # type: ignore[index]
        self._write_requests(peer, conn, time.monotonic())

    def _deliver(self, source: int, message: object) -> None:
        try:
            self.on_message(source, message)
        except Exception:
            log.exception("raft transport %d: on_message failed for %r from %d",
                          self.node_id, message, source)

    def _drop(self, conn: Connection, reason: str, level: int | None = None) -> None:
        """Closes ``conn``; an outbound one is tried again after the backoff. Logged at
        WARNING (INFO for a connect that failed or an orderly close by the other end)."""
        if conn.closed:
            return
        conn.closed = True
        if level is None:
            level = logging.WARNING if conn.connected or conn.inbound else logging.INFO
        log.log(level, "raft transport %d: closed %s: %s", self.node_id, conn.label, reason)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        conn.sock.close()
        if conn.inbound:
            self._inbound.discard(conn)
            self._waiting.pop(conn.client_key, None)
            for request in conn.served:
                self._served.pop(request.handle, None)
            conn.served.clear()
            conn.backlog.clear()
            return
        peer = self._peers[conn.peer]  # type: ignore[index]
        if peer.conn is conn:
            peer.conn = None
            peer.backoff_s = min(self.max_backoff_s,
                                 max(self.retry_backoff_s, peer.backoff_s * 2))
            peer.next_attempt = time.monotonic() + peer.backoff_s
        if conn.in_flight:
            log.info("raft transport %d: %d requests to %d lost with the connection",
                     self.node_id, len(conn.in_flight), conn.peer)

    def _shutdown_sockets(self) -> None:
        for peer in self._peers.values():
            if peer.conn is not None:
                peer.conn.closed = True
                peer.conn.sock.close()
                peer.conn = None
        for conn in list(self._inbound):
            conn.closed = True
            conn.sock.close()
        self._inbound.clear()
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
        self._selector.close()


def _client_node(client_id: str | None) -> int | None:
    """The node id of a ``raft-<id>`` client id (how this transport's peers name themselves)."""
    if client_id and client_id.startswith(CLIENT_ID_PREFIX):
        rest = client_id[len(CLIENT_ID_PREFIX):]
        if rest.lstrip("-").isdigit():
            return int(rest)
    return None

