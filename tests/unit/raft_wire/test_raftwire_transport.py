"""The quorum transport on loopback: three transports on ephemeral ports exchange every
message type, a tool is answered on its own connection, a voter that is down is reached once
it comes up, garbage and silence close only the connection they came on, a full queue drops
its oldest requests, ``close`` joins the thread. Every wait is on a condition."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from raftwire_stub_records import converter

from adapters.network.codec import dispatch
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.raft_convert import api_of
from adapters.network.codec.raft_frames import decode_response, encode_body, encode_request
from adapters.network.codec.raft_registry import SEND_VERSIONS
from adapters.raft_transport import ANONYMOUS_BASE, RaftTransport
from fsm.errors import ErrorCode
from fsm.raft.messages import (
    Batch,
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
    LeaderChange,
    OffsetAndEpoch,
    ReplicaState,
    VoteRequest,
    VoteResponse,
)

WAIT_S = 10.0
LOCAL = "127.0.0.1"

EXCHANGES: list[tuple[Any, Any]] = [
    (VoteRequest(5, 1, 4, 120), VoteResponse(ErrorCode.NONE, 5, -1, True)),
    (BeginQuorumEpochRequest(5, 1), BeginQuorumEpochResponse(ErrorCode.NONE, 5, 1)),
    (EndQuorumEpochRequest(5, 1, (3, 2)),
     EndQuorumEpochResponse(ErrorCode.FENCED_LEADER_EPOCH, 6, 3)),
    (FetchRequest(1, 5, 120, 4),
     FetchResponse(ErrorCode.NONE, 5, 2, 118, 0,
                   (Batch(120, 5, (LeaderChange(2, (1, 2, 3), (2, 3)),), control=True),
                    Batch(121, 5, (b"record-a", b"record-b")),))),
    (FetchRequest(1, 5, 300, 3),
     FetchResponse(ErrorCode.NONE, 5, 2, 118, 0, diverging_epoch=OffsetAndEpoch(250, 3))),
    (FetchSnapshotRequest(1, 5, OffsetAndEpoch(100, 4), 0),
     FetchSnapshotResponse(ErrorCode.NONE, 5, 2, OffsetAndEpoch(100, 4), 3, 0, b"abc")),
    (DescribeQuorumRequest(),
     DescribeQuorumResponse(ErrorCode.NONE, 2, 5, 118, (ReplicaState(1, 120, 7, 8),),
                            (ReplicaState(7, -1),))),
]


class Inbox:
    """``on_message`` of a transport: records (source, message); optionally answers."""

    def __init__(self) -> None:
        self.items: list[tuple[int, Any]] = []
        self.cond = threading.Condition()
        self.answer: Callable[[int, Any], None] | None = None

    def __call__(self, source: int, message: Any) -> None:
        with self.cond:
            self.items.append((source, message))
            self.cond.notify_all()
        if self.answer is not None:
            self.answer(source, message)

    def wait_for(self, predicate: Callable[[list[tuple[int, Any]]], bool],
                 what: str = "messages") -> list[tuple[int, Any]]:
        with self.cond:
            if not self.cond.wait_for(lambda: predicate(self.items), WAIT_S):
                pytest.fail(f"waited {WAIT_S} s for {what}; got {self.items}")
            return list(self.items)

    def wait_count(self, n: int) -> list[tuple[int, Any]]:
        return self.wait_for(lambda items: len(items) >= n, f"{n} messages")


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    """Waits for a condition the transport does not signal (its counters): checked every
    few milliseconds, up to ``WAIT_S``."""
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_S} s for {what}")
        time.sleep(0.005)


def bound_socket() -> socket.socket:
    """A socket bound to an ephemeral loopback port and not listening yet: connections to it
    are refused until a transport (or the test) listens on it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((LOCAL, 0))
    return s


