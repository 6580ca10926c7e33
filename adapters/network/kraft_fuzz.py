"""The KRaft APIs' fuzz target and corpus, after ``adapters.network.wire_fuzz`` and the quorum
codec's ``adapters.raft_transport.fuzz``.

**Target.** :func:`fuzz_request` does with the bytes of one inbound connection what a
controller's or a KRaft broker's listener does: a ``FrameReader`` (maximum frame size) cuts
frames, each is parsed as a KRaft request (``kraft_frames.parse_request``), converted to its
``fsm.kraft.controller.requests`` value (``kraft_convert.request_from_wire``), and answered
with ``error_response`` (what a standby answers: NOT_CONTROLLER) encoded to a frame.
:func:`fuzz_response` does the same with the bytes of an outbound connection, whose frames
answer a request of a known API and version. The contract: a label of :data:`OUTCOMES`, or
one of the codec's own errors (``CodecError``), on which the listener closes that connection.
Any other exception is a bug.

**Inputs.** :func:`corpus` encodes random valid requests or responses of every KRaft API and
version the codec declares (values drawn from the schemas by a ``random.Random``);
:func:`mutate` applies ``wire_fuzz``'s structure-aware mutations using where this frame's
fields lie.
"""

from __future__ import annotations

import random

from adapters.network import wire_fuzz
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import REQUEST_HEADERS, RESPONSE_HEADERS
from adapters.network.codec.kraft_convert import (
    error_response,
    request_from_wire,
    response_from_wire,
)
from adapters.network.codec.kraft_frames import (
    decode_response,
    encode_request,
    encode_response,
    parse_request,
)
from adapters.network.codec.kraft_registry import KRAFT_MESSAGES, KRAFT_SUPPORTED
from fsm.errors import ErrorCode

FUZZ_MAX_FRAME_SIZE = 64 * 1024
DECODED = "decoded"
INCOMPLETE = "incomplete"
OUTCOMES = (DECODED, INCOMPLETE)


def fuzz_request(data: bytes, max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    frames = FrameReader(max_frame_size).feed(data)
    for f in frames:
        request = parse_request(f)
        key, version = request.api_key, request.api_version
        answer = error_response(key, version, request.body, ErrorCode.NOT_CONTROLLER)
        encode_response(key, version, request.header.correlation_id, answer)
        request_from_wire(key, version, request.body)
    return DECODED if frames else INCOMPLETE


def fuzz_response(data: bytes, api_key: int, api_version: int,
                  max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    frames = FrameReader(max_frame_size).feed(data)
    for f in frames:
        _, body = decode_response(api_key, api_version, f)
        response_from_wire(api_key, api_version, body)
    return DECODED if frames else INCOMPLETE


def every_version() -> list[tuple[int, int]]:
    return [(k, v) for k, (lo, hi) in sorted(KRAFT_SUPPORTED.items()) for v in range(lo, hi + 1)]


def random_frame(api_key: int, version: int, response: bool, rng: random.Random) -> bytes:
    request, reply = KRAFT_MESSAGES[api_key]
    body = wire_fuzz.random_value((reply if response else request).schema(version), rng)
    correlation_id = rng.randint(-(2**31), 2**31 - 1)
    if response:
        return encode_response(api_key, version, correlation_id, body)
    client_id = rng.choice((None, "broker-1", "adminclient-1", "x" * 300))
    return encode_request(api_key, version, correlation_id, client_id, body)


def slots(frame: bytes, api_key: int, version: int, response: bool) -> tuple[wire_fuzz.Slot, ...]:
    """Where the integers, lengths and varints of a valid frame lie (size prefix included)."""
    request, reply = KRAFT_MESSAGES[api_key]
    message = reply if response else request
    flexible = message.is_flexible(version)
    header = (RESPONSE_HEADERS[1 if flexible else 0] if response
              else REQUEST_HEADERS[2 if flexible else 1])
    out = [wire_fuzz.Slot(0, 4, wire_fuzz.SIZE_SLOT)]
    pos = wire_fuzz._walk(header, frame, 4, out)
    pos = wire_fuzz._walk(message.schema(version), frame, pos, out)
    if pos != len(frame):
        raise ValueError(f"walked {pos} of {len(frame)} bytes: not a valid frame")
    return tuple(out)


def corpus(seed: int, per_version: int = 4, response: bool = False) -> list[wire_fuzz.Seed]:
    """``per_version`` valid frames of every KRaft API and version, deterministic in
    ``seed``."""
    rng = random.Random(seed)
    out = []
    for key, version in every_version():
        for _ in range(per_version):
            frame = random_frame(key, version, response, rng)
            out.append(wire_fuzz.Seed(key, version, frame, slots(frame, key, version, response)))
    return out


def mutate(seed: wire_fuzz.Seed, rng: random.Random, other: wire_fuzz.Seed | None = None
           ) -> bytes:
    return wire_fuzz.mutate(seed, rng, other=other, max_frame=FUZZ_MAX_FRAME_SIZE)
