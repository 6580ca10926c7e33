"""Parsing ZooKeeper's four-letter-word answers (samples taken from Debian's 3.8.0)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.ensemble import four_letter
from adapters.ensemble.four_letter import FourLetterError, parse_mntr, parse_srvr

VERSION = "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC"
LEADER_SRVR = (
    f"Zookeeper version: {VERSION}\nLatency min/avg/max: 0/0.0/0\nReceived: 2\nSent: 1\n"
    "Connections: 1\nOutstanding: 0\nZxid: 0x100000003\nMode: leader\nNode count: 5\n"
    "Proposal sizes last/min/max: -1/-1/-1\n"
)
FOLLOWER_SRVR = (
    f"Zookeeper version: {VERSION}\nLatency min/avg/max: 0/0.0/0\nReceived: 2\nSent: 1\n"
    "Connections: 1\nOutstanding: 0\nZxid: 0x0\nMode: follower\nNode count: 5\n"
)
STANDALONE_STAT = (
    f"Zookeeper version: {VERSION}\nClients:\n /127.0.0.1:46908[0](queued=0,recved=1,sent=0)\n\n"
    "Latency min/avg/max: 0/0.0/0\nReceived: 5\nSent: 5\nConnections: 1\nOutstanding: 0\n"
    "Zxid: 0x2a\nMode: standalone\nNode count: 7\n"
)
LEADER_MNTR = (
    f"zk_version\t{VERSION}\nzk_server_state\tleader\nzk_peer_state\tleading - broadcast\n"
    "zk_avg_latency\t0.0\nzk_znode_count\t5\nzk_synced_followers\t2\nzk_min_proposal_size\t-1\n"
)


def test_leader_srvr() -> None:
    info = parse_srvr(LEADER_SRVR)
    assert info.mode == "leader" and info.serving
    assert info.zxid == 0x100000003 and info.zxid_hex == "0x100000003"
    assert (info.epoch, info.counter) == (1, 3)
    assert info.node_count == 5 and info.connections == 1 and info.outstanding == 0
    assert info.version == VERSION


def test_follower_srvr() -> None:
    info = parse_srvr(FOLLOWER_SRVR)
    assert (info.mode, info.zxid, info.epoch, info.counter) == ("follower", 0, 0, 0)


def test_stat_with_client_lines_parses_like_srvr() -> None:
    info = parse_srvr(STANDALONE_STAT)
    assert (info.mode, info.zxid, info.node_count) == ("standalone", 42, 7)


def test_not_serving() -> None:
    info = parse_srvr(four_letter.NOT_SERVING_TEXT + "\n")
    assert info.mode == four_letter.NOT_SERVING and not info.serving
    assert info.zxid is None and info.zxid_hex is None and info.epoch is None
    assert parse_mntr(four_letter.NOT_SERVING_TEXT) == {"zk_server_state": "not serving"}


def test_garbage_is_an_error() -> None:
    with pytest.raises(FourLetterError, match="Mode"):
        parse_srvr("hello\nworld\n")
    with pytest.raises(FourLetterError):
        parse_mntr("no tabs here\n")


def test_mntr_types() -> None:
    metrics = parse_mntr(LEADER_MNTR)
    assert metrics["zk_server_state"] == "leader"
    assert metrics["zk_peer_state"] == "leading - broadcast"
    assert metrics["zk_synced_followers"] == 2 and metrics["zk_min_proposal_size"] == -1
    assert metrics["zk_avg_latency"] == 0.0 and isinstance(metrics["zk_avg_latency"], float)
    assert metrics["zk_version"] == VERSION


@given(
    epoch=st.integers(0, 2**31 - 1),
    counter=st.integers(0, 2**32 - 1),
    mode=st.sampled_from(sorted(four_letter.SERVING_MODES)),
)
def test_zxid_and_mode_round_trip(epoch: int, counter: int, mode: str) -> None:
    zxid = (epoch << 32) | counter
    info = parse_srvr(f"Zookeeper version: x\nZxid: {zxid:#x}\nMode: {mode}\n")
    assert (info.mode, info.zxid, info.epoch, info.counter) == (mode, zxid, epoch, counter)


@pytest.fixture
def fake_server() -> Iterator[tuple[int, list[bytes], list[bytes]]]:
    """A TCP server on loopback that answers each connection with the next queued answer and
    closes it, as ZooKeeper does. Yields (port, answers to queue, requests received)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    answers: list[bytes] = []
    requests: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                requests.append(conn.recv(4))
                conn.sendall(answers.pop(0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], answers, requests
    finally:
        done.set()
        thread.join(timeout=5)
        listener.close()


def test_send_command_over_a_socket(fake_server: tuple[int, list[bytes], list[bytes]]) -> None:
    port, answers, requests = fake_server
    answers += [
        FOLLOWER_SRVR.encode(),
        b"imok",
        b"srvr is not executed because it is not in the whitelist.\n",
    ]
    assert four_letter.srvr("127.0.0.1", port).mode == "follower"
    assert four_letter.ruok("127.0.0.1", port)
    with pytest.raises(FourLetterError, match="whitelist=\\*"):
        four_letter.srvr("127.0.0.1", port)
    assert requests == [b"srvr", b"ruok", b"srvr"]


def test_unreachable_server_is_a_four_letter_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: connections are refused
        with pytest.raises(FourLetterError, match=f"127.0.0.1:{port}"):
            four_letter.srvr("127.0.0.1", port, timeout=1.0)
        assert not four_letter.ruok("127.0.0.1", port, timeout=1.0)
