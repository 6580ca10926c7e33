"""ApiVersions v0-v3 and Metadata v0-v8 from a broker's cache; bad frames close one
connection and the broker keeps serving the others."""

from __future__ import annotations

import struct

import pytest
from netserver_support import (
    EPOCH,
    LOCAL,
    broker_server,
    client,
    closed_by_peer,
    info,
    running_core,
    um,
    ump,
    wait_until,
)

from adapters.network import SocketServer, WireClient
from adapters.network.codec import ApiKey, RequestHeader, decode_response, encode_request
from adapters.network.codec import convert as C
from adapters.network.codec.apis.metadata import AUTHORIZED_OPERATIONS_UNKNOWN
from fsm.broker import BrokerCore
from fsm.effects import Respond
from fsm.events import RequestReceived
from fsm.values import BrokerInfo, Endpoint

MD = ApiKey.METADATA
AV = ApiKey.API_VERSIONS


def cached_core() -> BrokerCore:
    """A broker whose cache knows brokers 1, 2 (PLAINTEXT) and 4 (CONTROLLER only)."""
    core = running_core()
    live = (info(1, 9001), BrokerInfo(2, 11, (Endpoint("PLAINTEXT", "h2", 9002),), "rack-b"),
            BrokerInfo(4, 12, (Endpoint("CONTROLLER", LOCAL, 9104),)))
    req = um((ump("a", 0, 1, (1, 2), offline=(2,)), ump("a", 1, 2, (2, 1), isr=(2,)),
              ump("b", 0, 4, (4, 1)), ump("c", 0, -1, (1,))), live)
    effects = core.handle(RequestReceived(req, 1))
    assert isinstance(effects[0], Respond) and effects[0].response.error == 0
    return core


@pytest.fixture
def served() -> tuple[SocketServer, BrokerCore]:
    core = cached_core()
    server, _ = broker_server(core)
    yield server, core
    server.stop()


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_api_versions_every_version(served, version: int) -> None:
    server, _ = served
    body = {"client_software_name": "kcontrol-test", "client_software_version": "1.0"}
    with client(server) as c:
        resp = c.request(AV, version, body if version >= 3 else {})
    assert resp["error_code"] == 0
    got = {e["api_key"]: (e["min_version"], e["max_version"]) for e in resp["api_keys"]}
    assert got[18] == (0, 3) and got[3] == (0, 8) and got[7] == (0, 2)
    assert 4 not in got  # controller APIs live on the control plane


def test_api_versions_v4_gets_the_fallback_and_the_connection_stays(served) -> None:
    server, _ = served
    with client(server) as c:
        c.send_raw(struct.pack(">ihhih", 12, 18, 4, 9, 1) + b"c" + b"\x00")
        corr, body = decode_response(AV, 0, c.recv_frame())
        assert corr == 9 and body["error_code"] == 35
        assert body["api_keys"] == [{"api_key": 18, "min_version": 0, "max_version": 3}]
        assert c.request(AV, 3, {"client_software_name": "x", "client_software_version": "1"}
                         )["error_code"] == 0


def test_api_versions_v3_malformed_software_name_is_invalid_request(served) -> None:
    server, _ = served
    with client(server) as c:
        resp = c.request(AV, 3, {"client_software_name": "-bad-", "client_software_version": "1"})
        assert resp["error_code"] == 42 and resp["api_keys"] == []
        assert c.request(AV, 0, {})["error_code"] == 0


@pytest.mark.parametrize("version", range(9))
def test_metadata_every_version_all_topics(served, version: int) -> None:
    server, _ = served
    with client(server) as c:
        resp = c.metadata(None, version)
    brokers = {b["node_id"]: b for b in resp["brokers"]}
    assert set(brokers) == {1, 2}  # broker 4 has no PLAINTEXT endpoint: left out
    assert (brokers[1]["host"], brokers[1]["port"]) == (LOCAL, 9001)
    if version >= 1:
        assert resp["controller_id"] == 2 and brokers[2]["rack"] == "rack-b"
    if version >= 2:
        assert resp["cluster_id"] == "kc-test"
    topics = {t["name"]: t for t in resp["topics"]}
    assert list(topics) == ["a", "b", "c"] and all(t["error_code"] == 0 for t in topics.values())
    a0, a1 = topics["a"]["partitions"]
    assert (a0["partition_index"], a0["leader_id"], a0["replica_nodes"], a0["isr_nodes"]) == \
        (0, 1, [1, 2], [1, 2])
    assert (a1["leader_id"], a1["isr_nodes"]) == (2, [2])
    if version >= 5:
        assert a0["offline_replicas"] == [2]
    if version >= 7:
        assert a0["leader_epoch"] == 4
    if version >= 8:
        assert resp["cluster_authorized_operations"] == AUTHORIZED_OPERATIONS_UNKNOWN
    (b0,) = topics["b"]["partitions"]  # leader 4 not reachable on PLAINTEXT
    (c0,) = topics["c"]["partitions"]  # no leader
    for p in (b0, c0):
        assert p["error_code"] == 5 and p["leader_id"] == -1


