"""``ProxyMesh``: a frame-aware, fault-injecting TCP proxy between the nodes of a local
cluster -- one listening port per directed link (``source`` dials it to reach ``target``),
every link served by one I/O thread with non-blocking sockets and one selector.

The proxy reads Kafka's framing (a 4-byte big-endian signed length, then that many bytes) in
both directions of every connection: a frame from the dialing side is a request, a frame from
the target a response. Faults act on whole frames only (a frame is forwarded or discarded
once it is complete), so both byte streams stay well-framed whatever the mode, and a link
healed after a fault carries on over the same connections, nothing to reconnect.

Modes (``LinkMode``, per directed link, changed at any time from any thread):

- ``PASS``: relay everything;
- ``CUT``: a black hole both ways -- frames read and discarded, connections kept open, new
  connections accepted (and connected upstream, so a heal needs nothing new);
- ``DROP_REQUESTS`` / ``DROP_RESPONSES``: frames of that direction discarded, each with
  probability ``loss`` (decided by the mesh's own ``random.Random(seed)``: for a seed and
  the same sequence of frames the same frames are dropped).

Bounds: a frame longer than ``max_frame_bytes`` (or with a negative length) closes that
connection, both sides, with a log line; a socket is read only while the bytes waiting to
be written to the other side are under ``OUT_LIMIT`` (the slower side holds back the faster
one); at most ``max_connections`` open connections per link (more are accepted and closed).
An upstream that cannot be connected closes the accepted side (an INFO line: a target killed
on purpose is routine in a fault campaign; ``stats()`` counts them).

Closing the dialing side of a connection closes its upstream side too (and the other way
round), in any mode.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import logging
import random
import selectors
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

log = logging.getLogger("kcontrol.kraft_chaos.proxy")

READ_SIZE = 256 * 1024
OUT_LIMIT = 1 << 20
"""A socket is read only while fewer bytes than this wait to be written to the other side."""
SELECT_S = 0.5
"""The longest the I/O thread sleeps with nothing happening (a wake-up socket interrupts it)."""
HEADER = 4

Link = tuple[str, str]


class LinkMode(enum.Enum):
    PASS = "pass"  # relay everything
    CUT = "cut"  # black hole both ways: frames read and discarded, connections kept open
    DROP_REQUESTS = "drop-requests"  # frames source -> target dropped with probability loss
    DROP_RESPONSES = "drop-responses"  # frames target -> source dropped with probability loss


STAT_KEYS = ("connections", "open_connections", "connect_failures", "oversized_frames",
             "requests_forwarded", "requests_dropped", "responses_forwarded",
             "responses_dropped", "request_bytes", "response_bytes",
             "frames_forwarded", "frames_dropped", "bytes")
"""``stats()`` per link: connections accepted (ever) and open now, upstream connects that
failed, connections closed for a bad frame length; frames forwarded and dropped per
direction and in all; bytes forwarded per direction (frames with their headers) and in all."""


@dataclass(eq=False)
class _Link:
    source: str
    target: str
    upstream: tuple[str, int]
    listener: socket.socket
    mode: LinkMode = LinkMode.PASS
    loss: float = 1.0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAT_KEYS, 0))
    pairs: set[_Pair] = field(default_factory=set)

    @property
    def port(self) -> int:
        return int(self.listener.getsockname()[1])

    @property
    def name(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass(eq=False)
class _End:
    """One socket of a proxied connection: bytes read from it not yet a whole frame, bytes to
    write to it."""

    sock: socket.socket
    is_client: bool  # the dialing side (its frames are requests)
    inbuf: bytearray = field(default_factory=bytearray)
    outbuf: bytearray = field(default_factory=bytearray)
    connecting: bool = False
    events: int = 0  # what the selector watches for now (0: not registered)


@dataclass(eq=False)
class _Pair:
    link: _Link
    client: _End
    upstream: _End
    closed: bool = False

    def other(self, end: _End) -> _End:
        return self.upstream if end is self.client else self.client


class ProxyMesh:
    """Directed links between named nodes, each a listening port on ``host``; one I/O thread
    (``start``) serves them all until ``close``. Thread-safe: links may be added and modes
    changed from any thread while it runs."""

    def __init__(self, host: str = "127.0.0.1", *, seed: int = 0,
                 max_frame_bytes: int = 8 << 20, max_connections: int = 64) -> None:
        if max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes {max_frame_bytes}: must be positive")
        if max_connections < 1:
            raise ValueError(f"max_connections {max_connections}: must be positive")
        self.host = host
        self.max_frame_bytes = max_frame_bytes
        self.max_connections = max_connections
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._links: dict[Link, _Link] = {}
        self._new: list[_Link] = []  # links the I/O thread has not registered yet
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._closed = False
        self._sockets_closed = False

    # ------------------------------------------------------------------ the API

    def add_link(self, source: str, target: str, upstream: tuple[str, int]) -> int:
        """A listening port on ``host`` that ``source`` dials to reach ``target`` (which
        listens at ``upstream``). Node names like "controller-3000", "broker-1". Call before
        or after start()."""
        if not source or not target or source == target:
            raise ValueError(f"link {source!r} -> {target!r}: two different node names")
        host, port = upstream
        if not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"link {source} -> {target}: upstream port {port!r} out of range")
        with self._lock:
            if self._closed:
                raise RuntimeError("the proxy mesh is closed")
            if (source, target) in self._links:
                raise ValueError(f"link {source} -> {target} exists already")
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((self.host, 0))
                listener.listen(64)
                listener.setblocking(False)
            except OSError:
                listener.close()
                raise
            link = _Link(source, target, (host, port), listener)
            self._links[(source, target)] = link
            self._new.append(link)
        self._wake()
        log.debug("link %s: port %d -> %s:%d", link.name, link.port, host, port)
        return link.port

    def port(self, source: str, target: str) -> int:
        """The listening port of link ``source -> target``."""
        with self._lock:
            return self._link(source, target).port

    def start(self) -> ProxyMesh:
        """Start the I/O thread (once); returns self."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the proxy mesh is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kraft-chaos-proxy",
                                                daemon=True)
                self._thread.start()
        return self

    def close(self) -> None:
        """Close every socket and join the I/O thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stopping = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join(10)
            if thread.is_alive():
                log.error("proxy I/O thread did not stop within 10 s")
                return
        self._close_all()

    def __enter__(self) -> ProxyMesh:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_mode(self, source: str, target: str, mode: LinkMode, *,
                 loss: float = 1.0) -> None:
        """Link ``source -> target`` behaves as ``mode`` from its next whole frame on
        (``loss``: the probability a frame of a DROP mode's direction is dropped)."""
        if not isinstance(mode, LinkMode):
            raise ValueError(f"mode {mode!r}: a LinkMode")
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"loss {loss}: a probability from 0 to 1")
        with self._lock:
            link = self._link(source, target)
            changed = (link.mode, link.loss) != (mode, loss)
            link.mode, link.loss = mode, loss
        if changed:
            drop = f" (loss {loss:g})" if mode in (LinkMode.DROP_REQUESTS,
                                                  LinkMode.DROP_RESPONSES) else ""
            log.info("link %s: %s%s", link.name, mode.value, drop)

    def isolate(self, node: str) -> None:
        """CUT on every link from or to ``node``."""
        for source, target in self._links_of(node):
            self.set_mode(source, target, LinkMode.CUT)

    def heal(self, node: str | None = None) -> None:
        """PASS on ``node``'s links (on every link when None)."""
        links = list(self.modes()) if node is None else self._links_of(node)
        for source, target in links:
            self.set_mode(source, target, LinkMode.PASS)

    def modes(self) -> dict[Link, LinkMode]:
        with self._lock:
            return {k: v.mode for k, v in self._links.items()}

    def stats(self) -> dict[Link, dict[str, int]]:
        """Per link, the counters of ``STAT_KEYS`` (a copy)."""
        with self._lock:
            return {k: dict(v.counts) for k, v in self._links.items()}

    # ------------------------------------------------------------------ helpers (any thread)

    def _link(self, source: str, target: str) -> _Link:
        link = self._links.get((source, target))
        if link is None:
            raise KeyError(f"no link {source} -> {target}; links: "
                           f"{', '.join(f'{s}->{t}' for s, t in sorted(self._links)) or 'none'}")
        return link

    def _links_of(self, node: str) -> list[Link]:
        with self._lock:
            found = [k for k in self._links if node in k]
        if not found:
            raise KeyError(f"no link from or to {node!r}")
        return sorted(found)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _count(self, link: _Link, **incs: int) -> None:
        with self._lock:
            for key, n in incs.items():
                link.counts[key] += n

    # ------------------------------------------------------------------ the I/O thread

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._register_new()
                for key, mask in self._sel.select(SELECT_S):
                    if self._stopping:
                        break
                    if key.data is None:
                        with contextlib.suppress(OSError):
                            while self._wake_r.recv(4096):
                                pass
                    elif isinstance(key.data, _Link):
                        self._accept(key.data)
                    else:
                        pair, end = key.data
                        if not pair.closed:
                            self._serve_safely(pair, end, mask)
        except Exception:  # a bug here must not leave the sockets open behind a dead thread
            log.exception("proxy I/O thread failed; closing every link")
        finally:
            self._close_all()

    def _register_new(self) -> None:
        with self._lock:
            new, self._new = self._new, []
        for link in new:
            self._sel.register(link.listener, selectors.EVENT_READ, link)

    def _accept(self, link: _Link) -> None:
        while True:
            try:
                sock, _ = link.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("link %s: accept failed: %s", link.name, exc)
                return
            if len(link.pairs) >= self.max_connections:
                log.warning("link %s: %d connections open, refusing another", link.name,
                            len(link.pairs))
                sock.close()
                continue
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            up.setblocking(False)
            up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pair = _Pair(link, _End(sock, True), _End(up, False, connecting=True))
            link.pairs.add(pair)
            self._count(link, connections=1, open_connections=1)
            code = up.connect_ex(link.upstream)
            if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                self._connect_failed(pair, code)
                continue
            self._watch(pair)

    def _connect_failed(self, pair: _Pair, code: int) -> None:
        link = pair.link
        log.info("link %s: connecting upstream %s:%d failed (%s); closing the accepted "
                 "connection", link.name, *link.upstream, errno.errorcode.get(code, code))
        self._count(link, connect_failures=1)
        self._close_pair(pair)

    def _serve_safely(self, pair: _Pair, end: _End, mask: int) -> None:
        """``_serve``; a failure it did not expect (a bug) closes that connection only, with
        its traceback in the log, and the other links carry on."""
        try:
            self._serve(pair, end, mask)
        except Exception:
            log.exception("link %s: serving a connection failed; closing it", pair.link.name)
            self._close_pair(pair)

    def _serve(self, pair: _Pair, end: _End, mask: int) -> None:
        if end.connecting:
            code = end.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                self._connect_failed(pair, code)
                return
            end.connecting = False
        if mask & selectors.EVENT_READ and not self._read(pair, end):
            return
        if end.outbuf and not self._write(pair, end):
            return
        self._watch(pair)

    def _read(self, pair: _Pair, end: _End) -> bool:
        try:
            data = end.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as exc:
            log.debug("link %s: %s side: %s", pair.link.name,
                      "dialing" if end.is_client else "upstream", exc)
            self._close_pair(pair)
            return False
        if not data:
            self._close_pair(pair)
            return False
        end.inbuf += data
        return self._frames(pair, end)

    def _frames(self, pair: _Pair, end: _End) -> bool:
        """Forward or drop every whole frame ``end``'s input holds; False if it closed the
        connection (a bad frame length)."""
        link, buf, to = pair.link, end.inbuf, pair.other(end)
        while len(buf) >= HEADER:
            size = int.from_bytes(buf[:HEADER], "big", signed=True)
            if size < 0 or size > self.max_frame_bytes:
                log.warning("link %s: a frame of %d bytes from the %s side (the limit is %d); "
                            "closing that connection", link.name, size,
                            "dialing" if end.is_client else "upstream", self.max_frame_bytes)
                self._count(link, oversized_frames=1)
                self._close_pair(pair)
                return False
            if len(buf) < HEADER + size:
                break
            whole = HEADER + size
            kind = "request" if end.is_client else "response"
            if self._drops(link, end.is_client):
                self._count(link, **{f"{kind}s_dropped": 1, "frames_dropped": 1})
            else:
                to.outbuf += buf[:whole]
                self._count(link, **{f"{kind}s_forwarded": 1, f"{kind}_bytes": whole,
                                     "frames_forwarded": 1, "bytes": whole})
            del buf[:whole]
        return True

    def _drops(self, link: _Link, request: bool) -> bool:
        with self._lock:
            mode, loss = link.mode, link.loss
        if mode is LinkMode.PASS:
            return False
        if mode is LinkMode.CUT:
            return True
        if (mode is LinkMode.DROP_REQUESTS) != request:
            return False
        return loss >= 1.0 or (loss > 0.0 and self._rng.random() < loss)

    def _write(self, pair: _Pair, end: _End) -> bool:
        if end.connecting:
            return True
        try:
            sent = end.sock.send(end.outbuf)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as exc:
            log.debug("link %s: writing: %s", pair.link.name, exc)
            self._close_pair(pair)
            return False
        del end.outbuf[:sent]
        return True

    def _watch(self, pair: _Pair) -> None:
        """Point the selector at what each side waits for: readable while the other side's
        output is under the limit, writable while it has output (or is connecting)."""
        for end in (pair.client, pair.upstream):
            other = pair.other(end)
            want = 0
            if end.connecting:
                want = selectors.EVENT_WRITE
            else:
                if len(other.outbuf) < OUT_LIMIT:
                    want |= selectors.EVENT_READ
                if end.outbuf:
                    want |= selectors.EVENT_WRITE
            if want == end.events:
                continue
            if end.events == 0:
                self._sel.register(end.sock, want, (pair, end))
            elif want == 0:
                self._sel.unregister(end.sock)
            else:
                self._sel.modify(end.sock, want, (pair, end))
            end.events = want

    def _close_pair(self, pair: _Pair) -> None:
        if pair.closed:
            return
        pair.closed = True
        for end in (pair.client, pair.upstream):
            if end.events:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._sel.unregister(end.sock)
                end.events = 0
            with contextlib.suppress(OSError):
                end.sock.close()
        pair.link.pairs.discard(pair)
        self._count(pair.link, open_connections=-1)

    def _all_pairs(self) -> Iterator[_Pair]:
        for link in list(self._links.values()):
            yield from list(link.pairs)

    def _close_all(self) -> None:
        if self._sockets_closed:
            return
        self._sockets_closed = True
        for pair in self._all_pairs():
            self._close_pair(pair)
        with self._lock:
            links = list(self._links.values())
        for link in links:
            with contextlib.suppress(OSError):
                link.listener.close()
        for sock in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                sock.close()
        with contextlib.suppress(OSError, RuntimeError):
            self._sel.close()
