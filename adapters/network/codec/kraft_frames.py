"""Request and response frames of the KRaft APIs (``kraft_registry``), pure: the functions and
signatures of ``raft_frames`` over the other table.

A sibling of ``raft_frames`` rather than one lookup over both tables, so a quorum listener
still refuses BrokerHeartbeat and a controller listener can tell which table a key belongs to;
the body decoding (the fast decoder, then a field-by-field walk naming where it broke) is
``raft_frames.decode_body``. A flexible version has request header v2 and response header v1;
the others (CreateTopics v2-v4, DeleteTopics v1-v3, CreatePartitions v0-v1, ElectLeaders
v0-v1) request header v1 and response header v0. Malformed, truncated or oversized input
raises :class:`DecodeError` (a ``CodecError``) naming the API and the field, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.framing import DEFAULT_MAX_FRAME_SIZE, frame
from adapters.network.codec.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api,
)
from adapters.network.codec.kraft_registry import KRAFT_MESSAGES, KRAFT_SUPPORTED, api_name
from adapters.network.codec.primitives import INT_FORMATS, Reader
from adapters.network.codec.raft_frames import decode_body
from adapters.network.codec.schema import Message
from adapters.network.codec.wire import encode


@dataclass(frozen=True)
class KRaftRequest:
    header: RequestHeader
    body: dict[str, Any]

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


def is_kraft_api(api_key: int, api_version: int) -> bool:
    lo_hi = KRAFT_SUPPORTED.get(api_key)
    return lo_hi is not None and lo_hi[0] <= api_version <= lo_hi[1]


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None,
    body: dict[str, Any] | bytes,
) -> bytes:
    """A whole request frame (size prefix, header, body). ``body`` as ``bytes`` is a body
    already encoded for that version."""
    request, _ = _messages(api_key, api_version)
    header = RequestHeader(api_key, api_version, correlation_id, client_id)
    encoded = body if isinstance(body, bytes) else encode(request.schema(api_version), body)
    return frame(encode_request_header(header, _request_header(request, api_version)) + encoded)


def encode_body(api_key: int, api_version: int, body: dict[str, Any], response: bool) -> bytes:
    """Just the body of a request or response."""
    request, reply = _messages(api_key, api_version)
    return encode((reply if response else request).schema(api_version), body)


def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any] | bytes
) -> bytes:
    """A whole response frame (size prefix, header, body)."""
    _, response = _messages(api_key, api_version)
    encoded = body if isinstance(body, bytes) else encode(response.schema(api_version), body)
    header = encode_response_header(correlation_id, _response_header(response, api_version))
    return frame(header + encoded)


def parse_request(data: bytes) -> KRaftRequest:
    """One request frame (size prefix removed). An API or version not in the table, or bytes
    that do not decode, raise :class:`DecodeError`."""
    _check_size(data, "request")
    api_key, api_version = peek_api(data)
    if not is_kraft_api(api_key, api_version):
        raise DecodeError(f"{api_name(api_key)} v{api_version} is not a KRaft API version "
                          f"(serves {KRAFT_SUPPORTED})")
    request, _ = _messages(api_key, api_version)
    r = Reader(data)
    try:
        header = decode_request_header(r, _request_header(request, api_version))
    except DecodeError as e:
        raise DecodeError(f"{request.name} v{api_version}: request header: {e}") from None
    return KRaftRequest(header, decode_body(request, api_version, r.data, r.pos))


def peek_correlation_id(data: bytes) -> int:
    """The correlation id of a response frame (its first 4 bytes)."""
    if len(data) < 4:
        raise DecodeError(f"response of {len(data)} bytes is too short for a header")
    return int(INT_FORMATS[4].unpack_from(data, 0)[0])


def decode_response(api_key: int, api_version: int, data: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation id, body) of a response frame (size prefix removed)."""
    _check_size(data, "response")
    if not is_kraft_api(api_key, api_version):
        raise DecodeError(f"{api_name(api_key)} v{api_version} is not a KRaft API version")
    _, response = _messages(api_key, api_version)
    r = Reader(data)
    try:
        correlation_id, _tags = decode_response_header(r, _response_header(response, api_version))
    except DecodeError as e:
        raise DecodeError(f"{response.name} v{api_version}: response header: {e}") from None
    return correlation_id, decode_body(response, api_version, r.data, r.pos)


def _check_size(data: bytes, what: str) -> None:
    if len(data) > DEFAULT_MAX_FRAME_SIZE:
        raise DecodeError(f"{what} of {len(data)} bytes is over the maximum frame size "
                          f"{DEFAULT_MAX_FRAME_SIZE}")


def _request_header(request: Message, api_version: int) -> int:
    return 2 if request.is_flexible(api_version) else 1


def _response_header(response: Message, api_version: int) -> int:
    return 1 if response.is_flexible(api_version) else 0


def _messages(api_key: int, api_version: int) -> tuple[Message, Message]:
    if not is_kraft_api(api_key, api_version):
        raise KeyError(f"{api_name(api_key)} v{api_version} is not a KRaft API version")
    return KRAFT_MESSAGES[api_key]
