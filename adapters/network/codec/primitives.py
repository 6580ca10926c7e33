"""Kafka's primitive types: big-endian integers, unsigned varints, and a bounds-checked reader.

Every read goes through :class:`Reader`, which raises :class:`DecodeError` instead of
``IndexError`` or ``struct.error``.
"""

from __future__ import annotations

import struct

from adapters.network.codec.errors import DecodeError, EncodeError

INT_FORMATS: dict[int, struct.Struct] = {
    1: struct.Struct(">b"),
    2: struct.Struct(">h"),
    4: struct.Struct(">i"),
    8: struct.Struct(">q"),
}
UINT32_MAX = 2**32 - 1
MAX_VARINT_BYTES = 5  # an unsigned varint of Kafka's (u32) takes at most 5 bytes


def int_bounds(width: int) -> tuple[int, int]:
    bits = 8 * width
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def write_int(out: bytearray, width: int, value: int) -> None:
    lo, hi = int_bounds(width)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise EncodeError(f"int{8 * width} out of range or not an int: {value!r}")
    out += INT_FORMATS[width].pack(value)


def write_uvarint(out: bytearray, value: int) -> None:
    if not 0 <= value <= UINT32_MAX:
        raise EncodeError(f"unsigned varint out of range: {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


class Reader:
    """A cursor over one frame's bytes; every read checks what is left."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self.data = bytes(data)
        self.pos = pos

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int) -> bytes:
        if n < 0:
            raise DecodeError(f"negative length {n}")
        if n > self.remaining:
            raise DecodeError(
                f"truncated: need {n} bytes at offset {self.pos}, {self.remaining} left"
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def read_int(self, width: int) -> int:
        return INT_FORMATS[width].unpack(self.take(width))[0]

    def read_uvarint(self) -> int:
        value = 0
        for i in range(MAX_VARINT_BYTES):
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if value > UINT32_MAX:
                    raise DecodeError(f"unsigned varint over 32 bits at offset {self.pos}")
                return value
        raise DecodeError(f"unsigned varint longer than {MAX_VARINT_BYTES} bytes")

    def expect_end(self) -> None:
        if self.remaining:
            raise DecodeError(f"{self.remaining} trailing bytes at offset {self.pos}")
