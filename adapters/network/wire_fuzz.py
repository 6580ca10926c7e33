"""The wire decoder's fuzz target, and a seeded, structure-aware input generator.

**Target.** :func:`fuzz_one` takes raw bytes and does with them what a listener does with
the bytes of one connection (``adapters.network.listeners``): a ``FrameReader`` cuts frames
(size prefix, maximum size), each frame goes through ``parse_request`` (request header, then
the body at the header's API and version), an answerable rejection has its response frame
built, and a decoded controller request is converted to its ``fsm.requests`` value (the
broker handler's first step). The contract: it returns one :data:`OUTCOMES` label, or it
raises one of the codec's own documented errors (:data:`CODEC_ERRORS`: ``DecodeError``,
``FrameError``, ``FrameTooLarge``), which a listener answers by closing that connection.
Any other exception is a bug (a crash). Memory is bounded too: no length field makes the
decoder allocate before it has checked the bytes are there (:func:`traced_peak` measures).

**Inputs.** :func:`corpus` encodes valid requests of every API and version the codec
declares, with values drawn from each schema by a ``random.Random``; :func:`field_slots`
walks a valid frame along its schemas and records where every integer, length and varint
lies; :func:`mutate` applies one to three mutations to a valid frame: bit flips, byte
overwrites, truncation, extension, a length or count set huge, negative or off by one, a
varint made over-long, a header's key or version changed, the size prefix set wrong or made
to agree with the new length, a splice of two frames, or plain random bytes. Everything is a
function of the ``Random`` it is given: the benchmark seeds one per input (deterministic),
the tests pass hypothesis' ``randoms()`` (shrinkable).
"""

from __future__ import annotations

import random
import struct
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adapters.network.codec import convert
from adapters.network.codec.dispatch import Action, Rejected, Request, parse_request
from adapters.network.codec.errors import DecodeError, FrameError, FrameTooLarge
from adapters.network.codec.framing import FrameReader, frame
from adapters.network.codec.headers import (
    REQUEST_HEADERS,
    RequestHeader,
    encode_request_header,
    request_header_version,
)
from adapters.network.codec.primitives import UINT32_MAX, int_bounds
from adapters.network.codec.registry import APIS, SUPPORTED, ApiKey
from adapters.network.codec.schema import (
    MAX_STRING_BYTES,
    TAGGED_FIELDS,
    Array,
    Bool,
    Bytes,
    Int,
    Str,
    Struct,
    TaggedFields,
    Type,
    UInt16,
    UuidType,
)
from adapters.network.codec.wire import encode

CODEC_ERRORS: tuple[type[Exception], ...] = (DecodeError, FrameError)
"""What a listener expects from the codec on bad input (``FrameTooLarge`` is a FrameError)."""

FUZZ_MAX_FRAME_SIZE = 64 * 1024
"""The maximum frame size the target is run with: small, so huge size prefixes are refused."""

DECODED = "decoded"
INCOMPLETE = "incomplete"  # no whole frame: a listener waits for more bytes
OUTCOMES = (DECODED, INCOMPLETE, "answered UNSUPPORTED_VERSION", "answered INVALID_REQUEST",
            "closed INVALID_REQUEST", "closed UNSUPPORTED_VERSION")

_FROM_WIRE: dict[int, Callable[[dict[str, Any]], object]] = {
    ApiKey.LEADER_AND_ISR: convert.leader_and_isr_request_from_wire,
    ApiKey.STOP_REPLICA: convert.stop_replica_request_from_wire,
    ApiKey.UPDATE_METADATA: convert.update_metadata_request_from_wire,
    ApiKey.CONTROLLED_SHUTDOWN: convert.controlled_shutdown_request_from_wire,
}


class ContractViolation(AssertionError):
    """The codec returned something a listener cannot use (not an exception it raised)."""


