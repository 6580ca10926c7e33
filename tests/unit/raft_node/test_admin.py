"""The admin socket: JSON lines each way, the node's operations by name, clear errors for a
bad request, bounded lines."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.raft_node.admin import MAX_LINE, AdminClient, AdminError, AdminServer


def _boom(req: dict[str, Any]) -> dict[str, Any]:
    raise KeyError("inside")


def _refuse(req: dict[str, Any]) -> dict[str, Any]:
    raise AdminError("not the leader")


@pytest.fixture
def server() -> Iterator[AdminServer]:
    s = AdminServer({"echo": lambda r: {"got": r.get("x")}, "boom": _boom, "refuse": _refuse})
    s.start()
    yield s
    s.close()


def test_an_op_answers_and_a_refusal_raises(server: AdminServer) -> None:
    with AdminClient(server.host, server.port) as c:
        assert c.request("echo", x=[1, 2]) == {"ok": True, "got": [1, 2]}
        with pytest.raises(AdminError, match="not the leader"):
            c.request("refuse")
        with pytest.raises(AdminError, match="KeyError"):
            c.request("boom")
        with pytest.raises(AdminError, match="unknown op 'nope'; known: boom, echo, refuse"):
            c.request("nope")
        assert c.request("echo", x=3)["got"] == 3  # the connection lives on


def test_bad_lines_get_clear_errors(server: AdminServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=5) as s:
        f = s.makefile("rwb")
        f.write(b"{not json\n[1]\n")
        f.flush()
        assert b"not JSON" in f.readline()
        assert b'a request is an object with a string \\"op\\"' in f.readline()
        f.write(b"x" * (MAX_LINE + 10) + b"\n")
        f.flush()
        assert b"request over" in f.readline()
        assert f.readline() == b""  # closed after an oversized line


def test_ops_can_be_added_and_a_server_never_started_closes() -> None:
    from adapters.raft_node.admin import AdminClient, AdminServer

    server = AdminServer({"a": lambda req: {"x": 1}})
    server.close()  # never started: returns at once
    server = AdminServer({"a": lambda req: {"x": 1}})
    server.add_ops({"b": lambda req: {"y": 2}})
    with pytest.raises(ValueError, match="already served: a"):
        server.add_ops({"a": lambda req: {}})
    server.start()
    try:
        with AdminClient("127.0.0.1", server.port) as client:
            assert client.request("b")["y"] == 2 and client.request("a")["x"] == 1
    finally:
        server.close()
