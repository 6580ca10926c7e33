"""The Kafka wire codec: pure byte handling, no sockets.

- ``errors``: the codec's dedicated exceptions (``DecodeError``, ``FrameTooLarge``...);
- ``primitives``: big-endian integers, varints, a bounds-checked ``Reader``;
- ``schema``: field types, versioned message declarations, the one ``encode``/``decode``;
- ``framing``: size-prefixed frames, an incremental ``FrameReader``;
- ``headers``: request headers v0/v1/v2, response headers v0/v1 and which one applies;
- ``apis``: one module per API, each declaring its request and response once as data;
- ``registry``: api key -> messages and the versions a broker supports;
- ``convert``: ``fsm.requests`` values <-> wire dicts for the controller APIs;
- ``dispatch``: ``parse_request`` and the response/request frame builders.
"""

from adapters.network.codec.dispatch import (
    Action,
    Rejected,
    Request,
    api_versions_body,
    decode_response,
    encode_request,
    encode_response,
    encode_response_pieces,
    fallback_frame,
    parse_request,
)
from adapters.network.codec.errors import (
    CodecError,
    DecodeError,
    EncodeError,
    FrameError,
    FrameTooLarge,
)
from adapters.network.codec.framing import DEFAULT_MAX_FRAME_SIZE, FrameReader, frame
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.registry import (
    APIS,
    CLIENT_APIS,
    CONTROLLER_APIS,
    SUPPORTED,
    ApiKey,
    request_schema,
    response_schema,
)
from adapters.network.codec.wire import decode, encode

__all__ = [
    "APIS",
    "CLIENT_APIS",
    "CONTROLLER_APIS",
    "DEFAULT_MAX_FRAME_SIZE",
    "SUPPORTED",
    "Action",
    "ApiKey",
    "CodecError",
    "DecodeError",
    "EncodeError",
    "FrameError",
    "FrameReader",
    "FrameTooLarge",
    "Rejected",
    "Request",
    "RequestHeader",
    "api_versions_body",
    "decode",
    "decode_response",
    "encode",
    "encode_request",
    "encode_response",
    "encode_response_pieces",
    "fallback_frame",
    "frame",
    "parse_request",
    "request_schema",
    "response_schema",
]
