"""decode(encode(x)) == x for every API, version and direction, with values generated from
the schemas themselves; and the same through whole frames and parse_request."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from netcodec_strategies import TEXT, values

from adapters.network.codec import registry
from adapters.network.codec.apis import api_versions
from adapters.network.codec.dispatch import (
    Action,
    Request,
    decode_response,
    encode_request,
    encode_response,
    parse_request,
)
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.primitives import int_bounds
from adapters.network.codec.wire import decode, encode

CASES = [
    (key, version) for key, (lo, hi) in registry.SUPPORTED.items() for version in range(lo, hi + 1)
]
IDS = [f"{registry.ApiKey(k).name}-v{v}" for k, v in CASES]
INT16 = st.integers(*int_bounds(2))
INT32 = st.integers(*int_bounds(4))


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_request_body_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    schema = registry.request_schema(api_key, version)
    body = data.draw(values(schema))
    assert decode(schema, encode(schema, body)) == body


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_response_body_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    schema = registry.response_schema(api_key, version)
    body = data.draw(values(schema))
    assert decode(schema, encode(schema, body)) == body


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | TEXT)
def test_request_frame_round_trip(
    api_key: int, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = data.draw(values(registry.request_schema(api_key, version)))
    if api_key == 7 and version == 0:
        client_id = None  # request header v0 has no client id
    header = RequestHeader(api_key, version, correlation_id, client_id)
    (payload,) = FrameReader().feed(encode_request(header, body))
    parsed = parse_request(payload)
    if isinstance(parsed, Request):
        assert parsed == Request(header, body)
    else:  # only ApiVersions v3 with malformed client software
        assert api_key == 18 and not api_versions.is_valid_request(body, version)
        assert parsed.action is Action.REPLY and parsed.error == 42
        assert parsed.header == header


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), correlation_id=INT32)
def test_response_frame_round_trip(
    api_key: int, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = data.draw(values(registry.response_schema(api_key, version)))
    (payload,) = FrameReader().feed(encode_response(api_key, version, correlation_id, body))
    assert decode_response(api_key, version, payload) == (correlation_id, body)


@pytest.mark.parametrize("version", range(0, 4))
def test_api_versions_response_uses_header_v0_at_every_version(version: int) -> None:
    body = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}
    frame = encode_response(18, version, 7, body)
    assert frame[4:8] == b"\x00\x00\x00\x07"
    # no header tag buffer: the body starts right after the correlation id
    assert frame[8:] == encode(registry.response_schema(18, version), body)


def test_one_full_metadata_dict_encodes_at_every_version() -> None:
    partition = {
        "error_code": 0,
        "partition_index": 0,
        "leader_id": 1,
        "leader_epoch": 4,
        "replica_nodes": [1, 2],
        "isr_nodes": [1],
        "offline_replicas": [2],
        "error": "ignored: not a field",
    }
    body = {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": None}],
        "cluster_id": "c",
        "controller_id": 1,
        "topics": [{"error_code": 0, "name": "t", "is_internal": False, "partitions": [partition]}],
    }
    for version in range(0, 9):
        schema = registry.response_schema(3, version)
        decoded = decode(schema, encode(schema, body))
        assert decoded["brokers"][0]["port"] == 9092
        if version >= 1:
            assert decoded["controller_id"] == 1
        if version >= 8:
            assert decoded["cluster_authorized_operations"] == -(2**31)
            assert decoded["topics"][0]["topic_authorized_operations"] == -(2**31)
