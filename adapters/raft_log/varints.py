"""Kafka's zigzag varints (signed varint and varlong, protocol buffers' encoding) as the
records of a batch v2 use them: lengths, deltas and the header count.

Small values are the common case (offset deltas within a batch, record lengths), so the
encodings of 0..``CACHED`` are precomputed and :func:`read_varint` returns a one-byte value
without a loop."""

from __future__ import annotations

CACHED = 1 << 14
MAX_VARLONG_BYTES = 10


def zigzag_bytes(value: int) -> bytes:
    """The zigzag varint of ``value`` (a signed 64-bit integer)."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of range: {value}")
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


SMALL: tuple[bytes, ...] = tuple(zigzag_bytes(i) for i in range(CACHED))
"""``SMALL[i]`` is the varint of ``i`` for 0 <= i < CACHED."""


def varint(value: int) -> bytes:
    if 0 <= value < CACHED:
        return SMALL[value]
    return zigzag_bytes(value)


def read_varint(data: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """The zigzag varint at ``pos`` and the position after it; ``ValueError`` if it runs
    past ``end`` or over 10 bytes."""
    if pos >= end:
        raise ValueError(f"varint at {pos} runs past the end ({end})")
    b = data[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    z = b & 0x7F
    shift = 7
    p = pos + 1
    while True:
        if p >= end:
            raise ValueError(f"varint at {pos} runs past the end ({end})")
        if p - pos >= MAX_VARLONG_BYTES:
            raise ValueError(f"varint at {pos} is over {MAX_VARLONG_BYTES} bytes")
        b = data[p]
        z |= (b & 0x7F) << shift
        p += 1
        if b < 0x80:
            return (z >> 1) ^ -(z & 1), p
        shift += 7
