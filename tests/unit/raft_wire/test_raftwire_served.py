"""The transport's served APIs (a controller's BrokerRegistration, CreateTopics, ...) on
loopback, with a fake ``ServedApis`` that the test answers by hand: answers given out of
order leave each connection in request order with their own correlation ids; two connections
never get each other's answers; a request unanswered in time gets the ``expired`` answer and
its late answer is dropped; beyond ``served_in_flight`` the connection is not read until an
answer goes out; ApiVersions lists the served APIs; an API served by nobody closes the
connection. Every wait is on a condition."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from raftwire_stub_records import converter

from adapters.network.codec import dispatch
from adapters.network.codec.headers import RequestHeader
from adapters.raft_transport import RaftTransport
from adapters.raft_transport.served import Inbound, Reply

WAIT_S = 10.0
LOCAL = "127.0.0.1"
SERVED_KEY = 62  # BrokerRegistration
OTHER_KEY = 19  # CreateTopics: not served by this fake


class FakeServed:
    supported = {SERVED_KEY: (0, 3)}

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.requests: list[tuple[Inbound, Reply]] = []

    def handle(self, request: Inbound, reply: Reply) -> None:
        with self.cond:
            self.requests.append((request, reply))
            self.cond.notify_all()

    def expired(self, request: Inbound) -> bytes:
        return answer_frame(request.correlation_id, b"expired")

    def wait(self, n: int) -> list[tuple[Inbound, Reply]]:
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.requests) >= n, WAIT_S):
                raise TimeoutError(f"{n} requests not handed over: {len(self.requests)}")
            return list(self.requests)


def answer_frame(correlation_id: int, payload: bytes) -> bytes:
    body = struct.pack(">i", correlation_id) + payload
    return struct.pack(">i", len(body)) + body


def request_frame(api_key: int, correlation_id: int, payload: bytes = b"") -> bytes:
    body = struct.pack(">hhih", api_key, 0, correlation_id, -1) + payload
    return struct.pack(">i", len(body)) + body


def read_answer(sock: socket.socket) -> tuple[int, bytes]:
    size = struct.unpack(">i", read_exactly(sock, 4))[0]
    data = read_exactly(sock, size)
    return struct.unpack(">i", data[:4])[0], data[4:]


def read_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


@pytest.fixture
def served_node() -> Iterator[Callable[..., tuple[RaftTransport, FakeServed]]]:
    made: list[RaftTransport] = []

    def make(**kwargs: Any) -> tuple[RaftTransport, FakeServed]:
        served = FakeServed()
        t = RaftTransport(1, {1: (LOCAL, 0)}, (LOCAL, 0), lambda *_: None,
                          converter=converter(), served=served, **kwargs).start()
        made.append(t)
        return t, served

    yield make
    for t in made:
        t.close()


def connect(t: RaftTransport) -> socket.socket:
    sock = socket.create_connection(t.address, timeout=WAIT_S)
    sock.settimeout(WAIT_S)
    return sock


def test_answers_leave_in_request_order_with_their_correlation_ids(served_node: Any) -> None:
    t, served = served_node()
    with connect(t) as sock:
        for cid in (7, 3, 11):
            sock.sendall(request_frame(SERVED_KEY, cid))
        got = served.wait(3)
        assert [r.correlation_id for r, _ in got] == [7, 3, 11]
        got[2][1](answer_frame(11, b"third"))
        got[0][1](answer_frame(7, b"first"))
        assert read_answer(sock) == (7, b"first")  # the third waits for the second
        got[1][1](answer_frame(3, b"second"))
        assert read_answer(sock) == (3, b"second")
        assert read_answer(sock) == (11, b"third")


def test_two_connections_never_get_each_others_answers(served_node: Any) -> None:
    t, served = served_node()
    with connect(t) as a, connect(t) as b:
        a.sendall(request_frame(SERVED_KEY, 1))
        served.wait(1)
        b.sendall(request_frame(SERVED_KEY, 1))  # the same correlation id, another client
        got = served.wait(2)
        got[1][1](answer_frame(1, b"for b"))
        got[0][1](answer_frame(1, b"for a"))
        assert read_answer(b) == (1, b"for b")
        assert read_answer(a) == (1, b"for a")


def test_an_unanswered_request_times_out_and_its_late_answer_is_dropped(
        served_node: Any) -> None:
    t, served = served_node(served_timeout_ms=200)
    with connect(t) as sock:
        sock.sendall(request_frame(SERVED_KEY, 5))
        (request, reply), = served.wait(1)
        assert read_answer(sock) == (5, b"expired")
        reply(answer_frame(5, b"too late"))
        sock.sendall(request_frame(SERVED_KEY, 6))
        served.wait(2)[1][1](answer_frame(6, b"next"))
        assert read_answer(sock) == (6, b"next")  # not the late one
    assert t.stats.served_timeouts == 1


def test_beyond_the_in_flight_bound_the_connection_is_not_read(served_node: Any) -> None:
    t, served = served_node(served_in_flight=2)
    with connect(t) as sock:
        sock.sendall(b"".join(request_frame(SERVED_KEY, cid) for cid in (1, 2, 3, 4)))
        got = served.wait(2)
        time.sleep(0.2)  # not a synchronisation: gives a wrong transport time to hand more
        assert len(served.requests) == 2
        got[0][1](answer_frame(1, b"a"))
        assert read_answer(sock) == (1, b"a")
        got = served.wait(3)
        assert got[2][0].correlation_id == 3
        for i, (_, reply) in enumerate(got[1:], start=2):
            reply(answer_frame(i, b"x"))
        served.wait(4)[3][1](answer_frame(4, b"x"))
        assert [read_answer(sock)[0] for _ in range(3)] == [2, 3, 4]


def test_api_versions_lists_the_served_apis(served_node: Any) -> None:
    t, _ = served_node()
    with connect(t) as sock:
        sock.sendall(dispatch.encode_request(RequestHeader(18, 3, 9, "test"), {
            "client_software_name": "t", "client_software_version": "1"}))
        size = struct.unpack(">i", read_exactly(sock, 4))[0]
        _, body = dispatch.decode_response(18, 3, read_exactly(sock, size))
    keys = {e["api_key"]: (e["min_version"], e["max_version"]) for e in body["api_keys"]}
    assert keys[SERVED_KEY] == (0, 3)
    assert 52 in keys and OTHER_KEY not in keys


def test_an_api_nobody_serves_closes_the_connection_only(served_node: Any) -> None:
    t, served = served_node()
    with connect(t) as bad, connect(t) as good:
        bad.sendall(request_frame(OTHER_KEY, 1))
        assert bad.recv(1) == b""
        good.sendall(request_frame(SERVED_KEY, 2))
        served.wait(1)[0][1](answer_frame(2, b"ok"))
        assert read_answer(good) == (2, b"ok")


def test_a_connection_closed_forgets_its_requests(served_node: Any) -> None:
    t, served = served_node()
    sock = connect(t)
    sock.sendall(request_frame(SERVED_KEY, 1))
    (_, reply), = served.wait(1)
    sock.close()
    deadline = time.monotonic() + WAIT_S
    while t._served and time.monotonic() < deadline:  # noqa: SLF001 -- the bookkeeping
        time.sleep(0.01)
    assert not t._served  # noqa: SLF001
    reply(answer_frame(1, b"nobody"))  # dropped, no error
