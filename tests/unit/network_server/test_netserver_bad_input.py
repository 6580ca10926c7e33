"""Bad input against a real SocketServer on loopback, beyond the data-plane cases of
``test_netserver_client_apis``: bad frames on the control plane, every controller API refused
by the data plane, fuzzed frames on both planes answered exactly as the fuzz target predicts,
and listeners that bind nothing but loopback unless allowed."""

from __future__ import annotations

import socket
import struct

import pytest
from netserver_support import (
    EPOCH,
    LOCAL,
    broker_server,
    client,
    closed_by_peer,
    info,
    lai,
    running_core,
    stop_replica,
    um,
    ump,
    wait_until,
)

from adapters.network import SocketServer, WireClient, parse_listener_config
from adapters.network import wire_fuzz as F
from adapters.network.codec import ApiKey, FrameReader, RequestHeader, encode_request
from adapters.network.codec import convert as C
from adapters.network.listener_config import ListenerConfig, ListenerSpec

UM = ApiKey.UPDATE_METADATA


def update_metadata_ok(c: WireClient) -> bool:
    body = C.update_metadata_request_to_wire(um((), (info(1, 9001),), broker_epoch=EPOCH))
    return c.request(UM, 5, body)["error_code"] == 0


def serving(server: SocketServer) -> bool:
    """A new connection on each plane is served."""
    with client(server) as data, client(server, "CONTROLLER") as ctl:
        return data.request(ApiKey.API_VERSIONS, 0, {})["error_code"] == 0 \
            and update_metadata_ok(ctl)


def header(api_key: int, version: int, client_id: bytes = b"c") -> bytes:
    return struct.pack(">hhih", api_key, version, 7, len(client_id)) + client_id


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


CONTROL_BAD_FRAMES = {
    "oversized": struct.pack(">i", 4096) + b"x" * 16,  # over the 1 KiB maximum configured
    "negative_size": struct.pack(">i", -1),
    "empty_frame": framed(b""),
    "short_header": framed(b"\x00\x04\x00"),
    "lai_count_2g": framed(header(4, 2) + struct.pack(">iiq", 1, 3, EPOCH)
                           + struct.pack(">i", 2**31 - 1)),
    "lai_truncated": encode_request(RequestHeader(4, 2, 1, "c"), C.leader_and_isr_request_to_wire(
        lai()))[:-5],
    "um_invalid_utf8_topic": framed(header(6, 5) + struct.pack(">iiqih", 1, 3, EPOCH, 1, 2)
                                    + b"\xc3\x28" + struct.pack(">ii", 0, 0)),
    "unknown_api_key": framed(header(57, 0)),
    "unsupported_lai_version": framed(header(4, 5)),
    "api_versions_on_the_control_plane": framed(header(18, 0)),
    "metadata_on_the_control_plane": framed(header(3, 1) + struct.pack(">i", -1)),
}


@pytest.mark.parametrize("name", sorted(CONTROL_BAD_FRAMES))
def test_bad_frames_on_the_control_plane_close_only_that_connection(name: str) -> None:
    core = running_core()
    server, _ = broker_server(core, max_frame_size=1024)
    try:
        with client(server, "CONTROLLER") as good, client(server, "CONTROLLER") as bad:
            assert update_metadata_ok(good)
            bad.send_raw(CONTROL_BAD_FRAMES[name])
            if name == "lai_truncated":
                bad._require().shutdown(socket.SHUT_WR)  # EOF inside the frame
            assert closed_by_peer(bad)
            assert update_metadata_ok(good)  # the same listener, another connection
        assert serving(server)
        assert core.replica(("t", 0)) is None
        wait_until(lambda: server.listeners["CONTROLLER"].connection_count == 0)
        closed = {k: v for k, v in server.metrics().items()
                  if k.startswith("listener_CONTROLLER_closed_") and not k.endswith("eof_total")}
        assert sum(closed.values()) == 1, closed
        assert "listener_CONTROLLER_closed_codec_failure_total" not in closed
    finally:
        server.stop()


CONTROLLER_REQUESTS = {
    "LeaderAndIsr": (ApiKey.LEADER_AND_ISR, 2, lambda: C.leader_and_isr_request_to_wire(lai())),
    "UpdateMetadata": (UM, 5, lambda: C.update_metadata_request_to_wire(
        um((ump("t", 0, 1, (1, 2)),), (info(1, 9001),)))),
    "StopReplica": (ApiKey.STOP_REPLICA, 1, lambda: C.stop_replica_request_to_wire(
        stop_replica(True))),
}


