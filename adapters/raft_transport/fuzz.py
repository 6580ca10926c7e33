"""The quorum codec's fuzz target and corpus, after ``adapters.network.wire_fuzz``.

**Target.** :func:`fuzz_request` does with the bytes of one inbound connection what the
transport does: a ``FrameReader`` (maximum frame size) cuts frames, each is parsed as a
quorum request (``raft_frames.parse_request``) and converted to its ``fsm.raft.messages``
value. :func:`fuzz_response` does the same with the bytes of an outbound connection, whose
frames answer a request of a known API and version. The contract: a label of
:data:`OUTCOMES`, or one of the codec's own errors (``CodecError``: ``DecodeError``,
``FrameError``, ``FrameTooLarge``), on which the transport closes that connection. Any other
exception is a bug.

**Inputs.** :func:`corpus` encodes random valid requests and responses of every quorum API
and version (values from the schemas, drawn by a ``random.Random``, with the one
``__cluster_metadata`` partition the converter accepts most of the time); :func:`mutate`
applies ``wire_fuzz``'s structure-aware mutations (lengths, counts, varints, header, size
prefix, bits, truncation, splices, random bytes) using where this frame's fields lie.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from adapters.network import wire_fuzz
from adapters.network.codec.errors import DecodeError
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import REQUEST_HEADERS, RESPONSE_HEADERS
from adapters.network.codec.raft_convert import METADATA_TOPIC, RaftConverter, RecordsCodec
from adapters.network.codec.raft_frames import (
    decode_response,
    encode_request,
    encode_response,
    parse_request,
)
from adapters.network.codec.raft_registry import RAFT_MESSAGES, RAFT_SUPPORTED
from adapters.network.codec.schema import Struct
from fsm.raft.messages import Batch

FUZZ_MAX_FRAME_SIZE = 64 * 1024
DECODED = "decoded"
INCOMPLETE = "incomplete"
OUTCOMES = (DECODED, INCOMPLETE)


def _no_batches(data: bytes) -> Sequence[Batch]:
    """Record bytes are the log's to read; here any of them is one opaque batch."""
    if len(data) > FUZZ_MAX_FRAME_SIZE:
        raise DecodeError("records over the fuzz frame size")
    return (Batch(0, 0, (data,)),)


CONVERTER = RaftConverter(RecordsCodec(lambda batches: b"".join(
    r for b in batches for r in b.records), _no_batches))


def fuzz_request(data: bytes, max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    frames = FrameReader(max_frame_size).feed(data)
    for f in frames:
        request = parse_request(f)
        CONVERTER.from_wire(request.api_key, True, request.body)
    return DECODED if frames else INCOMPLETE


def fuzz_response(data: bytes, api_key: int, api_version: int,
                  max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    frames = FrameReader(max_frame_size).feed(data)
    for f in frames:
        _, body = decode_response(api_key, api_version, f)
        CONVERTER.from_wire(api_key, False, body)
    return DECODED if frames else INCOMPLETE


def every_version() -> list[tuple[int, int]]:
    return [(k, v) for k, (lo, hi) in sorted(RAFT_SUPPORTED.items()) for v in range(lo, hi + 1)]


def random_body(schema: Struct, rng: random.Random) -> dict[str, Any]:
    """A random valid body; most of the time about ``__cluster_metadata`` 0 alone (what the
    converter accepts), so that the mutations reach past it."""
    body: dict[str, Any] = wire_fuzz.random_value(schema, rng)
    if rng.random() < 0.8:
        for key in ("topics", "responses"):
            if key in body and body[key]:
                topic = body[key][0]
                name_key = next(k for k in ("topic_name", "topic", "name") if k in topic)
                topic[name_key] = METADATA_TOPIC
                body[key] = [topic]
                if topic["partitions"]:
                    partition = topic["partitions"][0]
                    for k in ("partition_index", "partition", "index"):
                        if k in partition:
                            partition[k] = 0
                    topic["partitions"] = [partition]
    return body


def random_frame(api_key: int, version: int, response: bool, rng: random.Random) -> bytes:
    request, reply = RAFT_MESSAGES[api_key]
    body = random_body((reply if response else request).schema(version), rng)
    correlation_id = rng.randint(-(2**31), 2**31 - 1)
    if response:
        return encode_response(api_key, version, correlation_id, body)
    client_id = rng.choice((None, "raft-1", "kafka-metadata-quorum", "x" * 300))
    return encode_request(api_key, version, correlation_id, client_id, body)


def slots(frame: bytes, api_key: int, version: int, response: bool) -> tuple[wire_fuzz.Slot, ...]:
    """Where the integers, lengths and varints of a valid frame lie (size prefix included)."""
    request, reply = RAFT_MESSAGES[api_key]
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
    """``per_version`` valid frames of every quorum API and version, deterministic in
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
