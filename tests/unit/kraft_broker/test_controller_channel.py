"""The controller channel against small fake controllers on loopback sockets: answers matched
by correlation id, the connection following the leader, a silent controller timing out (and
the next request going out on a new connection), no leader -> lost at the deadline, a full
queue refusing at once, a closed connection losing what was in flight."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.kraft_broker.controller_channel import ControllerChannel, Lost
from adapters.network.codec.framing import FrameReader, frame

HEAD = struct.Struct(">hhi")
WAIT_S = 5.0


def frame_request(key: int, version: int, correlation_id: int, client_id: str,
                  body: bytes) -> bytes:
    return frame(HEAD.pack(key, version, correlation_id) + body)


class FakeController:
    """Answers each request with its correlation id and ``name + body`` (or stays silent,
    or closes the connection)."""

    def __init__(self, name: bytes) -> None:
        self.name = name
        self.mode = "answer"
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []
        self.socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            self.socks.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        reader = FrameReader()
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            for f in reader.feed(data):
                self.requests.append(f)
                if self.mode == "close":
                    sock.close()
                    return
                if self.mode == "answer":
                    _, _, corr = HEAD.unpack_from(f)
                    sock.sendall(frame(struct.pack(">i", corr) + self.name + f[HEAD.size:]))

    def close(self) -> None:
        self.server.close()
        for s in self.socks:
            s.close()


class Result:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.value: tuple[bytes | None, Lost | None] | None = None

    def __call__(self, frame_: bytes | None, error: Lost | None) -> None:
        assert self.value is None, "done called twice"
        self.value = (frame_, error)
        self.event.set()

    def get(self) -> tuple[bytes | None, Lost | None]:
        assert self.event.wait(WAIT_S)
        assert self.value is not None
        return self.value


@pytest.fixture
def controllers() -> Iterator[dict[int, FakeController]]:
    cs = {1: FakeController(b"one:"), 2: FakeController(b"two:")}
    yield cs
    for c in cs.values():
        c.close()


def _channel(cs: dict[int, FakeController], **kw: Any) -> ControllerChannel:
    return ControllerChannel(7, {n: ("127.0.0.1", c.port) for n, c in cs.items()},
                             frame_request, **kw).start()


def _send(ch: ControllerChannel, body: bytes, timeout_s: float = WAIT_S) -> Result:
    r = Result()
    ch.submit(62, 0, body, r, timeout_s)
    return r


def test_answers_follow_the_leader(controllers: dict[int, FakeController]) -> None:
    ch = _channel(controllers)
    try:
        ch.leader_changed(1)
        results = [_send(ch, b"x%d" % i) for i in range(5)]
        answers = [r.get() for r in results]
        assert [a[0][4:] if a[0] else a for a in answers] == [b"one:x%d" % i for i in range(5)]
        ch.leader_changed(2)
        assert _send(ch, b"y").get()[0][4:] == b"two:y"  # type: ignore[index]
        assert controllers[1].connections == 1 and controllers[2].connections == 1
    finally:
        ch.close()


def test_a_silent_controller_times_out_and_the_connection_is_made_again(
        controllers: dict[int, FakeController]) -> None:
    ch = _channel(controllers, retry_backoff_ms=10)
    try:
        ch.leader_changed(1)
        controllers[1].mode = "silent"
        t0 = time.monotonic()
        frame_, error = _send(ch, b"a", timeout_s=0.3).get()
        assert frame_ is None and "in time" in str(error)
        assert time.monotonic() - t0 < 2.0
        controllers[1].mode = "answer"
        assert _send(ch, b"b").get()[0][4:] == b"one:b"  # type: ignore[index]
        assert controllers[1].connections == 2
    finally:
        ch.close()


def test_no_leader_loses_the_request_at_its_deadline_and_a_full_queue_refuses(
        controllers: dict[int, FakeController]) -> None:
    ch = _channel(controllers, queue_limit=2)
    try:
        first, second = _send(ch, b"1", timeout_s=0.3), _send(ch, b"2", timeout_s=0.3)
        refused = _send(ch, b"3")
        assert refused.get() == (None, "the controller channel is full or closed")
        assert first.get()[0] is None and "no active controller" in str(first.get()[1])
        assert second.get()[0] is None and second.get()[1].sent is False  # type: ignore[union-attr]
        assert controllers[1].requests == []
    finally:
        ch.close()


def test_a_closed_connection_loses_what_was_in_flight(
        controllers: dict[int, FakeController]) -> None:
    ch = _channel(controllers)
    try:
        ch.leader_changed(1)
        controllers[1].mode = "close"
        frame_, error = _send(ch, b"a").get()
        assert frame_ is None and "lost" in str(error) and error.sent  # type: ignore[union-attr]
        controllers[1].mode = "answer"
        assert _send(ch, b"b").get()[0][4:] == b"one:b"  # type: ignore[index]
    finally:
        ch.close()
    after = _send(ch, b"c")
    assert after.get() == (None, "the controller channel is full or closed")
