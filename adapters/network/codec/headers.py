"""Request headers v0/v1/v2 and response headers v0/v1, and which version applies.

- request v0: api_key, api_version, correlation_id (only ControlledShutdown v0 uses it);
- request v1: v0 + client_id NULLABLE_STRING (every non-flexible request version);
- request v2: v1 + TAG_BUFFER (flexible versions). client_id keeps its int16 length even
  here, so a broker can read the header of a version it does not understand;
- response v0: correlation_id; response v1: v0 + TAG_BUFFER (flexible versions), except
  ApiVersions, whose responses always use v0 (KIP-511).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.primitives import Reader
from adapters.network.codec.schema import (
    INT16,
    INT32,
    NULLABLE_STRING,
    TAG_BUFFER,
    TAGGED_FIELDS,
    Field,
    Struct,
    struct,
)
from adapters.network.codec.wire import decode_from, encode

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7

_V0 = (
    Field("request_api_key", INT16),
    Field("request_api_version", INT16),
    Field("correlation_id", INT32),
)
_V1 = (*_V0, Field("client_id", NULLABLE_STRING))
REQUEST_HEADERS: dict[int, Struct] = {
    0: struct(*_V0),
    1: struct(*_V1),
    2: struct(*_V1, Field(TAGGED_FIELDS, TAG_BUFFER)),
}
RESPONSE_HEADERS: dict[int, Struct] = {
    0: struct(Field("correlation_id", INT32)),
    1: struct(Field("correlation_id", INT32), Field(TAGGED_FIELDS, TAG_BUFFER)),
}


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    tagged_fields: Mapping[int, bytes] = field(default_factory=dict)


def request_header_version(api_key: int, api_version: int, flexible: bool) -> int:
    if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
        return 0
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if flexible else 0


def encode_request_header(header: RequestHeader, version: int) -> bytes:
    return encode(
        REQUEST_HEADERS[version],
        {
            "request_api_key": header.api_key,
            "request_api_version": header.api_version,
            "correlation_id": header.correlation_id,
            "client_id": header.client_id,
            TAGGED_FIELDS: dict(header.tagged_fields),
        },
    )


def decode_request_header(r: Reader, version: int) -> RequestHeader:
    d = decode_from(r, REQUEST_HEADERS[version])
    return RequestHeader(
        d["request_api_key"],
        d["request_api_version"],
        d["correlation_id"],
        d.get("client_id"),
        d.get(TAGGED_FIELDS, {}),
    )


def peek_api(data: bytes) -> tuple[int, int]:
    """(api_key, api_version): the first 4 bytes of any request header."""
    if len(data) < 4:
        raise DecodeError(f"request of {len(data)} bytes is too short for a header")
    r = Reader(data[:4])
    return r.read_int(2), r.read_int(2)


def encode_response_header(correlation_id: int, version: int) -> bytes:
    return encode(RESPONSE_HEADERS[version], {"correlation_id": correlation_id})


def decode_response_header(r: Reader, version: int) -> tuple[int, dict[int, bytes]]:
    d = decode_from(r, RESPONSE_HEADERS[version])
    return d["correlation_id"], d.get(TAGGED_FIELDS, {})
