"""The one encoder/decoder: ``encode(schema, value)``, ``decode(schema, data)``.

Each concrete schema type is compiled once (cached) into a pair of closures, so encoding a
LeaderAndIsr of 10,000 partitions does not re-dispatch on the schema at every value; arrays
of integers are packed and unpacked in one ``struct`` call. Decoders work on
``(data, pos) -> (value, pos)`` and check every length against the bytes left, raising only
:class:`DecodeError`.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Mapping
from typing import Any

from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.primitives import (
    INT_FORMATS,
    Reader,
    int_bounds,
    write_int,
    write_uvarint,
)
from adapters.network.codec.schema import (
    MAX_STRING_BYTES,
    NO_DEFAULT,
    Array,
    Bool,
    Bytes,
    Field,
    Int,
    Str,
    Struct,
    TaggedFields,
    Type,
    UInt16,
    UuidType,
)

Encoder = Callable[[bytearray, Any], None]
Decoder = Callable[[bytes, int], tuple[Any, int]]
_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}
_ABSENT = object()
_COUNT = INT_FORMATS[4]
_UINT16 = struct.Struct(">H")
_LENGTH_PACK = {w: INT_FORMATS[w].pack for w in (2, 4)}
_LENGTH_MAX = {w: int_bounds(w)[1] for w in (2, 4)}


_BY_IDENTITY_MAX = 4096
_encoders_by_id: dict[int, tuple[Type, Encoder]] = {}
_decoders_by_id: dict[int, tuple[Type, Decoder]] = {}


def _by_identity(memo: dict[int, tuple[Type, Any]], compile_: Callable[[Type], Any],
                 schema: Type) -> Any:
    """``compile_(schema)`` (``encoder`` or ``decoder``) looked up by the schema object's
    identity first: their caches hash the whole schema tree (frozen dataclasses do not keep
    their hash), which for a Metadata response cost more than answering from the cached bytes.
    Each entry keeps its schema alive, so an identity is never reused while it is a key;
    bounded."""
    hit = memo.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(memo) >= _BY_IDENTITY_MAX:
        memo.clear()
    compiled = compile_(schema)
    memo[id(schema)] = (schema, compiled)
    return compiled


def _encoder_for(schema: Type) -> Encoder:
    return _by_identity(_encoders_by_id, encoder, schema)  # type: ignore[no-any-return]


def _decoder_for(schema: Type) -> Decoder:
    return _by_identity(_decoders_by_id, decoder, schema)  # type: ignore[no-any-return]


def encode(schema: Type, value: Any) -> bytes:
    out = bytearray()
    _encoder_for(schema)(out, value)
    return bytes(out)


def encode_into(out: bytearray, schema: Type, value: Any) -> None:
    _encoder_for(schema)(out, value)


def decode(schema: Type, data: bytes | bytearray | memoryview) -> Any:
    """Decodes exactly ``data``; trailing bytes are a :class:`DecodeError`."""
    data = bytes(data)
    value, pos = _decoder_for(schema)(data, 0)
    if pos != len(data):
        raise DecodeError(f"{len(data) - pos} trailing bytes at offset {pos}")
    return value


def decode_from(r: Reader, schema: Type) -> Any:
    """Decodes one value at the reader's position and advances it."""
    value, r.pos = _decoder_for(schema)(r.data, r.pos)
    return value


def _need(data: bytes, pos: int, n: int) -> None:
    if n > len(data) - pos:
        raise DecodeError(f"truncated: need {n} bytes at offset {pos}, {len(data) - pos} left")


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    if pos < len(data) and data[pos] < 0x80:  # one byte: every compact length under 127
        return data[pos], pos + 1
    r = Reader(data, pos)
    value = r.read_uvarint()
    return value, r.pos


# ---------------------------------------------------------------- compiling encoders


@functools.cache
def encoder(t: Type) -> Encoder:
    match t:
        case Int(width=width):
            return functools.partial(_encode_int, INT_FORMATS[width].pack, *int_bounds(width))
        case Bool():
            return _encode_bool
        case UInt16():
            return _encode_uint16
        case UuidType():
            return _encode_uuid
        case Str() | Bytes():
            return functools.partial(_encode_blob, t)
        case Array(item=Int(width=width)):
            return functools.partial(_encode_int_array, t, width)
        case Array(item=item):
            return functools.partial(_encode_array, t, encoder(item))
        case Struct(fields=fields):
            return functools.partial(_encode_struct, _encode_steps(fields))
        case TaggedFields():
            return _encode_tags
    raise TypeError(f"not a schema type: {t!r}")


