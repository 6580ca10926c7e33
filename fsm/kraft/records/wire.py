"""The few primitives of Kafka's flexible-version encoding the metadata records use:
big-endian integers, unsigned varints (at most 5 bytes, 32 bits), compact lengths (unsigned
varint N+1, 0 = null) and a bounds-checked reader.

Every read goes through :class:`Reader`, which raises :class:`MalformedRecord` (naming the
record, the field and the offset it is at) instead of ``IndexError`` or ``struct.error``.
The records use no signed varint or varlong, so there is none here.
"""

from __future__ import annotations

import struct

from fsm.kraft.records.errors import MalformedRecord

MAX_VARINT_BYTES = 5
"""An unsigned varint of Kafka's holds a u32: at most 5 bytes."""

UINT32_MAX = 2**32 - 1


def write_uvarint(out: bytearray, value: int) -> None:
    if not 0 <= value <= UINT32_MAX:
        raise ValueError(f"unsigned varint out of range: {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_compact_length(out: bytearray, length: int | None) -> None:
    """``None`` (null) is 0, a length N is N+1."""
    write_uvarint(out, 0 if length is None else length + 1)


class Reader:
    """A cursor over one record's bytes. ``record`` and ``field`` say where we are, for the
    error messages; the codec sets them as it goes."""

    __slots__ = ("data", "field", "pos", "record")

    def __init__(self, data: bytes, record: str = "record") -> None:
        self.data = data
        self.pos = 0
        self.record = record
        self.field = "frame"

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def fail(self, what: str, at: int | None = None) -> MalformedRecord:
        offset = self.pos if at is None else at
        return MalformedRecord(f"{self.record}, field {self.field}, offset {offset}: {what}")

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.fail(f"truncated: need {n} bytes, {self.remaining} left")
        start = self.pos
        self.pos = start + n
        return self.data[start:self.pos]

    def unpack(self, fmt: struct.Struct) -> int | float:
        start = self.pos
        if fmt.size > len(self.data) - start:
            raise self.fail(f"truncated: need {fmt.size} bytes, {self.remaining} left")
        self.pos = start + fmt.size
        return fmt.unpack_from(self.data, start)[0]

    def uvarint(self) -> int:
        start = self.pos
        data = self.data
        value = 0
        for i in range(MAX_VARINT_BYTES):
            if self.pos >= len(data):
                raise self.fail("truncated unsigned varint", start)
            byte = data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if value > UINT32_MAX:
                    raise self.fail("unsigned varint over 32 bits", start)
                return value
        raise self.fail(f"unsigned varint longer than {MAX_VARINT_BYTES} bytes", start)

    def compact_length(self, min_item_bytes: int, what: str) -> int | None:
        """A compact length: ``None`` for null, else N, refused when N items of at least
        ``min_item_bytes`` each cannot fit in what is left (no allocation the bytes cannot
        back)."""
        start = self.pos
        raw = self.uvarint()
        if raw == 0:
            return None
        n = raw - 1
        if n * min_item_bytes > len(self.data) - self.pos:
            raise self.fail(f"{what} length {n} runs past the end ({self.remaining} bytes "
                            "left)", start)
        return n