@pytest.mark.parametrize("api", sorted(CONTROLLER_REQUESTS))
def test_the_data_plane_refuses_every_controller_api_when_a_control_plane_exists(
        api: str) -> None:
    key, version, body = CONTROLLER_REQUESTS[api]
    core = running_core()
    server, _ = broker_server(core)
    try:
        before = core.metadata_cache
        with client(server) as bad:
            bad.send(key, version, body())
            assert closed_by_peer(bad)
        assert core.metadata_cache == before and core.replica(("t", 0)) is None
        # the very same request is applied through the control plane
        with client(server, "CONTROLLER") as ctl:
            assert ctl.request(key, version, body())["error_code"] == 0
        assert serving(server)
        m = server.metrics()
        assert m["listener_PLAINTEXT_closed_rejected_total"] == 1
        assert m["data_plane_requests_total"] == 1  # only serving()'s ApiVersions
        assert m["control_plane_requests_total"] == 2
    finally:
        server.stop()


def _one_frame(data: bytes) -> bool:
    """True when ``data`` is exactly one whole frame, or a size prefix the reader refuses."""
    reader = FrameReader(F.FUZZ_MAX_FRAME_SIZE)
    try:
        frames = reader.feed(data)
    except F.CODEC_ERRORS:
        return True
    return len(frames) == 1 and reader.buffered == 0


def _answer(c: WireClient) -> str:
    """What the server did with the one request sent: 'answer' (a frame, and then the
    connection is still open) or 'closed'."""
    try:
        c.recv_frame()
    except (ConnectionError, OSError):
        return "closed"
    return "answer"


def test_fuzzed_frames_are_handled_as_the_fuzz_target_says_and_the_server_keeps_serving(
        ) -> None:
    core = running_core()
    server, _ = broker_server(core, max_frame_size=F.FUZZ_MAX_FRAME_SIZE)
    counts: dict[str, int] = {}
    try:
        sent = 0
        for i, data in F.inputs(seed=8, count=900):
            if not _one_frame(data):
                continue
            listener = ("PLAINTEXT", "CONTROLLER")[i % 2]
            expected = F.classify(data, server.accepted_apis(listener))
            with WireClient(LOCAL, server.port(listener), timeout=5.0).connect() as c:
                c.send_raw(data)
                got = _answer(c)
            if expected == F.DECODED:
                # decoded and handed to the broker: it answers (a handler that raised would
                # close: that must not happen for a request the codec accepted)
                assert got == "answer", (i, data.hex())
            elif expected.startswith("answered"):
                assert got == "answer", (i, data.hex())
            else:
                assert got == "closed", (i, expected, data.hex())
            counts[expected] = counts.get(expected, 0) + 1
            sent += 1
            if sent % 50 == 0:
                assert serving(server)
        assert serving(server)
        assert sent >= 300 and counts.get(F.DECODED, 0) >= 20, counts
        assert {"DecodeError", "closed INVALID_REQUEST"} <= set(counts), counts
        m = server.metrics()
        assert not any(k.endswith("codec_failure_total") or k.endswith("handler_error_total")
                       for k in m), m
    finally:
        server.stop()


def test_listeners_bind_loopback_only_unless_allowed() -> None:
    cfg = parse_listener_config("CONTROLLER://127.0.0.1:0,PLAINTEXT://localhost:0",
                                "CONTROLLER")
    with SocketServer(cfg, _Nothing()) as server:
        for lst in server.listeners.values():
            assert lst._server is not None
            host = lst._server.getsockname()[0]
            assert host in ("127.0.0.1", "::1"), host
    # a config built by hand, past the parser's check, is refused when it binds
    wide = ListenerConfig((ListenerSpec("PLAINTEXT", "0.0.0.0", 0),))
    with pytest.raises(OSError, match="not a loopback address"):
        SocketServer(wide, _Nothing()).start()
    with pytest.raises(ValueError, match="not a loopback"):
        parse_listener_config("PLAINTEXT://0.0.0.0:0")
    with pytest.raises(ValueError, match="not a loopback"):
        parse_listener_config("PLAINTEXT://[::]:0")
    assert parse_listener_config("PLAINTEXT://0.0.0.0:0", allow_non_loopback=True) \
        .allow_non_loopback


class _Nothing:
    def handle(self, *a: object) -> None:
        return None