@pytest.fixture
def cluster() -> Iterator[Callable[..., tuple[dict[int, RaftTransport], dict[int, Inbox]]]]:
    made: list[RaftTransport] = []
    opened: list[socket.socket] = []

    def make(ids: tuple[int, ...] = (1, 2, 3), start: tuple[int, ...] | None = None,
             **options: Any) -> tuple[dict[int, RaftTransport], dict[int, Inbox],
                                      dict[int, socket.socket]]:
        sockets = {i: bound_socket() for i in ids}
        opened.extend(sockets.values())
        voters = {i: s.getsockname()[:2] for i, s in sockets.items()}
        transports, inboxes = {}, {}
        for i in ids if start is None else start:
            inboxes[i] = Inbox()
            transports[i] = RaftTransport(i, voters, sockets[i], inboxes[i],
                                          converter=converter(), **options)
            made.append(transports[i].start())
        return transports, inboxes, sockets  # type: ignore[return-value]

    yield make  # type: ignore[misc]
    for t in made:
        t.close()
    for t in made:
        assert not t._thread.is_alive()
    for s in opened:
        s.close()


def answer_with(transport: RaftTransport, answers: dict[type, list[Any]]) -> Callable[..., None]:
    """An ``answer`` hook: each request gets the next response listed for its type."""

    def answer(source: int, message: Any) -> None:
        if api_of(message)[1]:
            transport.send(source, answers[type(message)].pop(0))

    return answer


def test_every_message_type_goes_out_and_its_answer_comes_back(cluster: Any) -> None:
    transports, inboxes, _ = cluster()
    answers: dict[type, list[Any]] = {}
    for request, response in EXCHANGES:
        answers.setdefault(type(request), []).append(response)
    inboxes[2].answer = answer_with(transports[2], answers)
    for request, _ in EXCHANGES:
        transports[1].send(2, request)
    got = inboxes[1].wait_count(len(EXCHANGES))
    # node 2 saw every request, from node 1 (named by the request, or its raft-1 client id)
    assert inboxes[2].items == [(1, request) for request, _ in EXCHANGES]
    # node 1 got every answer, from node 2, equal to what node 2 sent, in order
    assert got == [(2, response) for _, response in EXCHANGES]
    assert inboxes[3].items == []


def test_all_three_talk_to_each_other_at_once(cluster: Any) -> None:
    transports, inboxes, _ = cluster()
    for i, t in transports.items():
        inboxes[i].answer = lambda source, m, t=t: (
            t.send(source, VoteResponse(ErrorCode.NONE, m.candidate_epoch, -1, True))
            if isinstance(m, VoteRequest) else None)
    for i, t in transports.items():
        for j in transports:
            if j != i:
                t.send(j, VoteRequest(7, i, 6, 40 + i))
    for i in transports:
        inboxes[i].wait_count(4)  # two requests in, two answers back
        requests = sorted(s for s, m in inboxes[i].items if isinstance(m, VoteRequest))
        answers = sorted(s for s, m in inboxes[i].items if isinstance(m, VoteResponse))
        assert requests == answers == sorted(set(transports) - {i})


def test_a_tool_is_answered_on_its_own_connection(cluster: Any) -> None:
    transports, inboxes, _ = cluster(ids=(1, 2, 3), start=(1,))
    leader = transports[1]
    answer = DescribeQuorumResponse(ErrorCode.NONE, 1, 9, 50, (ReplicaState(1, 50, -1, 5),))
    inboxes[1].answer = lambda source, m: leader.send(source, answer)
    with socket.create_connection(leader.address, timeout=WAIT_S) as tool:
        # ApiVersions first, as Kafka's tools do: the quorum's APIs are listed
        tool.sendall(dispatch.encode_request(RequestHeader(18, 3, 1, "kafka-metadata-quorum"),
                                             {"client_software_name": "tool",
                                              "client_software_version": "1"}))
        corr, body = dispatch.decode_response(18, 3, read_frame(tool))
        assert corr == 1 and body["error_code"] == 0
        listed = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
        assert listed == {1: (12, 12), 18: (0, 3), 52: (0, 0), 53: (0, 0), 54: (0, 0),
                          55: (0, 1), 59: (0, 0)}
        key, _, wire = converter().to_wire(DescribeQuorumRequest())
        tool.sendall(encode_request(key, 1, 2, "kafka-metadata-quorum", wire))
        corr, body = decode_response(key, 1, read_frame(tool))
    assert corr == 2
    assert converter().from_wire(key, False, body) == answer
    [(source, message)] = inboxes[1].items
    assert source <= ANONYMOUS_BASE and message == DescribeQuorumRequest()


