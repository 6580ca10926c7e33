"""The KRaft APIs' frames (``kraft_frames``): every API and declared version round-trips a
body drawn from its own schema through a whole frame; every truncation of a valid frame, and
bytes appended to it, raise ``CodecError`` naming the API; the header versions follow
flexibility; the served ranges hold what stock clients send."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from netcodec_strategies import TEXT, values

from adapters.network.codec import kraft_frames, raft_frames
from adapters.network.codec.errors import CodecError, DecodeError
from adapters.network.codec.kraft_registry import (
    BROKER_SERVED,
    CONTROLLER_SERVED,
    KRAFT_MESSAGES,
    KRAFT_SUPPORTED,
    SEND_VERSIONS,
    KRaftApiKey,
    api_name,
)
from adapters.network.codec.primitives import int_bounds

CASES = [(k, v) for k, (lo, hi) in KRAFT_SUPPORTED.items() for v in range(lo, hi + 1)]
IDS = [f"{api_name(k)}-v{v}" for k, v in CASES]
INT32 = st.integers(*int_bounds(4))
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def schema(api_key: int, version: int, response: bool):  # noqa: ANN201 -- a Struct
    request, reply = KRAFT_MESSAGES[api_key]
    return (reply if response else request).schema(version)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@FEW
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | TEXT)
def test_request_frame_round_trip(api_key: int, version: int, data: st.DataObject,
                                  correlation_id: int, client_id: str | None) -> None:
    body = data.draw(values(schema(api_key, version, False)))
    frame = kraft_frames.encode_request(api_key, version, correlation_id, client_id, body)
    parsed = kraft_frames.parse_request(frame[4:])
    assert (parsed.api_key, parsed.api_version) == (api_key, version)
    assert parsed.header.correlation_id == correlation_id
    assert parsed.header.client_id == client_id
    assert parsed.body == body


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@FEW
@given(data=st.data(), correlation_id=INT32)
def test_response_frame_round_trip(api_key: int, version: int, data: st.DataObject,
                                   correlation_id: int) -> None:
    body = data.draw(values(schema(api_key, version, True)))
    frame = kraft_frames.encode_response(api_key, version, correlation_id, body)
    assert kraft_frames.peek_correlation_id(frame[4:]) == correlation_id
    assert kraft_frames.decode_response(api_key, version, frame[4:]) == (correlation_id, body)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_truncation_and_extension_is_a_codec_error(api_key: int, version: int,
                                                         data: st.DataObject) -> None:
    request = data.draw(values(schema(api_key, version, False)))
    response = data.draw(values(schema(api_key, version, True)))
    req = kraft_frames.encode_request(api_key, version, 1, "c", request)[4:]
    resp = kraft_frames.encode_response(api_key, version, 1, response)[4:]
    name = KRAFT_MESSAGES[api_key][0].name
    for cut in range(len(req)):
        with pytest.raises(CodecError):
            kraft_frames.parse_request(req[:cut])
    for cut in range(len(resp)):
        with pytest.raises(CodecError):
            kraft_frames.decode_response(api_key, version, resp[:cut])
    with pytest.raises(DecodeError, match=f"{name} v{version}: 1 trailing bytes"):
        kraft_frames.parse_request(req + b"\x00")


def test_a_truncation_names_the_field() -> None:
    body = {"broker_id": 1, "broker_epoch": 2, "current_metadata_offset": 3,
            "want_fence": True, "want_shut_down": False}
    frame = kraft_frames.encode_request(63, 0, 1, "b", body)[4:]
    with pytest.raises(DecodeError, match="BrokerHeartbeatRequest v0: want_shut_down"):
        kraft_frames.parse_request(frame[:-2])  # cut inside the last bool, before the tags


def test_header_versions_follow_flexibility() -> None:
    # CreateTopics v4 is not flexible: request header v1 (no tag buffer), response header v0
    body = {"topics": [], "timeout_ms": 5, "validate_only": False}
    v4 = kraft_frames.encode_request(19, 4, 7, "c", body)
    v5 = kraft_frames.encode_request(19, 5, 7, "c", body)
    header = b"\x00\x13\x00\x04\x00\x00\x00\x07\x00\x01c"
    assert v4[4:] == header + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x05" + b"\x00"
    header5 = header[:3] + b"\x05" + header[4:] + b"\x00"  # + the header's tag buffer
    assert v5[4:] == header5 + b"\x01" + b"\x00\x00\x00\x05" + b"\x00" + b"\x00"
    assert len(kraft_frames.encode_response(19, 4, 7, {"topics": []})) == 4 + 4 + 4 + 4
    assert len(kraft_frames.encode_response(19, 5, 7, {"topics": []})) == 4 + 5 + 4 + 2


def test_unknown_api_or_version_is_refused() -> None:
    vote = raft_frames.encode_request(52, 0, 1, None, {"cluster_id": None, "topics": []})
    with pytest.raises(DecodeError, match="not a KRaft API"):
        kraft_frames.parse_request(vote[4:])
    frame = kraft_frames.encode_request(63, 0, 1, None, {
        "broker_id": 1, "broker_epoch": 2, "current_metadata_offset": 3, "want_fence": True,
        "want_shut_down": False})
    bumped = frame[4:6] + (99).to_bytes(2, "big") + frame[8:]
    with pytest.raises(DecodeError, match="BROKER_HEARTBEAT v99"):
        kraft_frames.parse_request(bumped)


def test_served_ranges() -> None:
    assert set(CONTROLLER_SERVED) == {19, 20, 37, 43, 45, 46, 56, 60, 62, 63, 64}
    assert set(BROKER_SERVED) == {19, 20, 37, 43, 45, 46, 60, 64}
    assert CONTROLLER_SERVED[KRaftApiKey.ALTER_PARTITION] == (2, 2)
    # what kafka-python 3 and librdkafka 2 send; a client takes the lower of the two maxima
    clients = {19: [(2, 7), (0, 4)], 20: [(1, 6), (0, 4)], 37: [(0, 3), (0, 2)],
               43: [(0, 2)], 45: [(0, 1)], 46: [(0, 0)], 60: [(0, 2)]}
    for key, ranges in clients.items():
        lo, hi = BROKER_SERVED[key]
        for client_lo, client_hi in ranges:
            assert lo <= min(hi, client_hi) and client_lo <= min(hi, client_hi), (key, ranges)
    for key, version in SEND_VERSIONS.items():
        assert version in range(KRAFT_SUPPORTED[key][0], KRAFT_SUPPORTED[key][1] + 1)
    assert SEND_VERSIONS[KRaftApiKey.ALTER_PARTITION] == 2


def test_an_oversized_frame_or_a_huge_count_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"broker_id": 1, "cluster_id": "c", "incarnation_id": b"\1" * 16, "listeners": [],
            "features": [], "rack": None}
    frame = kraft_frames.encode_request(62, 0, 1, "b", body)[4:]
    # listeners' compact count (after the header, broker id, cluster id and uuid) made huge
    at = frame.index(b"\1" * 16) + 16
    huge = frame[:at] + b"\xff\xff\xff\xff\x0f" + frame[at + 1:]
    with pytest.raises(DecodeError, match="BrokerRegistrationRequest v0: listeners"):
        kraft_frames.parse_request(huge)
    monkeypatch.setattr(kraft_frames.TABLE, "max_frame", len(frame) - 1)
    with pytest.raises(DecodeError, match="over the maximum frame size"):
        kraft_frames.parse_request(frame)
    with pytest.raises(DecodeError, match="over the maximum frame size"):
        kraft_frames.decode_response(62, 0, frame)
