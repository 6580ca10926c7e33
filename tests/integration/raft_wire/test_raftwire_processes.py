"""The quorum transport between processes over TCP: node 1 (this process) and two answering
nodes (``raftwire_echo_node.py``, each its own process); every message type goes out and its
answer comes back; a node killed and started again on its port gets the requests queued for
it meanwhile."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raftwire_echo_node import BYTES

from adapters.network.codec.raft_convert import RaftConverter
from adapters.raft_transport import RaftTransport
from fsm.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    VoteRequest,
    VoteResponse,
)

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
WAIT_S = 30.0
REQUESTS = [VoteRequest(4, 1, 3, 10), BeginQuorumEpochRequest(4, 1),
            EndQuorumEpochRequest(4, 1, (2, 3)), FetchRequest(1, 4, 10, 3),
            FetchSnapshotRequest(1, 4, OffsetAndEpoch(8, 3), 0), DescribeQuorumRequest()]
ANSWERS = [VoteResponse, BeginQuorumEpochResponse, EndQuorumEpochResponse, FetchResponse,
           FetchSnapshotResponse, DescribeQuorumResponse]


def bound(port: int = 0) -> socket.socket:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    return s


class Nodes:
    def __init__(self) -> None:
        self.sockets = {i: bound() for i in (1, 2, 3)}
        self.voters = {i: s.getsockname()[:2] for i, s in self.sockets.items()}
        self.procs: dict[int, subprocess.Popen[str]] = {}

    def start(self, node: int) -> None:
        s = self.sockets.pop(node, None) or bound(self.voters[node][1])
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "raftwire_echo_node.py"), "--node", str(node),
             "--fd", str(s.fileno()), "--voters", json.dumps(self.voters)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, pass_fds=(s.fileno(),),
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        s.close()  # the child holds it now: when it dies, the port refuses again
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        self.procs[node] = proc

    def stop(self, node: int) -> None:
        proc = self.procs.pop(node)
        proc.kill()
        proc.wait(WAIT_S)

    def close(self) -> None:
        for node in list(self.procs):
            proc = self.procs.pop(node)
            assert proc.stdin is not None
            proc.stdin.close()  # its orderly end
            try:
                proc.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
        for s in self.sockets.values():
            s.close()


@pytest.fixture
def nodes() -> Iterator[Nodes]:
    n = Nodes()
    try:
        yield n
    finally:
        n.close()


class Inbox:
    def __init__(self) -> None:
        self.items: list[tuple[int, Any]] = []
        self.cond = threading.Condition()

    def __call__(self, source: int, message: Any) -> None:
        with self.cond:
            self.items.append((source, message))
            self.cond.notify_all()

    def wait_count(self, n: int, timeout: float = WAIT_S) -> list[tuple[int, Any]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.items) >= n, timeout), self.items
            return list(self.items)

    def has(self, n: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.items) >= n, timeout)


def test_every_message_type_between_processes_and_a_restart(nodes: Nodes) -> None:
    nodes.start(2)
    nodes.start(3)
    inbox = Inbox()
    with RaftTransport(1, nodes.voters, nodes.sockets.pop(1), inbox,
                       converter=RaftConverter(BYTES, "it"), retry_backoff_ms=20,
                       max_backoff_ms=200) as t:
        for peer in (2, 3):
            for request in REQUESTS:
                t.send(peer, request)
        got = inbox.wait_count(2 * len(REQUESTS))
        for peer in (2, 3):
            answers = [m for s, m in got if s == peer]
            assert [type(m) for m in answers] == ANSWERS
            fetched = answers[3]
            assert fetched.leader_id == peer and fetched.batches[0].records == (
                b"from-%d" % peer,)
        nodes.stop(3)
        t.send(3, VoteRequest(5, 1, 3, 10))  # queued while 3 is down (or lost with the
        nodes.start(3)                       # connection, if sent before its end was seen)
        for _ in range(30):  # as Raft does: resend until answered
            if inbox.has(2 * len(REQUESTS) + 1, timeout=1.0):
                break
            t.send(3, VoteRequest(5, 1, 3, 10))
        [(source, answer)] = inbox.wait_count(2 * len(REQUESTS) + 1)[-1:]
        assert (source, answer) == (3, VoteResponse(answer.error, 5, -1, True))
