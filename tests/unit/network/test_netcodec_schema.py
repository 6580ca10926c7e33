"""Primitives and the encoder/decoder's refusals: only DecodeError/EncodeError escape."""

from __future__ import annotations

import pytest

from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.primitives import Reader, write_uvarint
from adapters.network.codec.schema import (
    BOOL,
    COMPACT_NULLABLE_STRING,
    COMPACT_STRING,
    INT8,
    INT16,
    INT32,
    NULLABLE_STRING,
    STRING,
    TAG_BUFFER,
    Array,
    Bytes,
    Field,
    struct,
)
from adapters.network.codec.wire import decode, encode


@pytest.mark.parametrize(
    ("value", "hex_bytes"),
    [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (2**32 - 1, "ffffffff0f")],
)
def test_uvarint(value: int, hex_bytes: str) -> None:
    out = bytearray()
    write_uvarint(out, value)
    assert out.hex() == hex_bytes
    assert Reader(out).read_uvarint() == value


def test_uvarint_refusals() -> None:
    with pytest.raises(DecodeError):
        Reader(b"\x80\x80\x80\x80\x80\x01").read_uvarint()  # six bytes
    with pytest.raises(DecodeError):
        Reader(b"\xff\xff\xff\xff\x1f").read_uvarint()  # over 32 bits
    with pytest.raises(DecodeError):
        Reader(b"\x80").read_uvarint()  # truncated
    with pytest.raises(EncodeError):
        write_uvarint(bytearray(), -1)


def test_string_encodings() -> None:
    assert encode(STRING, "c") == b"\x00\x01c"
    assert encode(NULLABLE_STRING, None) == b"\xff\xff"
    assert encode(COMPACT_STRING, "c") == b"\x02c"
    assert encode(COMPACT_NULLABLE_STRING, None) == b"\x00"
    assert encode(TAG_BUFFER, {}) == b"\x00"
    assert encode(TAG_BUFFER, {1: b"x", 0: b""}) == b"\x02\x00\x00\x01\x01x"
    assert decode(BOOL, b"\x07") is True  # any non-zero byte reads as true


@pytest.mark.parametrize(
    ("schema", "hex_bytes"),
    [
        (STRING, "ffff"),  # null for a non-nullable string
        (STRING, "fffe"),  # negative length
        (STRING, "0005616263"),  # length beyond the frame
        (STRING, "0002c328"),  # invalid UTF-8
        (STRING, "00016162"),  # trailing byte
        (COMPACT_STRING, "00"),  # compact null for a non-nullable string
        (INT32, "000000"),  # truncated
        (Array(INT32), "ffffffff"),  # null for a non-nullable array
        (Array(INT32, nullable=True), "fffffffe"),  # negative count
        (Array(INT32), "7fffffff00000001"),  # count beyond the frame: refused before looping
        (Array(INT32, compact=True), "00"),
        (Bytes(), "80000000"),
        (TAG_BUFFER, "020100010000"),  # tags out of order
        (TAG_BUFFER, "01000500"),  # tag size beyond the frame
        (TAG_BUFFER, "ffffffff0f"),  # tag count beyond the frame
    ],
)
def test_decode_refusals(schema: object, hex_bytes: str) -> None:
    with pytest.raises(DecodeError):
        decode(schema, bytes.fromhex(hex_bytes))  # type: ignore[arg-type]


S = struct(Field("a", INT8), Field("b", STRING, default="d"))


@pytest.mark.parametrize(
    "value",
    [
        {"b": "x"},  # missing field without default
        {"a": 128},  # out of range
        {"a": True},  # bool is not an int here
        {"a": 1, "b": None},  # null for non-nullable
        {"a": 1, "b": "\ud800"},  # not encodable as UTF-8
        {"a": 1, "b": "x" * 0x8000},  # too long
        [1],  # not a mapping
    ],
)
def test_encode_refusals(value: object) -> None:
    with pytest.raises(EncodeError):
        encode(S, value)


def test_defaults_and_extra_keys() -> None:
    assert encode(S, {"a": 1, "zzz": 2}) == b"\x01\x00\x01d"
    assert encode(struct(Field("x", INT16), Field("tagged_fields", TAG_BUFFER)), {"x": 1}) == (
        b"\x00\x01\x00"
    )