class _IntRun:
    """Consecutive fixed-width integer fields of a struct, packed with one ``pack`` call;
    a value that is not a plain int, or out of range, goes through the per-field encoders
    (which raise the precise ``EncodeError``)."""

    __slots__ = ("fields", "pack")

    def __init__(self, fields: tuple[tuple[Field, Encoder], ...]) -> None:
        self.fields = fields
        self.pack = struct.Struct(
            ">" + "".join(_INT_CODES[f.type.width] for f, _ in fields)).pack  # type: ignore[attr-defined]


def _encode_steps(fields: tuple[Field, ...]) -> tuple[tuple[Field, Encoder] | _IntRun, ...]:
    steps: list[tuple[Field, Encoder] | _IntRun] = []
    run: list[tuple[Field, Encoder]] = []
    for f in (*fields, None):
        if f is not None and isinstance(f.type, Int) and f.default is NO_DEFAULT:
            run.append((f, encoder(f.type)))
            continue
        if len(run) > 1:
            steps.append(_IntRun(tuple(run)))
        else:
            steps.extend(run)
        run = []
        if f is not None:
            steps.append((f, encoder(f.type)))
    return tuple(steps)


def _encode_int(pack: Callable[[int], bytes], lo: int, hi: int, out: bytearray, v: Any) -> None:
    if v.__class__ is not int and (isinstance(v, bool) or not isinstance(v, int)):
        raise EncodeError(f"int expected, got {v!r}")
    if not lo <= v <= hi:
        raise EncodeError(f"{v} outside {lo}..{hi}")
    out += pack(v)


def _encode_bool(out: bytearray, value: Any) -> None:
    if not isinstance(value, bool):
        raise EncodeError(f"bool expected, got {value!r}")
    out.append(1 if value else 0)


def _encode_uint16(out: bytearray, value: Any) -> None:
    if value.__class__ is not int or not 0 <= value <= 0xFFFF:
        raise EncodeError(f"uint16 expected (0..65535), got {value!r}")
    out += _UINT16.pack(value)


def _encode_uuid(out: bytearray, value: Any) -> None:
    if not isinstance(value, bytes | bytearray) or len(value) != 16:
        raise EncodeError(f"a uuid is 16 bytes, got {value!r}")
    out += value


def _encode_struct(steps: tuple[tuple[Field, Encoder] | _IntRun, ...], out: bytearray,
                   value: Any) -> None:
    if not isinstance(value, Mapping):
        raise EncodeError(f"mapping expected for a struct, got {type(value).__name__}")
    for step in steps:
        if step.__class__ is _IntRun:
            ints = [value.get(f.name, _ABSENT) for f, _ in step.fields]  # type: ignore[union-attr]
            if all(v.__class__ is int for v in ints):
                try:
                    out += step.pack(*ints)  # type: ignore[union-attr]
                    continue
                except struct.error:
                    pass  # out of range: the field's own encoder says which
            _encode_struct(step.fields, out, value)  # type: ignore[union-attr]
            continue
        f, enc = step  # type: ignore[misc]
        v = value.get(f.name, _ABSENT)
        if v is not _ABSENT:
            enc(out, v)
        elif f.default is not NO_DEFAULT:
            enc(out, f.default)
        elif isinstance(f.type, TaggedFields):
            out.append(0)
        else:
            raise EncodeError(f"missing field {f.name!r}")


class Encoded:
    """An array value encoded once for its schema type, written as is wherever an array of
    that type is expected (``schema`` must be equal to the field's type, or ``encode``
    raises). The controller sends the same LeaderAndIsr and UpdateMetadata partition states
    of a 10,000-partition event to every broker, stamped with each one's broker epoch: the
    arrays are encoded once and shared (``adapters.network.shared_encoding``)."""

    __slots__ = ("schema", "data")

    def __init__(self, schema: Array, value: Any) -> None:
        self.schema = schema
        self.data = encode(schema, value)


def _encode_array(t: Array, item: Encoder, out: bytearray, value: Any) -> None:
    if value.__class__ is Encoded:
        if value.schema is not t and value.schema != t:
            raise EncodeError(f"an array encoded as {value.schema!r} where {t!r} is expected")
        out += value.data
        return
    if _encode_length(out, t.nullable, t.compact, 4, value, (list, tuple)):
        for element in value:
            item(out, element)


def _encode_int_array(t: Array, width: int, out: bytearray, value: Any) -> None:
    if not _encode_length(out, t.nullable, t.compact, 4, value, (list, tuple)):
        return
    if bool in map(type, value):  # struct would take True for 1
        raise EncodeError(f"int{8 * width} expected, got a bool in {value!r}")
    try:
        out += struct.pack(f">{len(value)}{_INT_CODES[width]}", *value)
    except struct.error:
        lo, hi = int_bounds(width)
        raise EncodeError(f"int{8 * width} array has a value outside {lo}..{hi}") from None


