"""``ClientListener``: one of the broker's client listeners -- an accepting thread and one
thread per connection (at most ``max_connections``; more are closed at once).

A connection's thread reads size-prefixed frames (at most ``max_frame_size``) and answers them
one at a time, in order, through the handler (``ClientApis.handle``: frame in, whole response
frame out): one request in flight per connection, as Kafka mutes a channel until its answer
is sent, so a forwarded request that waits for the controller holds only its own connection.
A frame that is over the limit or does not decode, or a request the handler refuses
(``ClientError``), is logged and closes that connection only; so does an unexpected error in
the handler (logged with its traceback). ``stop`` closes the listening socket and every
connection and joins the threads (bounded).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable

from adapters.kraft_broker.client_apis import ClientError
from adapters.network.codec.errors import FrameError
from adapters.network.codec.framing import FrameReader

log = logging.getLogger("kcontrol.kraft.broker")

DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024
_READ_SIZE = 256 * 1024


class ClientListener:
    def __init__(self, name: str, address: tuple[str, int], handler: Callable[[bytes], bytes],
                 broker_id: int, *, max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.name = name
        self.address = address
        self.handler = handler
        self.max_connections = max_connections
        self.max_frame_size = max_frame_size
        self.prefix = f"[broker {broker_id}] listener {name}"
        self.port = 0
        self.closed_bad = 0
        self.answered = 0
        self._server: socket.socket | None = None
        self._conns: dict[int, socket.socket] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._next = 0
        self._lock = threading.Lock()
        self._stopping = False
        self._accepting: threading.Thread | None = None

    def bind(self) -> int:
        """Binds the listener's address (a port 0 becomes a free port); its port."""
        self._server = socket.create_server(self.address, reuse_port=False)
        self.port = self._server.getsockname()[1]
        return self.port

    def start(self) -> None:
        if self._server is None:
            self.bind()
        self._accepting = threading.Thread(target=self._accept, daemon=True,
                                           name=f"kcontrol-broker-listener-{self.name}")
        self._accepting.start()
        log.info("%s on %s:%d", self.prefix, self.address[0], self.port)

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        with self._lock:
            conns = list(self._conns.values())
            threads = list(self._threads.values())
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for t in [self._accepting, *threads]:
            if t is not None and t is not threading.current_thread():
                t.join(timeout)

    @property
    def connection_count(self) -> int:
        return len(self._conns)

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stopping:
            try:
                sock, peer = self._server.accept()
            except OSError:
                return
            with self._lock:
                if len(self._conns) >= self.max_connections:
                    log.warning("%s: %d connections: refused %s:%d", self.prefix,
                                len(self._conns), *peer[:2])
                    sock.close()
                    continue
                self._next += 1
                cid = self._next
                self._conns[cid] = sock
                t = threading.Thread(target=self._serve, args=(cid, sock, f"{peer[0]}:{peer[1]}"),
                                     daemon=True, name=f"kcontrol-broker-{self.name}-{cid}")
                self._threads[cid] = t
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            t.start()

    def _serve(self, cid: int, sock: socket.socket, peer: str) -> None:
        reader = FrameReader(self.max_frame_size)
        try:
            while not self._stopping:
                data = sock.recv(_READ_SIZE)
                if not data:
                    return
                for frame in reader.feed(data):
                    sock.sendall(self.handler(frame))
                    self.answered += 1
        except (FrameError, ClientError) as exc:
            self.closed_bad += 1
            log.warning("%s: closing the connection from %s: %s", self.prefix, peer, exc)
        except OSError as exc:
            if not self._stopping:
                log.info("%s: connection from %s: %s", self.prefix, peer, exc)
        except Exception:  # noqa: BLE001 -- a bug costs one connection, not the listener
            self.closed_bad += 1
            log.exception("%s: unexpected error on the connection from %s", self.prefix, peer)
        finally:
            with self._lock:
                self._conns.pop(cid, None)
                self._threads.pop(cid, None)
            sock.close()