def fuzz_one(data: bytes, supported: Mapping[int, tuple[int, int]] = SUPPORTED,
             max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    """Runs ``data`` through the listener's decoding path; returns the outcome label, or
    raises a codec error (the connection would be closed). See the module docstring."""
    reader = FrameReader(max_frame_size)
    frames = reader.feed(data)  # FrameError / FrameTooLarge: the connection closes
    outcome = INCOMPLETE
    for payload in frames:
        parsed = parse_request(payload, supported)  # DecodeError: the connection closes
        if isinstance(parsed, Rejected):
            if parsed.action is Action.CLOSE:
                return f"closed {parsed.error.name}"
            response = parsed.response_frame()
            if len(response) < 8:
                raise ContractViolation(f"answer of {len(response)} bytes to {parsed!r}")
            if outcome == INCOMPLETE:
                outcome = f"answered {parsed.error.name}"
            continue
        if not isinstance(parsed, Request):
            raise ContractViolation(f"parse_request returned {parsed!r}")
        _check_request(parsed, supported)
        outcome = DECODED
    return outcome


def _check_request(req: Request, supported: Mapping[int, tuple[int, int]]) -> None:
    lo, hi = supported[req.api_key]
    if not lo <= req.api_version <= hi or not isinstance(req.body, dict):
        raise ContractViolation(f"decoded a request the listener does not accept: {req!r}")
    to_value = _FROM_WIRE.get(req.api_key)
    if to_value is not None:
        to_value(req.body)  # what the broker handler does first; must not raise


def classify(data: bytes, supported: Mapping[int, tuple[int, int]] = SUPPORTED,
             max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> str:
    """:func:`fuzz_one`'s label, with a codec error named as one (``FrameTooLarge``...).
    Anything else propagates: it is a crash."""
    try:
        return fuzz_one(data, supported, max_frame_size)
    except CODEC_ERRORS as exc:
        return type(exc).__name__


def traced_peak(data: bytes, max_frame_size: int = FUZZ_MAX_FRAME_SIZE) -> int:
    """Peak bytes allocated while :func:`classify` runs on ``data`` (tracemalloc)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        classify(data, max_frame_size=max_frame_size)
        return max(0, tracemalloc.get_traced_memory()[1] - base)
    finally:
        if not was_tracing:
            tracemalloc.stop()


MEMORY_SLACK = 256 * 1024
MEMORY_PER_INPUT_BYTE = 512
"""The bound :func:`memory_bound` allows: decoded Python objects take more room than their
wire bytes (a one-byte struct becomes a dict), but never more than this per input byte."""


def memory_bound(data: bytes) -> int:
    return MEMORY_SLACK + MEMORY_PER_INPUT_BYTE * len(data)


# ---------------------------------------------------------------- valid requests


_INTERESTING_INTS = (0, 1, -1, 2, 127, 128, 255, 256, 32767, -32768, 65535)


def random_value(t: Type, rng: random.Random, max_items: int = 3) -> Any:
    """A value of ``t`` that encodes, in the form the decoder returns."""
    match t:
        case Int(width=width):
            lo, hi = int_bounds(width)
            if rng.random() < 0.3:
                return rng.choice([v for v in (*_INTERESTING_INTS, lo, hi) if lo <= v <= hi])
            return rng.randint(lo, hi)
        case Bool():
            return rng.random() < 0.5
        case UInt16():
            return rng.choice((0, 1, 9092, 65535, rng.randint(0, 65535)))
        case UuidType():
            return bytes(16) if rng.random() < 0.2 else rng.randbytes(16)
        case Str():
            if t.nullable and rng.random() < 0.2:
                return None
            return _random_text(rng)
        case Bytes():
            if t.nullable and rng.random() < 0.2:
                return None
            return rng.randbytes(rng.randint(0, 12))
        case Array(item=item):
            if t.nullable and rng.random() < 0.2:
                return None
            return [random_value(item, rng, max_items) for _ in range(rng.randint(0, max_items))]
        case Struct(fields=fields):
            return {f.name: random_value(f.type, rng, max_items) for f in fields}
        case TaggedFields():
            tags = sorted(rng.sample(range(0, 300), rng.choice((0, 0, 0, 1, 2))))
            return {tag: rng.randbytes(rng.randint(0, 6)) for tag in tags}
    raise TypeError(f"not a schema type: {t!r}")


def _random_text(rng: random.Random) -> str:
    n = rng.choice((0, 1, 3, 8, 20))
    roll = rng.random()
    if roll < 0.7:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-._") for _ in range(n))
    if roll < 0.9:
        return "".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(n))
    text = "x" * rng.choice((255, 256, 4096))  # longer strings exercise 2-byte varints
    assert len(text.encode()) <= MAX_STRING_BYTES
    return text


@dataclass(frozen=True, slots=True)
class Seed:
    """One valid request frame (size prefix included) and where its fields lie."""

    api_key: int
    api_version: int
    frame: bytes
    slots: tuple[Slot, ...]


def request_frame(header: RequestHeader, body: dict[str, Any]) -> bytes:
    """A whole request frame (size prefix, header, body), as a client would send it."""
    api = APIS[header.api_key]
    hv = request_header_version(header.api_key, header.api_version,
                                api.request.is_flexible(header.api_version))
    return frame(encode_request_header(header, hv) + encode(api.request.schema(header.api_version),
                                                            body))


def random_request(api_key: int, version: int, rng: random.Random,
                   max_items: int = 3) -> tuple[RequestHeader, dict[str, Any]]:
    api = APIS[api_key]
    body = random_value(api.request.schema(version), rng, max_items)
    if api_key == ApiKey.API_VERSIONS and version >= 3 and rng.random() < 0.8:
        body["client_software_name"] = rng.choice(("kcontrol", "kafka-python", "a"))
        body["client_software_version"] = rng.choice(("1.0", "2.8.1", "0"))
    hv = request_header_version(api_key, version, api.request.is_flexible(version))
    client_id = None if rng.random() < 0.1 else _random_text(rng)
    tags = random_value(REQUEST_HEADERS[hv], rng).get(TAGGED_FIELDS, {}) if hv == 2 else {}
    header = RequestHeader(api_key, version, rng.randint(-(2**31), 2**31 - 1), client_id, tags)
    return header, body


def every_version() -> list[tuple[int, int]]:
    """(api key, version) for every request version the codec declares."""
    return [(key, v) for key, (lo, hi) in sorted(SUPPORTED.items()) for v in range(lo, hi + 1)]


def corpus(seed: int, per_version: int = 8) -> list[Seed]:
    """``per_version`` valid frames of every API and version, deterministic in ``seed``."""
    rng = random.Random(seed)
    out = []
    for key, version in every_version():
        for i in range(per_version):
            header, body = random_request(key, version, rng, max_items=(1, 2, 3, 6)[i % 4])
            data = request_frame(header, body)
            out.append(Seed(key, version, data, field_slots(data)))
    return out


# ---------------------------------------------------------------- where the fields lie

INT_SLOT, LENGTH_SLOT, VARINT_SLOT, SIZE_SLOT = "int", "length", "varint", "size"


@dataclass(frozen=True, slots=True)
class Slot:
    offset: int  # in the frame, size prefix included
    width: int
    kind: str  # INT_SLOT, LENGTH_SLOT (int16/int32 length or count), VARINT_SLOT, SIZE_SLOT


def field_slots(data: bytes) -> tuple[Slot, ...]:
    """Every integer, length and varint of a *valid* request frame, by walking it along its
    header and body schemas (the frame's API and version are read from its header).
    ``ValueError`` for bytes that are not one valid frame."""
    slots = [Slot(0, 4, SIZE_SLOT)]
    _need(data, 0, 8)
    api_key, version = struct.unpack_from(">hh", data, 4)
    if api_key not in APIS or not APIS[api_key].supports(version):
        raise ValueError(f"not a valid frame: api {api_key} v{version}")
    api = APIS[api_key]
    hv = request_header_version(api_key, version, api.request.is_flexible(version))
    pos = _walk(REQUEST_HEADERS[hv], data, 4, slots)
    pos = _walk(api.request.schema(version), data, pos, slots)
    if pos != len(data):
        raise ValueError(f"walked {pos} of {len(data)} bytes: not a valid frame")
    return tuple(slots)


def _walk(t: Type, data: bytes, pos: int, out: list[Slot]) -> int:
    match t:
        case Int(width=width):
            _need(data, pos, width)
            out.append(Slot(pos, width, INT_SLOT))
            return pos + width
        case Bool():
            _need(data, pos, 1)
            return pos + 1
        case UInt16() | UuidType():
            width = 2 if isinstance(t, UInt16) else 16
            _need(data, pos, width)
            return pos + width
        case Str() | Bytes() | Array():
            if t.compact:
                n, end = _read_uvarint(data, pos)
                out.append(Slot(pos, end - pos, VARINT_SLOT))
                n, pos = n - 1, end
            else:
                width = 2 if isinstance(t, Str) else 4
                _need(data, pos, width)
                n = int.from_bytes(data[pos:pos + width], "big", signed=True)
                out.append(Slot(pos, width, LENGTH_SLOT))
                pos += width
            if n < 0:
                return pos
            _need(data, pos, n)  # an array element takes at least one byte
            if isinstance(t, Array):
                for _ in range(n):
                    pos = _walk(t.item, data, pos, out)
                return pos
            return pos + n
        case Struct(fields=fields):
            for f in fields:
                pos = _walk(f.type, data, pos, out)
            return pos
        case TaggedFields():
            count, end = _read_uvarint(data, pos)
            out.append(Slot(pos, end - pos, VARINT_SLOT))
            pos = end
            _need(data, pos, 2 * count)
            for _ in range(count):
                _tag, end = _read_uvarint(data, pos)
                out.append(Slot(pos, end - pos, VARINT_SLOT))
                size, end2 = _read_uvarint(data, end)
                out.append(Slot(end, end2 - end, VARINT_SLOT))
                _need(data, end2, size)
                pos = end2 + size
            return pos
    raise TypeError(f"not a schema type: {t!r}")


def _need(data: bytes, pos: int, n: int) -> None:
    if n > len(data) - pos:
        raise ValueError(f"not a valid frame: {n} bytes needed at offset {pos}")


def _read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        _need(data, pos, 1)
        if shift > 28:
            raise ValueError(f"not a valid frame: varint too long at offset {pos}")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# ---------------------------------------------------------------- mutations


def _int_values(width: int, current: int, rng: random.Random) -> int:
    lo, hi = int_bounds(width)
    return rng.choice((-1, -2, 0, 1, lo, hi, hi - 1, lo + 1, current + 1, current - 1,
                       current * 2 + 1, rng.randint(lo, hi)))


def _varint_bytes(current: int, rng: random.Random) -> bytes:
    roll = rng.randrange(4)
    if roll == 0:  # longer than 5 bytes, or over 32 bits
        return rng.choice((b"\xff" * 5 + b"\x01", b"\xff\xff\xff\xff\x7f", b"\x80" * 6,
                           b"\x80\x80\x80\x80\x10"))
    if roll == 1:  # the same value, padded with continuation bytes (non-canonical)
        return bytes([(current & 0x7F) | 0x80]) + b"\x80" * rng.randint(0, 2) + b"\x00"
    value = rng.choice((0, 1, 2, current + 1, max(0, current - 1), 2**31, 2**31 + 1,
                        2**32 - 1, 2**28, 0x7FFF + 2, rng.randint(0, UINT32_MAX)))
    return uvarint(min(max(value, 0), UINT32_MAX))


def _slot_mutation(data: bytearray, slot: Slot, rng: random.Random, max_frame: int) -> None:
    """Rewrites the field at ``slot`` (the caller goes from the last slot to the first, so a
    change of width does not move the slots still to come)."""
    end = slot.offset + slot.width
    if slot.offset + slot.width > len(data):
        return
    if slot.kind == VARINT_SLOT:
        current, _ = _read_uvarint(bytes(data[slot.offset:end]) + b"\x00", 0)
        data[slot.offset:end] = _varint_bytes(current, rng)
        return
    current = int.from_bytes(data[slot.offset:end], "big", signed=True)
    if slot.kind == SIZE_SLOT:
        value = rng.choice((-1, -(2**31), 2**31 - 1, max_frame, max_frame + 1, 0, 1, 4,
                            current - 1, current + 1, current + 1000))
    elif slot.kind == INT_SLOT and slot.offset == 4:  # the header's api key
        value = rng.choice((*SUPPORTED, rng.randint(-5, 70), -1, 32767, -32768))
    elif slot.kind == INT_SLOT and slot.offset == 6:  # the header's api version
        value = rng.choice((-1, 0, 1, 2, 3, 4, 5, 8, 9, 12, 32767, rng.randint(0, 20)))
    else:
        value = _int_values(slot.width, current, rng)
    lo, hi = int_bounds(slot.width)
    value = min(max(value, lo), hi)
    data[slot.offset:end] = value.to_bytes(slot.width, "big", signed=True)


def _fix_size(data: bytearray) -> None:
    if len(data) >= 4:
        data[0:4] = struct.pack(">i", len(data) - 4)


def mutate(seed: Seed, rng: random.Random, *, other: Seed | None = None,
           max_frame: int = FUZZ_MAX_FRAME_SIZE) -> bytes:
    """One to three mutations of ``seed.frame`` (``other``: a second frame for splices);
    about a tenth of the time, random bytes instead."""
    if rng.random() < 0.1:
        return _random_bytes(rng, max_frame)
    data = bytearray(seed.frame)
    fix = rng.random() < 0.6  # make the size prefix agree with the mutated length
    slot_picks = sorted((rng.choice(seed.slots) for _ in range(rng.randint(0, 2))),
                        key=lambda s: -s.offset)
    for slot in dict.fromkeys(slot_picks):
        _slot_mutation(data, slot, rng, max_frame)
        if slot.kind == SIZE_SLOT:
            fix = False
    for _ in range(rng.randint(0 if slot_picks else 1, 2)):
        _byte_mutation(data, rng, other)
    if fix:
        _fix_size(data)
    return bytes(data)


def _byte_mutation(data: bytearray, rng: random.Random, other: Seed | None) -> None:
    roll = rng.randrange(7)
    n = len(data)
    if roll == 0 and n:  # flip 1..4 bits
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
    elif roll == 1 and n:  # overwrite a byte with an interesting value
        data[rng.randrange(n)] = rng.choice((0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE))
    elif roll == 2 and n > 4:  # truncate
        del data[rng.randrange(4, n):]
    elif roll == 3:  # extend
        data += rng.randbytes(rng.choice((1, 2, 4, 16)))
    elif roll == 4 and n > 5:  # delete or duplicate a run
        i = rng.randrange(4, n - 1)
        k = rng.randint(1, min(8, n - i))
        if rng.random() < 0.5:
            del data[i:i + k]
        else:
            data[i:i] = data[i:i + k]
    elif roll == 5 and other is not None and n > 4:  # splice with another frame's tail
        j = rng.randrange(4, len(other.frame))
        del data[rng.randrange(4, n):]
        data += other.frame[j:]
    else:  # overwrite a run with random bytes
        if n:
            i = rng.randrange(n)
            data[i:i + 4] = rng.randbytes(min(4, n - i))


def _random_bytes(rng: random.Random, max_frame: int) -> bytes:
    body = rng.randbytes(rng.choice((0, 1, 3, 8, 16, 64, 200)))
    if rng.random() < 0.5:
        return body
    size = len(body) if rng.random() < 0.7 else rng.choice((-1, max_frame + 1, len(body) + 3))
    return struct.pack(">i", size) + body


def inputs(seed: int, count: int, *, max_frame: int = FUZZ_MAX_FRAME_SIZE,
           per_version: int = 8) -> Any:
    """``count`` fuzz inputs, deterministic in ``seed``: a generator of ``(index, bytes)``.
    Input ``i`` depends only on ``seed`` and ``i`` (re-run one with :func:`input_at`)."""
    seeds = corpus(seed, per_version)
    for i in range(count):
        yield i, _input(seeds, seed, i, max_frame)


def input_at(seed: int, i: int, *, max_frame: int = FUZZ_MAX_FRAME_SIZE,
             per_version: int = 8) -> bytes:
    return _input(corpus(seed, per_version), seed, i, max_frame)


def _input(seeds: list[Seed], seed: int, i: int, max_frame: int) -> bytes:
    rng = random.Random(seed * 1_000_003 + i)
    base = seeds[rng.randrange(len(seeds))]
    if rng.random() < 0.05:
        return base.frame  # the valid frame itself
    return mutate(base, rng, other=seeds[rng.randrange(len(seeds))], max_frame=max_frame)


__all__ = [
    "CODEC_ERRORS", "DECODED", "FUZZ_MAX_FRAME_SIZE", "INCOMPLETE", "OUTCOMES",
    "ContractViolation", "FrameTooLarge", "Seed", "Slot", "classify", "corpus", "every_version",
    "field_slots", "fuzz_one", "input_at", "inputs", "memory_bound", "mutate", "random_request",
    "random_value", "request_frame", "traced_peak", "uvarint",
]