def _encode_blob(t: Str | Bytes, out: bytearray, value: Any) -> None:
    is_str = isinstance(t, Str)
    if is_str and isinstance(value, str):
        try:
            value = value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise EncodeError(f"string not encodable as UTF-8: {e}") from None
        if len(value) > MAX_STRING_BYTES:
            raise EncodeError(f"string of {len(value)} bytes is over {MAX_STRING_BYTES}")
    elif not is_str and isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value)
    elif value is not None:
        raise EncodeError(f"{'str' if is_str else 'bytes'} expected, got {value!r}")
    if _encode_length(out, t.nullable, t.compact, 2 if is_str else 4, value, (bytes,)):
        out += value


def _encode_length(
    out: bytearray, nullable: bool, compact: bool, width: int, value: Any, kinds: tuple[type, ...]
) -> bool:
    """Writes the length prefix; returns False when the value was null."""
    if value is None:
        if not nullable:
            raise EncodeError("null for a non-nullable field")
        if compact:
            out.append(0)
        else:
            write_int(out, width, -1)
        return False
    if not isinstance(value, kinds):
        raise EncodeError(f"{kinds[0].__name__} expected, got {type(value).__name__}")
    if compact:
        write_uvarint(out, len(value) + 1)
    elif len(value) <= _LENGTH_MAX[width]:
        out += _LENGTH_PACK[width](len(value))
    else:
        raise EncodeError(f"{len(value)} elements or bytes do not fit an int{8 * width} length")
    return True


def _encode_tags(out: bytearray, tags: Any) -> None:
    if not isinstance(tags, Mapping):
        raise EncodeError(f"tagged fields must be a mapping of tag -> bytes, got {tags!r}")
    write_uvarint(out, len(tags))
    for tag in sorted(tags):
        raw = tags[tag]
        if not isinstance(tag, int) or not isinstance(raw, bytes | bytearray):
            raise EncodeError(f"tagged field {tag!r} must be int -> bytes")
        write_uvarint(out, tag)
        write_uvarint(out, len(raw))
        out += raw


# ---------------------------------------------------------------- compiling decoders


@functools.cache
def decoder(t: Type) -> Decoder:
    match t:
        case Int(width=width):
            return functools.partial(_decode_int, INT_FORMATS[width])
        case Bool():
            return _decode_bool
        case UInt16():
            return _decode_uint16
        case UuidType():
            return _decode_uuid
        case Str():
            return functools.partial(_decode_str, t)
        case Bytes():
            return functools.partial(_decode_bytes, t)
        case Array(item=Int(width=width)):
            return functools.partial(_decode_int_array, t, width)
        case Array(item=item):
            return functools.partial(_decode_array, t, decoder(item), min_size(item))
        case Struct(fields=fields):
            return functools.partial(_decode_struct, _decode_steps(fields))
        case TaggedFields():
            return _decode_tags
    raise TypeError(f"not a schema type: {t!r}")


def _decode_steps(fields: tuple[Field, ...]) -> tuple[tuple[Any, ...], ...]:
    """A struct's decoding plan: each run of consecutive fixed-width integer fields becomes
    one ``(names, struct.Struct)`` step read with a single ``unpack_from``; every other field
    is a ``(name, decoder)`` step."""
    steps: list[tuple[Any, ...]] = []
    run: list[Field] = []

    def flush() -> None:
        if len(run) == 1:
            steps.append((run[0].name, decoder(run[0].type)))
        elif run:
            fmt = ">" + "".join(_INT_CODES[f.type.width] for f in run)  # type: ignore[attr-defined]
            steps.append((tuple(f.name for f in run), struct.Struct(fmt)))
        run.clear()

    for f in fields:
        if isinstance(f.type, Int):
            run.append(f)
            continue
        flush()
        steps.append((f.name, decoder(f.type)))
    flush()
    return tuple(steps)


def _decode_int(fmt: struct.Struct, data: bytes, pos: int) -> tuple[int, int]:
    _need(data, pos, fmt.size)
    return fmt.unpack_from(data, pos)[0], pos + fmt.size


def _decode_bool(data: bytes, pos: int) -> tuple[bool, int]:
    _need(data, pos, 1)
    return data[pos] != 0, pos + 1


def _decode_uint16(data: bytes, pos: int) -> tuple[int, int]:
    _need(data, pos, 2)
    return _UINT16.unpack_from(data, pos)[0], pos + 2


