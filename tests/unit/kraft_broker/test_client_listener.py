"""The client listener on a loopback socket: answers in request order per connection, a
malformed or oversized frame or a refused request closes that connection only (the others go
on being answered), the connection limit is kept, and stop closes everything."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest

from adapters.kraft_broker.client_apis import ClientError
from adapters.kraft_broker.client_listener import ClientListener
from adapters.network.codec.framing import frame


def handler(data: bytes) -> bytes:
    if data.startswith(b"bad"):
        raise ClientError("refused")
    if data.startswith(b"boom"):
        raise RuntimeError("a bug")
    if data.startswith(b"slow"):
        time.sleep(0.2)
    return frame(b"re:" + data)


@pytest.fixture
def listener() -> Iterator[ClientListener]:
    lst = ClientListener("PLAINTEXT", ("127.0.0.1", 0), handler, 1, max_connections=3,
                         max_frame_size=1024)
    lst.start()
    yield lst
    lst.stop()


def _connect(lst: ClientListener) -> socket.socket:
    return socket.create_connection(("127.0.0.1", lst.port), timeout=5)


def _read(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", _exact(sock, 4))[0]
    return _exact(sock, size)


def _exact(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_answers_in_order_and_bad_input_closes_that_connection_only(
        listener: ClientListener) -> None:
    a, b, c = (_connect(listener) for _ in range(3))
    a.sendall(frame(b"slow1") + frame(b"two"))  # pipelined: answered in order
    assert _read(a) == b"re:slow1" and _read(a) == b"re:two"
    b.sendall(frame(b"bad request"))
    assert _closed(b)
    c.sendall(frame(b"boom"))
    assert _closed(c)
    big = _connect(listener)
    big.sendall(struct.pack(">i", 4096) + b"x" * 10)  # over max_frame_size
    assert _closed(big)
    a.sendall(frame(b"still"))
    assert _read(a) == b"re:still"
    assert listener.closed_bad == 3
    for s in (a, b, c, big):
        s.close()


def test_the_connection_limit_and_stop(listener: ClientListener) -> None:
    socks = [_connect(listener) for _ in range(3)]
    for s in socks:
        s.sendall(frame(b"hi"))
        assert _read(s) == b"re:hi"
    extra = _connect(listener)
    assert _closed(extra)  # a fourth is closed at once
    listener.stop()
    assert all(_closed(s) for s in socks)
    with pytest.raises(OSError):
        _connect(listener)
