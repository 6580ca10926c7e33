"""Request and response frames over one table of APIs (pure), with errors that name the API
and the field: ``FrameTable``, one instance per listener's table -- the quorum's
(``raft_frames``) and the KRaft controller's and brokers' (``kraft_frames``) -- so a listener
refuses what its own table does not hold.

A flexible version has request header v2 (``client_id`` with its int16 length, then a tag
buffer) and response header v1; the others request header v1 and response header v0.
Decoding runs the codec's fast decoder; only when it fails is the frame walked again, field
by field, to name where it broke (``DecodeError: VoteRequest v0:
topics[0].partitions[0].last_offset: truncated ...``). Malformed, truncated or oversized
input raises :class:`DecodeError` (a ``CodecError``), nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from adapters.network.codec.schema import Array, Message, Struct, Type
from adapters.network.codec.wire import decoder, encode


@dataclass(frozen=True)
class TableRequest:
    header: RequestHeader
    body: dict[str, Any]

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


class FrameTable:
    """The frames of the APIs in ``messages`` (key -> (request, response)) at the versions
    of ``supported`` (key -> (lowest, highest)). ``refused`` says, after "<API> vN ", why a
    request outside the table is refused; ``max_frame`` bounds a frame's size."""

    def __init__(self, messages: Mapping[int, tuple[Message, Message]],
                 supported: Mapping[int, tuple[int, int]], api_name: Callable[[int], str],
                 refused: str, max_frame: int | None = None) -> None:
        self.messages = messages
        self.supported = supported
        self.api_name = api_name
        self.refused = refused
        self.max_frame = max_frame

    def serves(self, api_key: int, api_version: int) -> bool:
        lo_hi = self.supported.get(api_key)
        return lo_hi is not None and lo_hi[0] <= api_version <= lo_hi[1]

    def encode_request(self, api_key: int, api_version: int, correlation_id: int,
                       client_id: str | None, body: dict[str, Any] | bytes) -> bytes:
        """A whole request frame (size prefix, header, body). ``body`` as ``bytes`` is a
        body already encoded for that version."""
        request, _ = self._messages(api_key, api_version)
        header = RequestHeader(api_key, api_version, correlation_id, client_id)
        encoded = body if isinstance(body, bytes) else encode(request.schema(api_version), body)
        return frame(encode_request_header(header, _request_header(request, api_version))
                     + encoded)

    def encode_body(self, api_key: int, api_version: int, body: dict[str, Any],
                    response: bool) -> bytes:
        """Just the body of a request or response (the header comes later, with its
        correlation id)."""
        request, reply = self._messages(api_key, api_version)
        return encode((reply if response else request).schema(api_version), body)

    def encode_response(self, api_key: int, api_version: int, correlation_id: int,
                        body: dict[str, Any] | bytes) -> bytes:
        """A whole response frame (size prefix, header, body)."""
        _, response = self._messages(api_key, api_version)
        encoded = body if isinstance(body, bytes) else encode(response.schema(api_version), body)
        header = encode_response_header(correlation_id, _response_header(response, api_version))
        return frame(header + encoded)

    def parse_request(self, data: bytes) -> TableRequest:
        """One request frame (size prefix removed). An API or version not in the table, or
        bytes that do not decode, raise :class:`DecodeError`."""
        self._check_size(data, "request")
        api_key, api_version = peek_api(data)
        if not self.serves(api_key, api_version):
            raise DecodeError(f"{self.api_name(api_key)} v{api_version} {self.refused} "
                              f"(serves {dict(self.supported)})")
        request, _ = self._messages(api_key, api_version)
        r = Reader(data)
        try:
            header = decode_request_header(r, _request_header(request, api_version))
        except DecodeError as e:
            raise DecodeError(f"{request.name} v{api_version}: request header: {e}") from None
        return TableRequest(header, decode_body(request, api_version, r.data, r.pos))

    def decode_response(self, api_key: int, api_version: int, data: bytes
                        ) -> tuple[int, dict[str, Any]]:
        """(correlation id, body) of a response frame (size prefix removed)."""
        self._check_size(data, "response")
        if not self.serves(api_key, api_version):
            raise DecodeError(f"{self.api_name(api_key)} v{api_version} {self.refused}")
        _, response = self._messages(api_key, api_version)
        r = Reader(data)
        try:
            correlation_id, _tags = decode_response_header(
                r, _response_header(response, api_version))
        except DecodeError as e:
            raise DecodeError(f"{response.name} v{api_version}: response header: {e}") from None
        return correlation_id, decode_body(response, api_version, r.data, r.pos)

    def _check_size(self, data: bytes, what: str) -> None:
        if self.max_frame is not None and len(data) > self.max_frame:
            raise DecodeError(f"{what} of {len(data)} bytes is over the maximum frame size "
                              f"{self.max_frame}")

    def _messages(self, api_key: int, api_version: int) -> tuple[Message, Message]:
        if not self.serves(api_key, api_version):
            raise KeyError(f"{self.api_name(api_key)} v{api_version} {self.refused}")
        return self.messages[api_key]




def peek_correlation_id(data: bytes) -> int:
    """The correlation id of a response frame (its first 4 bytes)."""
    if len(data) < 4:
        raise DecodeError(f"response of {len(data)} bytes is too short for a header")
    return int(INT_FORMATS[4].unpack_from(data, 0)[0])


def _request_header(request: Message, api_version: int) -> int:
    return 2 if request.is_flexible(api_version) else 1


def _response_header(response: Message, api_version: int) -> int:
    return 1 if response.is_flexible(api_version) else 0


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