def _decode_uuid(data: bytes, pos: int) -> tuple[bytes, int]:
    _need(data, pos, 16)
    return data[pos : pos + 16], pos + 16


def _decode_length(
    t: Str | Bytes | Array, data: bytes, pos: int, width: int
) -> tuple[int | None, int]:
    if t.compact:
        n, pos = _uvarint(data, pos)
        n -= 1
    else:
        _need(data, pos, width)
        n = INT_FORMATS[width].unpack_from(data, pos)[0]
        pos += width
    if n == -1:
        if not t.nullable:
            raise DecodeError(f"null at offset {pos} for a non-nullable field")
        return None, pos
    if n < -1:
        raise DecodeError(f"negative length {n} at offset {pos}")
    if n > len(data) - pos:
        raise DecodeError(f"length {n} beyond the frame ({len(data) - pos} bytes left)")
    return n, pos


def _decode_str(t: Str, data: bytes, pos: int) -> tuple[str | None, int]:
    n, pos = _decode_length(t, data, pos, 2)
    if n is None:
        return None, pos
    if n > MAX_STRING_BYTES:
        raise DecodeError(f"string length {n} over {MAX_STRING_BYTES}")
    try:
        return data[pos : pos + n].decode("utf-8"), pos + n
    except UnicodeDecodeError as e:
        raise DecodeError(f"invalid UTF-8: {e}") from None


def _decode_bytes(t: Bytes, data: bytes, pos: int) -> tuple[bytes | None, int]:
    n, pos = _decode_length(t, data, pos, 4)
    if n is None:
        return None, pos
    return data[pos : pos + n], pos + n


def _decode_int_array(t: Array, width: int, data: bytes, pos: int) -> tuple[list[int] | None, int]:
    if t.compact or len(data) - pos < 4:
        n, pos = _decode_length(t, data, pos, 4)
    else:  # the common case inline: a classic int32 count
        n = _COUNT.unpack_from(data, pos)[0]
        pos += 4
        if n < 0:
            if n == -1 and t.nullable:
                return None, pos
            raise DecodeError(f"null at offset {pos} for a non-nullable field" if n == -1
                              else f"negative length {n} at offset {pos}")
    if n is None:
        return None, pos
    size = n * width
    if size > len(data) - pos:
        raise DecodeError(f"truncated: need {size} bytes at offset {pos}, "
                          f"{len(data) - pos} left")
    return list(struct.unpack_from(f">{n}{_INT_CODES[width]}", data, pos)), pos + size


def _decode_array(
    t: Array, item: Decoder, item_size: int, data: bytes, pos: int
) -> tuple[list[Any] | None, int]:
    n, pos = _decode_length(t, data, pos, 4)
    if n is None:
        return None, pos
    if n * item_size > len(data) - pos:
        raise DecodeError(f"array of {n} elements does not fit in {len(data) - pos} bytes")
    out = []
    for _ in range(n):
        value, pos = item(data, pos)
        out.append(value)
    return out, pos


def _decode_struct(
    steps: tuple[tuple[Any, ...], ...], data: bytes, pos: int
) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    for name, dec in steps:
        if dec.__class__ is struct.Struct:
            if dec.size > len(data) - pos:
                raise DecodeError(f"truncated: need {dec.size} bytes at offset {pos}, "
                                  f"{len(data) - pos} left")
            out.update(zip(name, dec.unpack_from(data, pos)))  # noqa: B905 -- same length
            pos += dec.size
        else:
            out[name], pos = dec(data, pos)
    return out, pos


def _decode_tags(data: bytes, pos: int) -> tuple[dict[int, bytes], int]:
    count, pos = _uvarint(data, pos)
    if count * 2 > len(data) - pos:
        raise DecodeError(f"{count} tagged fields do not fit in {len(data) - pos} bytes")
    tags: dict[int, bytes] = {}
    last = -1
    for _ in range(count):
        tag, pos = _uvarint(data, pos)
        if tag <= last:
            raise DecodeError(f"tagged field {tag} out of order (after {last})")
        size, pos = _uvarint(data, pos)
        _need(data, pos, size)
        tags[tag], pos = data[pos : pos + size], pos + size
        last = tag
    return tags, pos


@functools.cache
def min_size(t: Type) -> int:
    """Fewest bytes any value of ``t`` takes (at least 1), to bound array counts."""
    match t:
        case Int(width=width):
            return width
        case UInt16():
            return 2
        case UuidType():
            return 16
        case Str() | Bytes() | Array():
            return 1 if t.compact else (2 if isinstance(t, Str) else 4)
        case Struct(fields=fields):
            return max(1, sum(min_size(f.type) for f in fields))
        case _:
            return 1
