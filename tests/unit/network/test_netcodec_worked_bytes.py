"""The worked bytes of the reference (section 1), reproduced exactly."""

from __future__ import annotations

from adapters.network.codec.apis import metadata
from adapters.network.codec.dispatch import (
    Action,
    Request,
    encode_request,
    fallback_frame,
    parse_request,
)
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.registry import request_schema
from adapters.network.codec.wire import decode, encode
from fsm.errors import ErrorCode

API_VERSIONS_V0 = bytes.fromhex("0000000b00120000000000010001 63")
KAFKA_PYTHON_V4 = (
    bytes.fromhex("00000021001200040000000100016300")
    + b"\x0dkafka-python"
    + b"\x072.2.20"
    + b"\x00"
)
FALLBACK_0_2 = bytes.fromhex("0000001000000001002300000001001200000002")


def test_api_versions_v0_request_bytes() -> None:
    header = RequestHeader(api_key=18, api_version=0, correlation_id=1, client_id="c")
    assert encode_request(header, {}) == API_VERSIONS_V0
    (payload,) = FrameReader().feed(API_VERSIONS_V0)
    parsed = parse_request(payload)
    assert parsed == Request(header, {})


def test_kafka_python_first_request_gets_the_fallback() -> None:
    assert len(KAFKA_PYTHON_V4) == 4 + 0x21
    (payload,) = FrameReader().feed(KAFKA_PYTHON_V4)
    rejected = parse_request(payload)
    assert not isinstance(rejected, Request)
    assert rejected.error == ErrorCode.UNSUPPORTED_VERSION == 35
    assert rejected.action is Action.REPLY
    assert rejected.header.correlation_id == 1 and rejected.header.client_id == "c"
    assert rejected.response_version == 0
    # the broker supports ApiVersions 0-3, so that is the range it sends back
    assert rejected.response_frame() == fallback_frame(1, (0, 3))
    assert rejected.response_frame() == FALLBACK_0_2[:-1] + b"\x03"


def test_unsupported_version_reply_bytes() -> None:
    assert fallback_frame(1, (0, 2)) == FALLBACK_0_2


def test_same_bytes_at_v3_parse_as_a_flexible_request() -> None:
    payload = bytearray(KAFKA_PYTHON_V4[4:])
    payload[3] = 3  # api_version 4 -> 3: the same layout
    parsed = parse_request(bytes(payload))
    assert isinstance(parsed, Request)
    assert parsed.body == {
        "client_software_name": "kafka-python",
        "client_software_version": "2.2.20",
        "tagged_fields": {},
    }
    header = RequestHeader(18, 3, 1, "c")
    assert parsed.header == header
    assert encode_request(header, parsed.body)[4:] == bytes(payload)


def test_metadata_all_topics_bodies() -> None:
    cases = {0: "00000000", 1: "ffffffff", 7: "ffffffff00"}
    for version, hex_body in cases.items():
        body = metadata.all_topics_request(version)
        assert encode(request_schema(3, version), body) == bytes.fromhex(hex_body)
        decoded = decode(request_schema(3, version), bytes.fromhex(hex_body))
        assert metadata.requested_topics(decoded, version) is None
