"""Parsing a request frame, and building request/response frames (pure).

:func:`parse_request` takes one frame (without its size prefix) and returns either a
:class:`Request` to serve or a :class:`Rejected` saying what to do instead:

- **unknown API key** (or one this listener does not accept): ``INVALID_REQUEST`` (42),
  action ``CLOSE``. No response can be written: the header and body layout of an unknown
  API are unknown. Brokers close the connection (reference section 7, last paragraph).
- **unsupported version of ApiVersions**: ``UNSUPPORTED_VERSION`` (35), action ``REPLY``
  with the fallback: the body is not parsed (only the v1 prefix of the header is read),
  and the answer is response header v0 + a v0 body listing the broker's ApiVersions range.
- **unsupported version of any other API**: ``UNSUPPORTED_VERSION`` (35), action
  ``CLOSE``: the response layout of that version is unknown, so nothing can be answered.
  This is what Kafka's broker does (the failed parse becomes an InvalidRequestException
  and the connection is closed); the reference does not state it for these APIs.
- **ApiVersions v3+ with malformed client software name/version**: ``INVALID_REQUEST``,
  action ``REPLY`` in the requested version, no ApiKeys (reference section 7).
- **garbage** (truncated header or body, trailing bytes, bad lengths, invalid UTF-8):
  :class:`DecodeError` is raised; the broker closes that connection only.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from adapters.network.codec import registry
from adapters.network.codec.apis import api_versions
from adapters.network.codec.errors import EncodeError
from adapters.network.codec.framing import SIZE, frame
from adapters.network.codec.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api,
    request_header_version,
    response_header_version,
)
from adapters.network.codec.primitives import Reader
from adapters.network.codec.wire import decode, decode_from, encode
from fsm.errors import ErrorCode


class Action(enum.Enum):
    REPLY = "reply"  # send Rejected.response_frame(), keep the connection
    CLOSE = "close"  # close this connection (and only this one)


@dataclass(frozen=True)
class Request:
    header: RequestHeader
    body: dict[str, Any]

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


@dataclass(frozen=True)
class Rejected:
    header: RequestHeader
    error: ErrorCode
    action: Action
    reason: str
    response_version: int | None = None  # with REPLY: the version of response_body
    response_body: dict[str, Any] | None = None

    def response_frame(self) -> bytes:
        if self.response_version is None or self.response_body is None:
            raise ValueError(f"nothing to answer: {self.reason}")
        return encode_response(
            self.header.api_key,
            self.response_version,
            self.header.correlation_id,
            self.response_body,
        )


def parse_request(
    data: bytes, supported: Mapping[int, tuple[int, int]] = registry.SUPPORTED
) -> Request | Rejected:
    """Parses one request frame (size prefix removed). Raises only :class:`DecodeError`.

    ``supported`` restricts what this listener accepts (defaults to everything the codec
    implements); ranges outside the codec's declared versions are clipped to them.
    """
    api_key, version = peek_api(data)
    if api_key not in registry.APIS or api_key not in supported:
        header = _lenient_header(data, api_key, version)
        return Rejected(
            header, ErrorCode.INVALID_REQUEST, Action.CLOSE, f"unknown API key {api_key}"
        )
    api = registry.APIS[api_key]
    lo, hi = supported[api_key]
    if not (lo <= version <= hi and api.supports(version)):
        header = _lenient_header(data, api_key, version)
        reason = f"{api.key.name} v{version} unsupported (supported {lo}-{hi})"
        if api_key == registry.ApiKey.API_VERSIONS:
            body = api_versions.fallback_body((lo, hi))
            return Rejected(header, ErrorCode.UNSUPPORTED_VERSION, Action.REPLY, reason, 0, body)
        return Rejected(header, ErrorCode.UNSUPPORTED_VERSION, Action.CLOSE, reason)
    r = Reader(data)
    flexible = api.request.is_flexible(version)
    header = decode_request_header(r, request_header_version(api_key, version, flexible))
    body = decode_from(r, api.request.schema(version))
    r.expect_end()
    if api_key == registry.ApiKey.API_VERSIONS and not api_versions.is_valid_request(body, version):
        reason = "malformed client software name or version"
        error_body = api_versions.invalid_request_body()
        return Rejected(
            header, ErrorCode.INVALID_REQUEST, Action.REPLY, reason, version, error_body
        )
    return Request(header, body)


def _lenient_header(data: bytes, api_key: int, version: int) -> RequestHeader:
    """The header of a request we will not parse: the v1 prefix, which v1 and v2 share
    (v0 for ControlledShutdown v0). Whatever follows it is ignored."""
    return decode_request_header(Reader(data), request_header_version(api_key, version, False))


def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any] | bytes
) -> bytes:
    """A whole response frame: size, response header (v0/v1 as the API requires), body.
    ``body`` as ``bytes`` is a body already encoded for that version (a cached answer)."""
    return b"".join(encode_response_pieces(api_key, api_version, correlation_id, body))


def encode_response_pieces(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any] | bytes
) -> tuple[bytes, bytes]:
    """The frame of ``encode_response`` as (size prefix + response header, body), for a
    scatter-gather write: a cached body (``bytes``, e.g. a 500 KB Metadata answer) is sent as
    it is, never copied into a new frame."""
    api = registry.APIS[api_key]
    hv = response_header_version(api_key, api.response.is_flexible(api_version))
    encoded = body if isinstance(body, bytes) else encode(api.response.schema(api_version), body)
    header = encode_response_header(correlation_id, hv)
    size = len(header) + len(encoded)
    if size > 0x7FFFFFFF:
        raise EncodeError(f"frame of {size} bytes does not fit an int32 size")
    return SIZE.pack(size) + header, encoded


def decode_response(api_key: int, api_version: int, data: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation_id, body) of a response frame (size prefix removed).

    ApiVersions answers with an error are decoded as v0 when they parse so (the fallback).
    """
    api = registry.APIS[api_key]
    r = Reader(data)
    hv = response_header_version(api_key, api.response.is_flexible(api_version))
    correlation_id, _tags = decode_response_header(r, hv)
    rest = r.take(r.remaining)
    if api_key == registry.ApiKey.API_VERSIONS:
        return correlation_id, api_versions.decode_response_body(rest, api_version)[1]
    return correlation_id, decode(api.response.schema(api_version), rest)


def encode_request(header: RequestHeader, body: dict[str, Any]) -> bytes:
    """A whole request frame: size, request header (v0/v1/v2 as the API requires), body."""
    api = registry.APIS[header.api_key]
    flexible = api.request.is_flexible(header.api_version)
    hv = request_header_version(header.api_key, header.api_version, flexible)
    payload = encode_request_header(header, hv) + encode(
        api.request.schema(header.api_version), body
    )
    return frame(payload)


def api_versions_body(
    version: int,
    supported: Mapping[int, tuple[int, int]] = registry.SUPPORTED,
    throttle_ms: int = 0,
) -> dict[str, Any]:
    """A successful ApiVersions response body advertising ``supported``."""
    return {
        "error_code": int(ErrorCode.NONE),
        "api_keys": api_versions.api_key_entries(dict(supported)),
        "throttle_time_ms": throttle_ms,
    }


def fallback_frame(
    correlation_id: int, api_versions_range: tuple[int, int] = registry.SUPPORTED[18]
) -> bytes:
    """The whole frame answering an ApiVersions request of an unsupported version."""
    return encode_response(
        registry.ApiKey.API_VERSIONS,
        0,
        correlation_id,
        api_versions.fallback_body(api_versions_range),
    )
