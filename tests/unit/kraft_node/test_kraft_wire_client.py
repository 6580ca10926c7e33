"""``WireClient`` against a real quorum transport on loopback (DescribeQuorum answered by a
stand-in core) and against sockets that misbehave: answers come back as values, pipelined
requests are each matched to their correlation id whatever order they are received in, and
every failure is a ``WireError`` that says where and what."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.kraft_node.wire_client import WireClient, WireError, parse_address
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.raft_transport import RaftTransport
from fsm.errors import ErrorCode
from fsm.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse, ReplicaState

LOCAL = "127.0.0.1"
ANSWER = DescribeQuorumResponse(ErrorCode.NONE, 2, 5, 118,
                                (ReplicaState(1, 120, 7, 8), ReplicaState(2, 118, 9, 9)),
                                (ReplicaState(7, 100, 3, -1),))


@pytest.fixture
def voter() -> Iterator[RaftTransport]:
    codec = RecordsCodec(lambda _: b"", lambda _: ())
    holder: dict[str, RaftTransport] = {}

    def on_message(source: int, message: Any) -> None:
        if isinstance(message, DescribeQuorumRequest):
            holder["t"].send(source, ANSWER)

    t = RaftTransport(2, {2: (LOCAL, 0)}, (LOCAL, 0), on_message,
                      converter=RaftConverter(codec, "c1"))
    holder["t"] = t
    t.start()
    yield t
    t.close()


def test_a_value_in_a_value_out(voter: RaftTransport) -> None:
    with WireClient(*voter.address) as client:
        assert client.call_value(DescribeQuorumRequest()) == ANSWER


def test_pipelined_requests_are_matched_by_correlation_id(voter: RaftTransport) -> None:
    with WireClient(*voter.address) as client:
        first = client.send(55, 1, {"topics": [{"topic_name": "__cluster_metadata",
                                                "partitions": [{"partition_index": 0}]}]})
        second = client.send(55, 0, {"topics": [{"topic_name": "__cluster_metadata",
                                                 "partitions": [{"partition_index": 0}]}]})
        assert first != second
        v0 = client.receive(second)  # read past the first answer, which is kept
        v1 = client.receive(first)
    assert "last_fetch_timestamp" in v1["topics"][0]["partitions"][0]["current_voters"][0]
    assert v0["topics"][0]["partitions"][0]["leader_id"] == 2


def test_api_versions_lists_the_quorum_apis(voter: RaftTransport) -> None:
    with WireClient(*voter.address) as client:
        versions = client.api_versions()
    assert versions[55] == (0, 1) and 18 in versions and 62 not in versions


def test_nobody_listening_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind((LOCAL, 0))
        port = s.getsockname()[1]  # bound, not listening: the connect is refused
        with pytest.raises(WireError, match=f"cannot connect to {LOCAL}:{port}"):
            WireClient(LOCAL, port, timeout=2).connect()


def _server(behaviour: str) -> tuple[socket.socket, threading.Thread]:
    server = socket.create_server((LOCAL, 0))

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            if behaviour == "silent":
                conn.recv(65536)  # until the client gives up and closes
            elif behaviour == "garbage":
                conn.sendall(b"\x00\x00\x00\x08" + b"\x00\x00\x00\x63" + b"abcd")
                conn.recv(65536)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.parametrize(("behaviour", "message"), [
    ("silent", r"no answer from .* within 0.3 s"),
    ("close", r"closed the connection"),
    ("garbage", r"answered correlation id 99, which no request"),
])
def test_a_node_that_misbehaves_is_a_clear_error(behaviour: str, message: str) -> None:
    server, thread = _server(behaviour)
    try:
        with pytest.raises(WireError, match=message), \
                WireClient(*server.getsockname()[:2], timeout=0.3) as client:
            client.call_value(DescribeQuorumRequest())
    finally:
        thread.join(5)
        server.close()


@pytest.mark.parametrize(("text", "want"), [
    ("localhost:9093", ("localhost", 9093)), ("[::1]:9093", ("::1", 9093)),
    ("a:1,b:2", ("a", 1)),
])
def test_parse_address(text: str, want: tuple[str, int]) -> None:
    assert parse_address(text) == want


@pytest.mark.parametrize("text", ["localhost", ":9093", "h:0", "h:x", "h:70000"])
def test_parse_address_names_the_option(text: str) -> None:
    with pytest.raises(ValueError, match="--bootstrap-controller"):
        parse_address(text, "--bootstrap-controller")


@given(st.from_regex(r"[a-z0-9][a-z0-9.-]{0,30}", fullmatch=True),
       st.integers(min_value=1, max_value=65535), st.booleans())
def test_parse_address_round_trips(host: str, port: int, ipv6: bool) -> None:
    if ipv6:
        host = "::" + host.replace(".", "").replace("-", "")[:4]
        assert parse_address(f"[{host}]:{port}") == (host, port)
    else:
        assert parse_address(f"{host}:{port},other:1") == (host, port)


@given(st.text(max_size=30))
def test_parse_address_never_raises_anything_but_value_error(text: str) -> None:
    try:
        host, port = parse_address(text)
    except ValueError as e:
        assert "--bootstrap-server" in str(e)
    else:
        assert host and 0 < port < 65536
