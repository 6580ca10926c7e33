"""ApiVersions (key 18), v0-v3, and the fallback rule for a version the broker lacks.

Reference section 7; upstream ApiVersionsRequest.json / ApiVersionsResponse.json
@abead0e8/@9dde33a2. Flexible from v3; the response always uses response header v0.

Fallback (RequestContext.parseRequest, ApiVersionsRequest.getErrorResponse): for an
unsupported version the body is not parsed; the answer is a **v0 body** with
ErrorCode 35 (UNSUPPORTED_VERSION) and ApiKeys holding exactly one entry, the broker's own
ApiVersions range. A v3+ request whose client software name or version does not match
:data:`SOFTWARE_PATTERN` is answered INVALID_REQUEST (42) in the requested version, with no
ApiKeys.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.primitives import Reader
from adapters.network.codec.schema import INT16, INT32, STRING, Field, Message, array, struct
from adapters.network.codec.wire import decode
from fsm.errors import ErrorCode

API_KEY = 18

SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

REQUEST = Message(
    "ApiVersionsRequest",
    API_KEY,
    valid="0-3",
    flexible="3+",
    fields=(
        Field("client_software_name", STRING, versions="3+"),
        Field("client_software_version", STRING, versions="3+"),
    ),
)

RESPONSE = Message(
    "ApiVersionsResponse",
    API_KEY,
    valid="0-3",
    flexible="3+",
    fields=(
        Field("error_code", INT16),
        Field(
            "api_keys",
            array(
                struct(
                    Field("api_key", INT16),
                    Field("min_version", INT16),
                    Field("max_version", INT16),
                )
            ),
        ),
        Field("throttle_time_ms", INT32, versions="1+", default=0),
    ),
)


def is_valid_request(body: dict[str, Any], version: int) -> bool:
    """ApiVersionsRequest.isValid: v3+ client software name and version well formed."""
    if version < 3:
        return True
    return all(
        isinstance(body.get(k), str) and SOFTWARE_PATTERN.fullmatch(body[k]) is not None
        for k in ("client_software_name", "client_software_version")
    )


def api_key_entries(supported: dict[int, tuple[int, int]]) -> list[dict[str, int]]:
    return [
        {"api_key": key, "min_version": lo, "max_version": hi}
        for key, (lo, hi) in sorted(supported.items())
    ]


def fallback_body(api_versions_range: tuple[int, int]) -> dict[str, Any]:
    """The v0 body answering an ApiVersions request of an unsupported version."""
    lo, hi = api_versions_range
    return {
        "error_code": int(ErrorCode.UNSUPPORTED_VERSION),
        "api_keys": [{"api_key": API_KEY, "min_version": lo, "max_version": hi}],
    }


def invalid_request_body() -> dict[str, Any]:
    """The body (any version) answering a v3+ request with malformed client software."""
    return {"error_code": int(ErrorCode.INVALID_REQUEST), "api_keys": [], "throttle_time_ms": 0}


def decode_response_body(data: bytes, version: int) -> tuple[int, dict[str, Any]]:
    """Client side, as kafka-python does: a non-zero ErrorCode means the rest is a v0 body.

    Returns (the version the body was decoded at, the body).
    """
    error = Reader(data).read_int(2)
    if error != 0 and version != 0:
        try:
            return 0, decode(RESPONSE.schema(0), data)
        except DecodeError:
            pass  # an error answer in the requested version (e.g. INVALID_REQUEST)
    return version, decode(RESPONSE.schema(version), data)
