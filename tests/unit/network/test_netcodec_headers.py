"""Request headers v0/v1/v2, response headers v0/v1, and which version applies."""

from __future__ import annotations

import pytest

from adapters.network.codec.apis import metadata
from adapters.network.codec.dispatch import encode_request, parse_request
from adapters.network.codec.errors import DecodeError
from adapters.network.codec.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    request_header_version,
    response_header_version,
)
from adapters.network.codec.primitives import Reader
from adapters.network.codec.registry import is_flexible


def test_header_versions() -> None:
    assert request_header_version(7, 0, flexible=False) == 0  # ControlledShutdown v0 only
    assert request_header_version(7, 1, flexible=False) == 1
    assert request_header_version(3, 8, is_flexible(3, 8)) == 1
    assert request_header_version(18, 3, is_flexible(18, 3)) == 2
    assert response_header_version(18, flexible=True) == 0  # ApiVersions: always v0
    assert response_header_version(3, flexible=True) == 1
    assert response_header_version(4, flexible=False) == 0
    flexible_from = {3: 9, 4: 4, 5: 2, 6: 6, 7: 3, 18: 3}
    for key, first in flexible_from.items():
        assert not is_flexible(key, first - 1) and is_flexible(key, first)


def test_request_header_bytes() -> None:
    h = RequestHeader(18, 3, 1, "c", {})
    assert encode_request_header(h, 0).hex() == "0012000300000001"
    assert encode_request_header(h, 1).hex() == "00120003000000010001" + "63"
    assert encode_request_header(h, 2).hex() == "00120003000000010001" + "63" + "00"
    assert (
        encode_request_header(RequestHeader(3, 1, 1, None), 1).hex()
        == "00030001" + "00000001" + "ffff"
    )
    tagged = RequestHeader(18, 3, 1, "c", {5: b"ab"})
    raw = encode_request_header(tagged, 2)
    assert raw.endswith(bytes.fromhex("01 05 02 6162"))
    r = Reader(raw)
    assert decode_request_header(r, 2) == tagged and r.remaining == 0


def test_response_header_bytes() -> None:
    assert encode_response_header(1, 0).hex() == "00000001"
    assert encode_response_header(1, 1).hex() == "0000000100"
    assert decode_response_header(Reader(bytes.fromhex("0000000100")), 1) == (1, {})


def test_controlled_shutdown_v0_uses_request_header_v0() -> None:
    frame = encode_request(RequestHeader(7, 0, 4), {"broker_id": 1})
    assert frame.hex() == "0000000c" + "0007" + "0000" + "00000004" + "00000001"
    parsed = parse_request(frame[4:])
    assert parsed.header == RequestHeader(7, 0, 4, None)  # type: ignore[union-attr]
    with pytest.raises(DecodeError):  # a v1-style client id after a v0 header: trailing bytes
        parse_request(frame[4:] + b"\x00\x01x")


def test_metadata_topic_semantics() -> None:
    assert metadata.requested_topics({"topics": []}, 0) is None  # v0: empty = all
    assert metadata.requested_topics({"topics": None}, 1) is None  # v1+: null = all
    assert metadata.requested_topics({"topics": []}, 1) == []  # v1+: empty = brokers only
    assert metadata.requested_topics({"topics": [{"name": "t"}]}, 8) == ["t"]