def read_frame(sock: socket.socket) -> bytes:
    reader = FrameReader()
    while True:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed before a whole frame")
        frames = reader.feed(data)
        if frames:
            return frames[0]


def test_a_voter_that_is_down_gets_its_requests_once_it_comes_up(cluster: Any) -> None:
    transports, inboxes, sockets = cluster(start=(1,), retry_backoff_ms=10, max_backoff_ms=50)
    transports[1].send(3, VoteRequest(2, 1, 1, 10))
    wait_until(lambda: transports[1].stats.connect_failures >= 3, "refused connects")
    assert transports[1].stats.connects == 0
    late = Inbox()
    voters = {i: s.getsockname()[:2] for i, s in sockets.items()}
    with RaftTransport(3, voters, sockets[3], late, converter=converter()):
        late.wait_count(1)
        assert late.items == [(1, VoteRequest(2, 1, 1, 10))]
    assert transports[1].stats.connects == 1


def test_a_full_queue_keeps_the_newest_requests(cluster: Any) -> None:
    transports, _, sockets = cluster(start=(1,), queue_limit=4, retry_backoff_ms=10,
                                     max_backoff_ms=20)
    for epoch in range(10):
        transports[1].send(2, BeginQuorumEpochRequest(epoch, 1))
    assert transports[1].stats.dropped_requests == 6
    late = Inbox()
    voters = {i: s.getsockname()[:2] for i, s in sockets.items()}
    with RaftTransport(2, voters, sockets[2], late, converter=converter()):
        late.wait_count(4)
        assert [m.leader_epoch for _, m in late.items] == [6, 7, 8, 9]


@pytest.mark.parametrize(("garbage", "is_bad_frame"), [
    (os.urandom(64), False),  # may read as a frame not yet whole: closed at end of input
    (b"\x7f\xff\xff\xff", True),  # a size prefix over the maximum frame size
    (b"\xff\xff\xff\xfe", True),  # a negative size
    (b"\x00\x00\x00\x06\x00\x34\x00\x00\x00\x01", True),  # Vote v0 cut short in its header
    (b"\x00\x00\x00\x08\x00\x03\x00\x08\x00\x00\x00\x01", True),  # Metadata: not quorum
], ids=["random", "too-large", "negative", "truncated", "not-quorum"])
def test_garbage_closes_only_its_connection(cluster: Any, garbage: bytes,
                                            is_bad_frame: bool) -> None:
    transports, inboxes, _ = cluster(max_frame_size=1 << 20)
    with socket.create_connection(transports[2].address, timeout=WAIT_S) as bad:
        bad.sendall(garbage)
        bad.shutdown(socket.SHUT_WR)  # nothing more will come
        assert bad.recv(100) == b""  # closed by the transport, nothing answered
    if is_bad_frame:
        wait_until(lambda: transports[2].stats.bad_frames == 1, "the bad frame counted")
    transports[1].send(2, BeginQuorumEpochRequest(3, 1))
    inboxes[2].wait_count(1)
    assert inboxes[2].items == [(1, BeginQuorumEpochRequest(3, 1))]


def test_a_peer_answering_garbage_is_dropped_and_reconnected(cluster: Any) -> None:
    transports, _, sockets = cluster(start=(1,), retry_backoff_ms=10, max_backoff_ms=20)
    fake = sockets[2]
    fake.listen()
    transports[1].send(2, VoteRequest(2, 1, 1, 10))
    conn, _ = fake.accept()
    with conn:
        correlation = read_frame(conn)[4:8]  # after api key and version
        conn.sendall(b"\x00\x00\x00\x0b" + correlation + b"\x00garbage")
        wait_until(lambda: transports[1].stats.bad_frames == 1, "the bad answer counted")
    transports[1].send(2, VoteRequest(3, 1, 1, 10))
    conn, _ = fake.accept()  # it came back: a fresh connection
    with conn:
        frame = read_frame(conn)
    assert frame[:2] == (52).to_bytes(2, "big")


