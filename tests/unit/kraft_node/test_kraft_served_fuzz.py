"""The controller listener under garbage: a frame of a served API whose body does not decode
closes that connection only -- the transport's thread lives on and answers the next client's
well-formed request (with the real KRaft codec and ``ControllerApis``; the controller is a
stand-in that answers NOT_CONTROLLER)."""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.kraft_node.controller_apis import ControllerApis
from adapters.kraft_node.wire_client import WireClient
from adapters.network.codec.kraft_registry import CONTROLLER_SERVED
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.raft_transport import RaftTransport
from fsm.errors import ErrorCode
from fsm.kraft.controller import not_controller
from fsm.kraft.controller import requests as rq

LOCAL = "127.0.0.1"


class Standby:
    """Answers every controller request as a standby does."""

    status = type("S", (), {"leader_id": -1})()
    runner = None

    def request(self, value: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(not_controller.not_controller_for(value))
        return future

    def call(self, fn: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn())
        return future


@pytest.fixture(scope="module")
def listener() -> Iterator[RaftTransport]:
    codec = RecordsCodec(lambda _: b"", lambda _: ())
    t = RaftTransport(1, {1: (LOCAL, 0)}, (LOCAL, 0), lambda *_: None,
                      converter=RaftConverter(codec, "c1"),
                      served=ControllerApis(Standby(), "c1"))
    t.start()
    yield t
    t.close()


def request_frame(key: int, version: int, body: bytes) -> bytes:
    client = b"fuzz"
    header = struct.pack(">hhih", key, version, 1, len(client)) + client + b"\0"
    return struct.pack(">i", len(header) + len(body)) + header + body


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(sorted(CONTROLLER_SERVED)), body=st.binary(max_size=64),
       data=st.data())
def test_garbage_closes_only_its_connection(listener: RaftTransport, key: int, body: bytes,
                                           data: st.DataObject) -> None:
    lo, hi = CONTROLLER_SERVED[key]
    version = data.draw(st.integers(lo, hi))
    with socket.create_connection(listener.address, timeout=5) as sock:
        sock.sendall(request_frame(key, version, body))
        sock.settimeout(5)
        with contextlib.suppress(ConnectionResetError):
            sock.recv(65536)  # an answer (the bytes happened to decode) or the close
    with WireClient(*listener.address, timeout=5) as c:
        answer = c.call_value(rq.UnregisterBrokerRequest(3))
    assert answer.error is ErrorCode.NOT_CONTROLLER
