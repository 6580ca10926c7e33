"""parse_request: unknown keys, unsupported versions, truncated and garbage frames, fuzz."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.network.codec import registry
from adapters.network.codec.dispatch import (
    Action,
    Rejected,
    Request,
    api_versions_body,
    decode_response,
    encode_request,
    fallback_frame,
    parse_request,
)
from adapters.network.codec.errors import DecodeError
from adapters.network.codec.headers import RequestHeader
from fsm.errors import ErrorCode


def header_bytes(
    api_key: int, version: int, correlation_id: int = 5, client: bytes = b"c"
) -> bytes:
    return struct.pack(">hhih", api_key, version, correlation_id, len(client)) + client


VALID = [
    encode_request(RequestHeader(18, 0, 1, "c"), {})[4:],
    encode_request(
        RequestHeader(18, 3, 2, "c"), {"client_software_name": "a", "client_software_version": "1"}
    )[4:],
    encode_request(RequestHeader(3, 8, 3, "c"), {"topics": [{"name": "t"}]})[4:],
    encode_request(RequestHeader(7, 0, 4), {"broker_id": 1})[4:],
    encode_request(RequestHeader(7, 2, 4, "b"), {"broker_id": 1, "broker_epoch": 9})[4:],
    encode_request(
        RequestHeader(5, 1, 6, "ctl"),
        {
            "controller_id": 1,
            "controller_epoch": 2,
            "broker_epoch": 3,
            "delete_partitions": True,
            "topics": [{"name": "t", "partition_indexes": [0, 1]}],
        },
    )[4:],
]


@pytest.mark.parametrize("api_key", [0, 1, 2, 8, 17, 19, 60, 999, -1])
def test_unknown_api_key_closes_the_connection(api_key: int) -> None:
    rejected = parse_request(header_bytes(api_key, 0) + b"whatever")
    assert isinstance(rejected, Rejected)
    assert rejected.error == ErrorCode.INVALID_REQUEST
    assert rejected.action is Action.CLOSE
    assert rejected.header.correlation_id == 5
    with pytest.raises(ValueError):
        rejected.response_frame()


@pytest.mark.parametrize(
    ("api_key", "version"),
    [
        (3, 9),
        (3, 13),
        (3, -1),
        (4, 0),
        (4, 1),
        (4, 3),
        (4, 7),
        (5, 0),
        (5, 2),
        (6, 4),
        (6, 6),
        (7, 3),
    ],
)
def test_unsupported_version_of_other_apis_closes(api_key: int, version: int) -> None:
    rejected = parse_request(header_bytes(api_key, version) + b"\x00\x01")
    assert isinstance(rejected, Rejected)
    assert rejected.error == ErrorCode.UNSUPPORTED_VERSION
    assert rejected.action is Action.CLOSE


@pytest.mark.parametrize("version", [4, 5, 100, -1])
def test_unsupported_api_versions_gets_the_v0_fallback(version: int) -> None:
    rejected = parse_request(header_bytes(18, version, 42) + b"\x00garbage body, never parsed")
    assert isinstance(rejected, Rejected)
    assert (rejected.error, rejected.action, rejected.response_version) == (35, Action.REPLY, 0)
    assert rejected.response_frame() == fallback_frame(42, registry.SUPPORTED[18])
    correlation_id, body = decode_response(
        18, version if version >= 0 else 3, rejected.response_frame()[4:]
    )
    assert correlation_id == 42
    assert body == {
        "error_code": 35,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}],
    }


def test_listener_restriction() -> None:
    control_plane = registry.supported_subset(registry.CONTROLLER_APIS)
    rejected = parse_request(VALID[0], control_plane)  # ApiVersions on the control plane
    assert isinstance(rejected, Rejected) and rejected.action is Action.CLOSE
    assert isinstance(parse_request(VALID[5], control_plane), Request)
    narrower = {**registry.SUPPORTED, 18: (0, 2)}
    rejected = parse_request(VALID[1], narrower)  # v3 while only 0-2 are served
    assert isinstance(rejected, Rejected) and rejected.response_body is not None
    assert rejected.response_body["api_keys"] == [
        {"api_key": 18, "min_version": 0, "max_version": 2}
    ]


@pytest.mark.parametrize("name", ["", "-x", "x-", "a b", "kafka_python"])
def test_api_versions_v3_with_bad_software_name_is_invalid_request(name: str) -> None:
    body = {"client_software_name": name, "client_software_version": "1.0"}
    rejected = parse_request(encode_request(RequestHeader(18, 3, 9, "c"), body)[4:])
    assert isinstance(rejected, Rejected)
    assert (rejected.error, rejected.action, rejected.response_version) == (42, Action.REPLY, 3)
    assert decode_response(18, 3, rejected.response_frame()[4:]) == (
        9,
        {"error_code": 42, "api_keys": [], "throttle_time_ms": 0, "tagged_fields": {}},
    )


def test_api_versions_body_advertises_the_minimum() -> None:
    keys = {
        e["api_key"]: (e["min_version"], e["max_version"]) for e in api_versions_body(0)["api_keys"]
    }
    assert keys[18] == (0, 3) and keys[3] == (0, 8)


@pytest.mark.parametrize("payload", VALID, ids=range(len(VALID)))
def test_every_prefix_and_extension_of_a_valid_request(payload: bytes) -> None:
    assert isinstance(parse_request(payload), Request)
    for n in range(len(payload)):
        with pytest.raises(DecodeError):
            parse_request(payload[:n])
    with pytest.raises(DecodeError):
        parse_request(payload + b"\x00")


def test_garbage_bodies() -> None:
    with pytest.raises(DecodeError):  # Metadata v1, topic count -2
        parse_request(header_bytes(3, 1) + b"\xff\xff\xff\xfe")
    with pytest.raises(DecodeError):  # Metadata v0, 1 topic, invalid UTF-8 name
        parse_request(header_bytes(3, 0) + b"\x00\x00\x00\x01\x00\x01\xff")
    with pytest.raises(DecodeError):  # client id longer than the frame
        parse_request(struct.pack(">hhih", 3, 1, 1, 100) + b"abc")


def test_truncated_unsupported_api_versions_header_still_raises() -> None:
    for n in range(4, 10):  # the v1 prefix is cut: not even a correlation id
        with pytest.raises(DecodeError):
            parse_request(header_bytes(18, 9)[:n])


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=64))
def test_fuzz_random_bytes(data: bytes) -> None:
    try:
        result = parse_request(data)
    except DecodeError:
        return
    assert isinstance(result, Request | Rejected)


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from([3, 4, 5, 6, 7, 18]),
    version=st.integers(-1, 10),
    tail=st.binary(max_size=80),
)
def test_fuzz_known_headers_random_bodies(key: int, version: int, tail: bytes) -> None:
    try:
        result = parse_request(header_bytes(key, version) + tail)
    except DecodeError:
        return
    assert isinstance(result, Request | Rejected)