def test_a_silent_peer_times_out_and_is_reconnected(cluster: Any) -> None:
    transports, _, sockets = cluster(start=(1,), request_timeout_ms=150, retry_backoff_ms=10,
                                     max_backoff_ms=20)
    fake = sockets[2]
    fake.listen()
    transports[1].send(2, VoteRequest(2, 1, 1, 10))
    first, _ = fake.accept()
    with first:
        read_frame(first)
        wait_until(lambda: transports[1].stats.timeouts == 1, "the request timed out")
        assert first.recv(100) == b""  # nothing came back on it at all: given up
    transports[1].send(2, VoteRequest(3, 1, 1, 10))
    second, _ = fake.accept()
    with second:
        read_frame(second)


def test_an_answer_nobody_waits_for_is_dropped(cluster: Any) -> None:
    transports, inboxes, _ = cluster()
    transports[1].send(2, VoteResponse(ErrorCode.NONE, 1, -1, False))
    wait_until(lambda: transports[1].stats.dropped_responses == 1, "the answer dropped")
    assert inboxes[2].items == []


def test_bad_values_raise_in_the_caller(cluster: Any) -> None:
    transports, _, _ = cluster()
    with pytest.raises(KeyError, match="not a voter"):
        transports[1].send(9, VoteRequest(1, 1, 0, 0))
    with pytest.raises(TypeError, match="not a quorum message"):
        transports[1].send(2, "hello")
    with pytest.raises(ValueError):
        transports[1].send(2, VoteRequest(2**40, 1, 0, 0))  # epoch beyond int32


def test_close_joins_the_thread_and_frees_the_port() -> None:
    sock = bound_socket()
    address = sock.getsockname()[:2]
    t = RaftTransport(1, {1: address}, sock, Inbox(), converter=converter()).start()
    assert t._thread.is_alive()
    t.close()
    assert not t._thread.is_alive()
    t.close()  # idempotent
    again = socket.socket()
    again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    again.bind(address)
    again.close()


def test_the_frame_of_a_request_carries_the_raft_client_id() -> None:
    body = encode_body(52, SEND_VERSIONS[52], converter().to_wire(VoteRequest(1, 1, 0, 0))[2],
                       response=False)
    frame = encode_request(52, 0, 7, "raft-1", body)
    assert b"raft-1" in frame[:20]


def test_another_clusters_request_is_answered_inconsistent_cluster_id() -> None:
    socks = {i: bound_socket() for i in (1, 2, 3)}
    voters = {i: s.getsockname()[:2] for i, s in socks.items()}
    inboxes = {i: Inbox() for i in socks}
    ids = {1: "cluster-x", 2: "cluster-y", 3: None}  # node 3 names no cluster: taken
    made = [RaftTransport(i, voters, socks[i], inboxes[i], converter=converter(ids[i])).start()
            for i in socks]
    try:
        made[0].send(2, VoteRequest(4, 1, 3, 10))
        made[0].send(2, FetchRequest(1, 4, 10, 3))
        made[2].send(2, VoteRequest(4, 3, 3, 10))
        assert inboxes[1].wait_count(2) == [
            (2, VoteResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, -1, -1, False)),
            (2, FetchResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, -1, -1, -1, -1))]
        assert inboxes[2].wait_count(1) == [(3, VoteRequest(4, 3, 3, 10))]
    finally:
        for t in made:
            t.close()
        for s in socks.values():
            s.close()