@pytest.mark.parametrize("version", [0, 1, 4, 8])
def test_metadata_named_and_unknown_topics(served, version: int) -> None:
    server, _ = served
    with client(server) as c:
        resp = c.metadata(["b", "nope"], version)
    assert [(t["name"], t["error_code"]) for t in resp["topics"]] == [("b", 0), ("nope", 3)]
    assert resp["topics"][1]["partitions"] == []


def test_metadata_empty_list_at_v1_means_no_topics(served) -> None:
    server, _ = served
    with client(server) as c:
        resp = c.metadata([], 1)
    assert resp["topics"] == [] and len(resp["brokers"]) == 2


def test_pipelined_requests_are_answered_in_order(served) -> None:
    server, _ = served
    with client(server) as c:
        sent = [(AV, 0), (MD, 0), (AV, 2), (MD, 8), (AV, 1)]
        for key, v in sent:
            c.send(key, v, {} if key == AV else {"topics": [] if v == 0 else None,
                                                 "allow_auto_topic_creation": False})
        answers = [c.receive() for _ in sent]
    assert "api_keys" in answers[0] and "brokers" in answers[1] and "brokers" in answers[3]


def test_deep_pipelines_are_read_in_bursts_and_all_answered_in_order(served) -> None:
    """More frames than the listener buffers per connection (16): it stops reading that
    socket, then resumes as answers leave."""
    server, _ = served
    with client(server) as c:
        corrs = [c.send(AV, i % 3, {}) for i in range(60)]
        for corr in corrs:
            frame = c.recv_frame()
            assert int.from_bytes(frame[:4], "big") == corr
        c._pending.clear()
        assert c.request(AV, 0, {})["error_code"] == 0


# ---------------------------------------------------------------- bad input


def assert_still_serving(good: WireClient) -> None:
    assert good.request(AV, 0, {})["error_code"] == 0
    assert good.metadata(None, 1)["controller_id"] == 2


BAD_FRAMES = {
    "oversized": struct.pack(">i", 4096) + b"x" * 16,   # over the configured 1 KiB maximum
    "negative_size": struct.pack(">i", -5),
    "short_header": struct.pack(">i", 2) + b"\x00\x12",
    "garbage_body": struct.pack(">i", 12) + struct.pack(">hhih", 3, 1, 1, 200) + b"zz",
    "trailing_bytes": struct.pack(">i", 14) + struct.pack(">hhih", 18, 0, 1, 1) + b"c" + b"xyz",
    "unknown_api_key": struct.pack(">i", 11) + struct.pack(">hhih", 999, 0, 1, 1) + b"c",
    "unsupported_metadata_version": struct.pack(">i", 11) + struct.pack(">hhih", 3, 9, 1, 1)
    + b"c",
    "unsupported_lai_version": struct.pack(">i", 11) + struct.pack(">hhih", 4, 1, 1, 1) + b"c",
    "invalid_utf8": struct.pack(">i", 18) + struct.pack(">hhih", 3, 0, 1, 1) + b"c"
    + struct.pack(">ih", 1, 1) + b"\xff",
}


CLOSE_REASON = {"oversized": "frame_too_large", "negative_size": "bad_frame",
                "unknown_api_key": "rejected", "unsupported_metadata_version": "rejected",
                "unsupported_lai_version": "rejected"}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_bad_frames_close_only_that_connection(name: str) -> None:
    core = cached_core()
    server, _ = broker_server(core, max_frame_size=1024)
    try:
        with client(server) as good, client(server) as bad, client(server, "CONTROLLER") as ctl:
            assert_still_serving(good)
            bad.send_raw(BAD_FRAMES[name])
            assert closed_by_peer(bad)
            assert_still_serving(good)
            ok = ctl.request(ApiKey.UPDATE_METADATA, 5, C.update_metadata_request_to_wire(
                um((), (info(1, 9001),), controller_id=2, broker_epoch=EPOCH)))
            assert ok["error_code"] == 0
        wait_until(lambda: server.listeners["PLAINTEXT"].connection_count == 0)
        reason = CLOSE_REASON.get(name, "decode_error")
        assert server.metrics()[f"listener_PLAINTEXT_closed_{reason}_total"] == 1
    finally:
        server.stop()


def test_truncated_frame_then_eof_closes_and_is_counted() -> None:
    server, _ = broker_server(cached_core())
    try:
        with client(server) as good:
            bad = client(server)
            frame = encode_request(RequestHeader(18, 0, 1, "c"), {})
            bad.send_raw(frame[:-3])
            bad._require().shutdown(1)  # SHUT_WR: EOF inside the frame
            assert closed_by_peer(bad)
            bad.close()
            assert_still_serving(good)
        wait_until(lambda: server.metrics().get("listener_PLAINTEXT_closed_truncated_total"))
    finally:
        server.stop()


def test_a_frame_split_in_one_byte_writes_is_served() -> None:
    server, _ = broker_server(cached_core())
    try:
        with client(server) as c:
            frame = encode_request(RequestHeader(18, 1, 42, "c"), {})
            for i in range(len(frame)):
                c.send_raw(frame[i:i + 1])
            corr, body = decode_response(AV, 1, c.recv_frame())
        assert corr == 42 and body["error_code"] == 0
    finally:
        server.stop()
