"""Request and response frames of the quorum APIs (pure), with errors that name the API and
the field.

A flexible version has request header v2 (``client_id`` with its int16 length, then a tag
buffer) and response header v1; BeginQuorumEpoch and EndQuorumEpoch v0 are not flexible:
request header v1, response header v0. Decoding runs the codec's fast decoder; only when it
fails is the frame walked again, field by field, to name where it broke
(``DecodeError: VoteRequest v0: topics[0].partitions[0].last_offset: truncated ...``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.framing import frame
from adapters.network.codec.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api,
)
from adapters.network.codec.primitives import INT_FORMATS, Reader
from adapters.network.codec.raft_registry import RAFT_MESSAGES, RAFT_SUPPORTED, api_name
from adapters.network.codec.schema import Array, Message, Struct, Type
from adapters.network.codec.wire import decoder, encode


@dataclass(frozen=True)
class RaftRequest:
    header: RequestHeader
    body: dict[str, Any]

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


def is_raft_api(api_key: int, api_version: int) -> bool:
    lo_hi = RAFT_SUPPORTED.get(api_key)
    return lo_hi is not None and lo_hi[0] <= api_version <= lo_hi[1]


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None,
    body: dict[str, Any] | bytes,
) -> bytes:
    """A whole request frame (size prefix, header v2, body). ``body`` as ``bytes`` is a body
    already encoded for that version."""
    request, _ = _messages(api_key, api_version)
    header = RequestHeader(api_key, api_version, correlation_id, client_id)
    encoded = body if isinstance(body, bytes) else encode(request.schema(api_version), body)
    return frame(encode_request_header(header, _request_header(request, api_version)) + encoded)


def encode_body(api_key: int, api_version: int, body: dict[str, Any], response: bool) -> bytes:
    """Just the body of a request or response (the header comes later, with its correlation
    id)."""
    request, reply = _messages(api_key, api_version)
    return encode((reply if response else request).schema(api_version), body)


def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any] | bytes
) -> bytes:
    """A whole response frame (size prefix, header v1, body)."""
    _, response = _messages(api_key, api_version)
    encoded = body if isinstance(body, bytes) else encode(response.schema(api_version), body)
    header = encode_response_header(correlation_id, _response_header(response, api_version))
    return frame(header + encoded)


def parse_request(data: bytes) -> RaftRequest:
    """One request frame (size prefix removed). An API or version the quorum does not serve,
    or bytes that do not decode, raise :class:`DecodeError`."""
    api_key, api_version = peek_api(data)
    if not is_raft_api(api_key, api_version):
        raise DecodeError(f"{api_name(api_key)} v{api_version} is not served by the quorum "
                          f"listener (serves {RAFT_SUPPORTED})")
    request, _ = _messages(api_key, api_version)
    r = Reader(data)
    try:
        header = decode_request_header(r, _request_header(request, api_version))
    except DecodeError as e:
        raise DecodeError(f"{request.name} v{api_version}: request header: {e}") from None
    return RaftRequest(header, decode_body(request, api_version, r.data, r.pos))


def peek_correlation_id(data: bytes) -> int:
    """The correlation id of a response frame (its first 4 bytes)."""
    if len(data) < 4:
        raise DecodeError(f"response of {len(data)} bytes is too short for a header")
    return int(INT_FORMATS[4].unpack_from(data, 0)[0])


def decode_response(api_key: int, api_version: int, data: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation id, body) of a response frame (size prefix removed)."""
    _, response = _messages(api_key, api_version)
    r = Reader(data)
    try:
        correlation_id, _tags = decode_response_header(r, _response_header(response, api_version))
    except DecodeError as e:
        raise DecodeError(f"{response.name} v{api_version}: response header: {e}") from None
    return correlation_id, decode_body(response, api_version, r.data, r.pos)


def _request_header(request: Message, api_version: int) -> int:
    return 2 if request.is_flexible(api_version) else 1


def _response_header(response: Message, api_version: int) -> int:
    return 1 if response.is_flexible(api_version) else 0


def _messages(api_key: int, api_version: int) -> tuple[Message, Message]:
    if not is_raft_api(api_key, api_version):
        raise KeyError(f"{api_name(api_key)} v{api_version} is not a quorum API version")
    return RAFT_MESSAGES[api_key]


def decode_body(message: Message, version: int, data: bytes, pos: int) -> dict[str, Any]:
    schema = message.schema(version)
    try:
        body, end = decoder(schema)(data, pos)
    except DecodeError as e:
        where, error = failing_field(schema, data, pos)
        raise DecodeError(f"{message.name} v{version}: {where or 'body'}: {error or e}") from None
    if end != len(data):
        raise DecodeError(
            f"{message.name} v{version}: {len(data) - end} trailing bytes after the body"
        )
    return body  # type: ignore[no-any-return]


def failing_field(t: Type, data: bytes, pos: int) -> tuple[str, str]:
    """(path, error) of the first field of ``t`` at ``pos`` whose decoding fails: the path
    as ``topics[0].partitions[0].last_offset`` ("" if it is ``t`` itself: a length, a
    primitive) and the innermost decoder's message ("" if ``t`` decodes). Slow: only called
    once a decode has failed."""
    try:
        decoder(t)(data, pos)
    except DecodeError as e:
        error = str(e)
    else:
        return "", ""
    match t:
        case Struct(fields=fields):
            for f in fields:
                try:
                    _, pos = decoder(f.type)(data, pos)
                except DecodeError:
                    inner, error = failing_field(f.type, data, pos)
                    return f.name + ("." + inner if inner and inner[0] != "[" else inner), error
        case Array(item=item) if isinstance(item, Struct | Array):
            r = Reader(data, pos)
            try:
                n = r.read_uvarint() - 1 if t.compact else r.read_int(4)
            except DecodeError:
                return "", error
            pos = r.pos
            for i in range(max(n, 0)):
                try:
                    _, pos = decoder(item)(data, pos)
                except DecodeError:
                    inner, error = failing_field(item, data, pos)
                    return f"[{i}]" + ("." + inner if inner and inner[0] != "[" else inner), error
    return "", error
