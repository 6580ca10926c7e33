"""A tiny server for the proxy's tests: answers every Kafka-framed request on a connection
with the same frame (its own thread per connection), counting the frames it received; and a
client's blocking frame helpers. Every wait is bounded by the socket timeout."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable

TIMEOUT_S = 20.0


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes, or fewer if the peer closed."""
    out = bytearray()
    while len(out) < n:
        got = sock.recv(n - len(out))
        if not got:
            break
        out += got
    return bytes(out)


def recv_frame(sock: socket.socket) -> bytes | None:
    """One frame's payload; None if the connection closed."""
    head = recv_exact(sock, 4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack(">i", head)
    body = recv_exact(sock, size)
    return body if len(body) == size else None


def dial(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def wait_until(what: str, check: Callable[[], bool], timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.01)


class FrameEcho:
    """Listens on a free loopback port; echoes each frame back."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.received: list[bytes] = []
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.settimeout(TIMEOUT_S)
            with self._lock:
                self._conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                payload = recv_frame(conn)
                if payload is None:
                    return
                with self._lock:
                    self.received.append(payload)
                conn.sendall(frame(payload))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            c.close()
        self._acceptor.join(5)
        for t in self._threads:
            t.join(5)