def test_at_most_max_in_flight_requests_wait_for_answers(cluster: Any) -> None:
    transports, inboxes, sockets = cluster(start=(1,), max_in_flight=3, queue_limit=20)
    fake = sockets[2]
    fake.listen()
    for epoch in range(10):
        transports[1].send(2, BeginQuorumEpochRequest(epoch, 1))
    conn, _ = fake.accept()
    with conn:
        reader = FrameReader()
        frames: list[bytes] = []

        def read(n: int) -> None:
            while len(frames) < n:
                data = conn.recv(65536)
                assert data, "closed"
                frames.extend(reader.feed(data))

        read(3)
        conn.settimeout(0.3)  # nothing more comes while three wait (bounded wait, no sleep)
        with pytest.raises(TimeoutError):
            read(4)
        conn.settimeout(WAIT_S)
        correlation = frames[0][4:8]
        body = encode_body(53, 0, converter().to_wire(
            BeginQuorumEpochResponse(ErrorCode.NONE, 0, 1))[2], response=True)
        conn.sendall((4 + len(body)).to_bytes(4, "big") + correlation + body)  # header v0
        read(4)  # one answered: one more goes out
        assert len(frames) == 4
    assert inboxes[1].wait_count(1) == [(2, BeginQuorumEpochResponse(ErrorCode.NONE, 0, 1))]


def test_records_that_do_not_decode_close_the_connection_not_the_thread() -> None:
    from raftwire_stub_records import STUB_RECORDS

    from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec

    def refuse(data: bytes) -> Any:
        raise ValueError("CRC-32C mismatch")

    socks = {i: bound_socket() for i in (1, 2)}
    voters = {i: s.getsockname()[:2] for i, s in socks.items()}
    inbox = Inbox()
    holder: list[RaftTransport] = []
    answer = FetchResponse(ErrorCode.NONE, 1, 2, 0, 0, (Batch(0, 1, (b"x",)),))
    t2 = RaftTransport(2, voters, socks[2], lambda s, m: holder[0].send(s, answer),
                       converter=converter()).start()
    holder.append(t2)
    t1 = RaftTransport(1, voters, socks[1], inbox, converter=RaftConverter(
        RecordsCodec(STUB_RECORDS.encode, refuse))).start()
    try:
        t1.send(2, FetchRequest(1, 1, 0, 0))
        wait_until(lambda: t1.stats.bad_frames == 1, "the bad records counted")
        assert t1._thread.is_alive() and inbox.items == []
    finally:
        t1.close()
        t2.close()
        for s in socks.values():
            s.close()


def test_a_resent_fetch_supersedes_the_one_still_waiting(cluster: Any) -> None:
    """A follower resends its Fetch after its request timeout while the leader still holds
    (parks) the first; the leader answers once: under the newest correlation id, and the next
    answer on the connection is not one request behind."""
    transports, inboxes, _ = cluster(ids=(1, 2, 3), start=(1,), request_timeout_ms=200)
    leader = transports[1]
    key, _, wire = converter().to_wire(FetchRequest(2, 5, 120, 4))
    answer = FetchResponse(ErrorCode.NONE, 5, 1, 118, 0)
    with socket.create_connection(leader.address, timeout=WAIT_S) as follower:
        follower.sendall(encode_request(key, SEND_VERSIONS[key], 1, "raft-2", wire))
        wait_until(lambda: len(inboxes[1].items) == 1, "the fetch delivered")
        time.sleep(0.15)  # not a synchronisation: the follower's request timeout passing
        follower.sendall(encode_request(key, SEND_VERSIONS[key], 2, "raft-2", wire))
        wait_until(lambda: len(inboxes[1].items) == 2, "the resent fetch delivered")
        leader.send(2, answer)
        corr, _ = decode_response(key, SEND_VERSIONS[key], read_frame(follower))
        assert corr == 2
        follower.sendall(encode_request(key, SEND_VERSIONS[key], 3, "raft-2", wire))
        wait_until(lambda: len(inboxes[1].items) == 3, "the third fetch delivered")
        leader.send(2, answer)
        corr, _ = decode_response(key, SEND_VERSIONS[key], read_frame(follower))
        assert corr == 3
