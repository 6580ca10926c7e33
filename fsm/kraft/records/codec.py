"""Kafka's binary form of a metadata record: the frame and the flexible-version payload,
table-driven from ``schema``.

The frame is an unsigned varint frame type, an unsigned varint record type, an unsigned
varint record version, then the payload. Released Kafka
(``AbstractApiMessageSerde.DEFAULT_FRAME_VERSION``) writes frame type **1** and refuses 0
(the 2.8 preview's); we write 1 too (issue 24), so Kafka's ``kafka-dump-log
--cluster-metadata-decoder`` reads our logs. :func:`decode_record` accepts 1 and seed 004's 0
(what issue 23 wrote).

The version written is the lowest one that carries the value (``schema.lowest_version``); a
tagged field is written only when it differs from its default, tags in increasing order, so
the encoding of a value is canonical: ``encode_record(decode_record(b)) == b`` for every
``b`` that ``encode_record`` made. On decode, unknown tagged fields are skipped, tags may
come in any order, and a known one must fill exactly the size it declares.

Decoding any bytes raises nothing but :class:`MalformedRecord` (a ``ValueError``) naming the
record type, the field and the byte offset; encoding a value out of its field's range
raises ``ValueError`` naming the field.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.schema import (
    BY_CLASS,
    MAX_STRING_BYTES,
    SCHEMAS,
    Array,
    RecordSchema,
    Scalar,
    Struct,
    lowest_version,
)
from fsm.kraft.records.values import (
    LEADER_UNCHANGED,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
    new_partition_change_record,
    new_partition_record,
)
from fsm.kraft.records.wire import Reader, write_compact_length, write_uvarint

MAX_RECORD_BYTES = 1 << 20
"""The largest record (frame included) we encode or decode: 1 MiB."""

FRAME_TYPE = 1
"""What we write: released Kafka's frame type (issue 24; issue 23 wrote seed 004's 0)."""

FRAME_TYPES_READ = frozenset({0, 1})
"""What we read: released Kafka's 1 (ours), and seed 004's 0 (issue 23's logs)."""

Encoder = Callable[[bytearray, Any], None]
Decoder = Callable[[Reader], Any]

class _Bad(ValueError):
    """A value out of its field's range, on its way up: each struct and array it passes
    through prepends its part of the path (``.name``, ``[i]``)."""

    def __init__(self, what: str, path: str = "") -> None:
        super().__init__(what)
        self.what, self.path = what, path


_INTS = {"int8": (">b", 8, True), "int16": (">h", 16, True), "int32": (">i", 32, True),
         "int64": (">q", 64, True), "uint16": (">H", 16, False)}


def _int_codec(kind: str) -> tuple[Encoder, Decoder, int]:
    fmt, bits, signed = _INTS[kind]
    packer = struct.Struct(fmt)
    pack = packer.pack
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def enc(out: bytearray, v: Any) -> None:
        if type(v) is not int or not lo <= v <= hi:  # bool is not an int here
            raise _Bad(f"{kind} out of range or not an int: {v!r}")
        out += pack(v)

    def dec(r: Reader) -> int:
        return r.unpack(packer)  # type: ignore[return-value]

    return enc, dec, packer.size


_FLOAT = struct.Struct(">d")


def _enc_float(out: bytearray, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Bad(f"float64 expected, not {v!r}")
    out += _FLOAT.pack(float(v))


def _dec_float(r: Reader) -> float:
    return r.unpack(_FLOAT)  # type: ignore[return-value]


def _enc_bool(out: bytearray, v: Any) -> None:
    if v is True:
        out.append(1)
    elif v is False:
        out.append(0)
    else:
        raise _Bad(f"bool expected, not {v!r}")


def _dec_bool(r: Reader) -> bool:
    start = r.pos
    byte = r.take(1)[0]
    if byte > 1:
        raise r.fail(f"a bool is 0 or 1, not {byte}", start)
    return byte == 1


def _enc_uuid(out: bytearray, v: Any) -> None:
    if not isinstance(v, bytes) or len(v) != 16:
        raise _Bad(f"a uuid is 16 bytes, not {v!r}")
    out += v


def _dec_uuid(r: Reader) -> bytes:
    if r.remaining < 16:
        raise r.fail(f"a uuid is 16 bytes, only {r.remaining} left")
    return r.take(16)


def _string_codec(nullable: bool) -> tuple[Encoder, Decoder, int]:
    def enc(out: bytearray, v: Any) -> None:
        if v is None and nullable:
            out.append(0)
            return
        if not isinstance(v, str):
            raise _Bad(f"string expected, not {v!r}")
        try:
            raw = v.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _Bad(f"not encodable as UTF-8: {exc}") from None
        if len(raw) > MAX_STRING_BYTES:
            raise _Bad(f"string of {len(raw)} bytes, over {MAX_STRING_BYTES}")
        write_uvarint(out, len(raw) + 1)
        out += raw

    def dec(r: Reader) -> str | None:
        start = r.pos
        n = r.compact_length(1, "string")
        if n is None:
            if nullable:
                return None
            raise r.fail("null (length -1) in a string that is not nullable", start)
        if n > MAX_STRING_BYTES:
            raise r.fail(f"string length {n} over {MAX_STRING_BYTES}", start)
        raw = r.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise r.fail(f"invalid UTF-8: {exc.reason} at string byte {exc.start}",
                         start) from None

    return enc, dec, 1


def _enc_bytes(out: bytearray, v: Any) -> None:
    if not isinstance(v, bytes):
        raise _Bad(f"bytes expected, not {type(v).__name__}")
    write_compact_length(out, len(v))
    out += v


def _dec_bytes(r: Reader) -> bytes:
    start = r.pos
    n = r.compact_length(1, "bytes")
    if n is None:
        raise r.fail("null (length -1) in bytes that are not nullable", start)
    return r.take(n)


def _scalar_codec(t: Scalar) -> tuple[Encoder, Decoder, int]:
    if t.kind in _INTS:
        return _int_codec(t.kind)
    if t.kind == "string":
        return _string_codec(t.nullable)
    return {"bool": (_enc_bool, _dec_bool, 1), "float64": (_enc_float, _dec_float, 8),
            "uuid": (_enc_uuid, _dec_uuid, 16), "bytes": (_enc_bytes, _dec_bytes, 1)}[t.kind]


_INT_CODES = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H"}


def _array_codec(t: Array) -> tuple[Encoder, Decoder, int]:
    enc_item, dec_item, item_bytes = _codec(t.item)
    nullable, null_as_empty = t.nullable, t.null_as_empty
    fixed = _INT_CODES.get(t.item.kind) if isinstance(t.item, Scalar) else None

    def enc(out: bytearray, v: Any) -> None:
        if v is None and nullable:
            out.append(0)
            return
        if not isinstance(v, tuple | list):
            raise _Bad(f"a tuple expected, not {v!r}")
        write_compact_length(out, len(v))
        i = 0
        try:
            for i, item in enumerate(v):  # noqa: B007 -- i names the item on error
                enc_item(out, item)
        except _Bad as bad:
            raise _Bad(bad.what, f"[{i}]{bad.path}") from None

    def dec(r: Reader) -> tuple[Any, ...] | None:
        start = r.pos
        n = r.compact_length(item_bytes, "array")
        if n is None:
            if nullable:
                return None
            if null_as_empty:
                return ()
            raise r.fail("null (length -1) in an array that is not nullable", start)
        if fixed:  # n items of one fixed width: one struct call (n fits: checked above)
            values = struct.unpack_from(f">{n}{fixed}", r.data, r.pos)
            r.pos += n * item_bytes
            return values
        return tuple([dec_item(r) for _ in range(n)])

    return enc, dec, 1


def _struct_codec(t: Struct, version: int = 0, record: str | None = None
                  ) -> tuple[Encoder, Decoder, int]:
    """The payload of one struct at ``version``: its fields in order, then the tagged
    section. ``record``: the top-level record's name, to set the reader's field names as it
    goes (nested structs report the field that holds them)."""
    cls = t.cls
    present = [x for x in t.fields if x.min_version <= version]
    plain = [(x.name, *_codec(x.type)) for x in present if x.tag is None]
    tagged = sorted(((x.tag, x.name, x.default, *_codec(x.type)) for x in present
                     if x.tag is not None), key=lambda e: e[0])
    by_tag = {tag: (name, dec) for tag, name, _, _, dec, _ in tagged}
    min_bytes = sum(size for _, _, _, size in plain) + 1

    def enc(out: bytearray, v: Any) -> None:
        if type(v) is not cls:
            raise _Bad(f"{cls.__name__} expected, not {type(v).__name__}")
        name = ""
        try:
            for name, enc_field, _, _ in plain:
                enc_field(out, getattr(v, name))
            if not tagged:
                out.append(0)
                return
            written = [(tag, name, getattr(v, name), enc_field)
                       for tag, name, default, enc_field, _, _ in tagged
                       if getattr(v, name) != default]
            write_uvarint(out, len(written))
            for tag, name, value, enc_field in written:  # noqa: B007 -- named on error
                body = bytearray()
                enc_field(body, value)
                write_uvarint(out, tag)
                write_uvarint(out, len(body))
                out += body
        except _Bad as bad:
            raise _Bad(bad.what, f".{name}{bad.path}") from None

    index = {x.name: i for i, x in enumerate(t.fields)}
    template = [x.default for x in t.fields]  # absent and tagged fields keep these
    plain_at = [(index[name], name, dec_field) for name, _, dec_field, _ in plain]
    tag_at = {tag: (index[name], name, dec_field) for tag, (name, dec_field) in by_tag.items()}

    def dec(r: Reader) -> Any:
        args = template.copy()
        outer = r.field
        for i, name, dec_field in plain_at:
            if record:
                r.field = name
            args[i] = dec_field(r)
        if record:
            r.field = "tagged fields"
        count_at = r.pos
        count = r.uvarint()
        if count:
            if count * 2 > r.remaining:
                raise r.fail(f"{count} tagged fields cannot fit in {r.remaining} bytes",
                             count_at)
            for _ in range(count):
                start = r.pos
                tag = r.uvarint()
                size = r.uvarint()
                if size > r.remaining:
                    raise r.fail(f"tag {tag}: size {size} runs past the end "
                                 f"({r.remaining} left)", start)
                end = r.pos + size
                known = tag_at.get(tag)
                if known is None:
                    r.pos = end  # unknown: skipped
                    continue
                i, name, dec_field = known
                if record:
                    r.field = name
                args[i] = dec_field(r)
                if r.pos != end:
                    raise r.fail(f"tag {tag} declares {size} bytes, its value took "
                                 f"{r.pos - (end - size)}", start)
        if record:
            r.field = outer
        return cls(*args)

    return enc, dec, min_bytes


def _codec(t: Scalar | Array | Struct) -> tuple[Encoder, Decoder, int]:
    if isinstance(t, Scalar):
        return _scalar_codec(t)
    if isinstance(t, Array):
        return _array_codec(t)
    return _struct_codec(t)


_Row = tuple[RecordSchema, tuple[tuple[Encoder, Decoder, int], ...]]
_TABLE: dict[int, _Row] = {
    s.type_id: (s, tuple(_struct_codec(s.struct, v, s.struct.cls.__name__)
                         for v in range(s.max_version + 1)))
    for s in SCHEMAS.values()
}
_BY_CLASS: dict[type, _Row] = {s.struct.cls: _TABLE[s.type_id] for s in BY_CLASS.values()}


def encode_record(value: Any) -> bytes:
    """The framed bytes of ``value`` (a record of ``values``), at the lowest version that
    carries it. ``ValueError`` naming the field for a value out of its field's range."""
    row = _BY_CLASS.get(type(value))
    if row is None:
        raise ValueError(f"not a metadata record: {type(value).__name__}")
    schema, versions = row
    version = lowest_version(schema, value)
    out = bytearray((FRAME_TYPE, schema.type_id, version))  # each < 128: one byte
    try:
        versions[version][0](out, value)
    except _Bad as bad:
        raise ValueError(f"{type(value).__name__}{bad.path}: {bad.what}") from None
    if len(out) > MAX_RECORD_BYTES:
        raise ValueError(f"{type(value).__name__}: {len(out)} bytes, over MAX_RECORD_BYTES "
                         f"({MAX_RECORD_BYTES})")
    return bytes(out)


# -- the fast path ------------------------------------------------------------------------------
# A snapshot of a large cluster is almost all PartitionRecords (and a TopicRecord per topic) in
# one layout: version 0, one-byte array lengths, no tagged field. Those are read with one
# ``struct`` call per record; anything else -- another layout, a long array, a tagged field,
# a byte out of place, bytes too short or too long -- makes the fast reader answer None and
# the record goes through the table-driven path above, which decides and names what is
# wrong. So the fast path accepts exactly what the strict one accepts in that layout and
# gives the same value (``tests/unit/kraft/records/test_records_fast_path.py`` holds it to
# that, differentially); it never raises.

_Layout = tuple[int, int, int, int, int, int, Callable[..., tuple[Any, ...]], int, int, int,
                int]
_LAYOUTS: dict[int, _Layout] = {}
"""PartitionRecord layouts by record size and replica count (bounded): where the other three
array lengths are and what they hold, the payload's unpacker, where each array ends in it."""
_MAX_LAYOUTS = 4096


def _partition_layout(data: bytes) -> _Layout | None:
    """The layout of ``data`` (a PartitionRecord v0 behind its frame), if common; remembered
    for the next record of its size and replica count."""
    try:
        b0 = data[23]  # replicas: not nullable, 0-126 items
        if not 0 < b0 < 0x80:
            return None
        p1 = 24 + 4 * (b0 - 1)
        b1 = data[p1]  # isr: not nullable
        if not 0 < b1 < 0x80:
            return None
        p2 = p1 + 1 + 4 * (b1 - 1)
        b2 = data[p2]  # removing replicas: null reads as ()
        if b2 >= 0x80:
            return None
        p3 = p2 + 1 + 4 * (b2 - 1 if b2 else 0)
        b3 = data[p3]  # adding replicas: likewise
        if b3 >= 0x80:
            return None
    except IndexError:
        return None
    size = p3 + 1 + 4 * (b3 - 1 if b3 else 0) + 13  # three int32s, a tagged-field count
    if len(data) != size:
        return None
    r, i = b0 - 1, b1 - 1
    rm, ad = (b2 - 1 if b2 else 0), (b3 - 1 if b3 else 0)
    a = 2 + r
    unpack = struct.Struct(f">i16sx{r}ix{i}ix{rm}ix{ad}i3ix").unpack_from
    layout = (p1, b1, p2, b2, p3, b3, unpack, a, a + i, a + i + rm, a + i + rm + ad)
    if len(_LAYOUTS) < _MAX_LAYOUTS:
        _LAYOUTS.setdefault(size << 8 | b0, layout)
    return layout


def _fast_partition(data: bytes) -> Any:
    """A PartitionRecord v0 of the common layout (see above), or None."""
    size = len(data)
    layout = _LAYOUTS.get(size << 8 | data[23]) if size > 39 else None
    if layout is None or data[layout[0]] != layout[1] or data[layout[2]] != layout[3] \
            or data[layout[4]] != layout[5]:
        layout = _partition_layout(data)
        if layout is None:
            return None
    if data[-1]:  # a tagged field
        return None
    _, _, _, _, _, _, unpack, a, b, c, d = layout
    v = unpack(data, 3)
    return new_partition_record(v[0], v[1], v[2:a], v[a:b], v[b:c], v[c:d], v[d], v[d + 1],
                                v[d + 2])


def _fast_topic(data: bytes) -> Any:
    """A TopicRecord v0 with a name under 127 bytes and no tagged field, or None."""
    if len(data) < 21:
        return None
    n = data[3] - 1  # a compact string's length; 0x80 and up: a longer varint
    if not 0 <= n < 0x7F or len(data) != n + 21 or data[n + 20]:
        return None
    try:
        name = data[4:4 + n].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return TopicRecord(name, data[4 + n:20 + n])


_FAST: dict[bytes, Callable[[bytes], Any]] = {
    bytes((frame, type_id, 0)): reader
    for frame in FRAME_TYPES_READ
    for type_id, reader in ((PartitionRecord.TYPE, _fast_partition),
                            (TopicRecord.TYPE, _fast_topic))
}
"""The first three bytes (frame type, record type, version 0) -> the fast reader."""


# -- the fast path of PartitionChangeRecord ----------------------------------------------------
# What a broker replays when a broker leading 10,000 partitions shuts down or is fenced: one
# PartitionChangeRecord v0 per partition (``fsm.kraft.controller.partition_change.change``),
# carrying only tagged fields, in three layouts -- the ISR alone (tag 0: a follower left),
# the leader alone (tag 1: a leaderless partition led again) or both, in that order (a
# leadership moved, the ISR shrunk; leader -1 when no one is left to lead). Read here when
# the ISR's array length and every size fit one byte and the bytes end where that layout
# ends; anything else (reassignment tags 2-4, an unknown or repeated tag, tags out of order,
# a null ISR, a longer varint, bytes too short or too long) answers None and goes through the
# table, as above (``tests/unit/kraft/records/test_records_change_fast_path.py``).

_CHANGE_HEAD = struct.Struct(">i16s")  # partition id, topic id: after the 3-byte frame
_INT32 = struct.Struct(">i")
_ISRS: dict[int, Callable[..., tuple[int, ...]]] = {
    n: struct.Struct(f">{n}i").unpack_from for n in range(0x7F)}
"""The ISR's unpacker by its length (0-126: a one-byte compact length)."""


def _fast_partition_change(data: bytes) -> Any:
    """A PartitionChangeRecord v0 in one of the layouts above, or None."""
    size = len(data)
    if size < 27:  # frame 3, partition 4, topic 16, tag count 1, tag 1, size 1, one more
        return None
    count, tag = data[23], data[24]
    if tag == 0 and (count == 1 or count == 2):
        n = data[26] - 1  # the ISR's compact length: 0 (null) and 0x80 up are the table's
        if not 0 <= n < 0x7F or data[25] != 4 * n + 1:
            return None
        end = 27 + 4 * n
        if count == 1:
            if size != end:
                return None
            leader = LEADER_UNCHANGED
        elif size != end + 6 or data[end] != 1 or data[end + 1] != 4:
            return None
        else:
            leader = _INT32.unpack_from(data, end + 2)[0]
        partition_id, topic_id = _CHANGE_HEAD.unpack_from(data, 3)
        return new_partition_change_record(partition_id, topic_id, _ISRS[n](data, 27), leader)
    if tag == 1 and count == 1 and size == 30 and data[25] == 4:
        partition_id, topic_id = _CHANGE_HEAD.unpack_from(data, 3)
        return new_partition_change_record(partition_id, topic_id, None,
                                           _INT32.unpack_from(data, 26)[0])
    return None


_FAST.update({bytes((frame, PartitionChangeRecord.TYPE, 0)): _fast_partition_change
              for frame in FRAME_TYPES_READ})


def decode_record(data: bytes | bytearray | memoryview) -> Any:
    """The record of framed bytes; :class:`MalformedRecord` for anything else."""
    if type(data) is not bytes:
        data = bytes(data)
    fast = _FAST.get(data[:3])
    if fast is not None:
        value = fast(data)
        if value is not None:
            return value
    return decode_record_strict(data)


def decode_record_strict(data: bytes | bytearray | memoryview) -> Any:
    """:func:`decode_record` without the fast path: every record through the table."""
    data = bytes(data)
    r = Reader(data)
    if len(data) > MAX_RECORD_BYTES:
        raise r.fail(f"{len(data)} bytes, over MAX_RECORD_BYTES ({MAX_RECORD_BYTES})", 0)
    at = r.pos
    frame = r.uvarint()
    if frame not in FRAME_TYPES_READ:
        raise r.fail(f"unknown frame type {frame}", at)
    r.field = "record type"
    at = r.pos
    type_id = r.uvarint()
    row = _TABLE.get(type_id)
    if row is None:
        raise r.fail(f"unknown record type {type_id}", at)
    schema, versions = row
    r.record = schema.struct.cls.__name__
    r.field = "version"
    at = r.pos
    version = r.uvarint()
    if version >= len(versions):
        raise r.fail(f"unsupported version {version} (0-{schema.max_version})", at)
    value = versions[version][1](r)
    if r.remaining:
        r.field = "end"
        raise r.fail(f"{r.remaining} trailing bytes")
    return value


def record_version(value: Any) -> int:
    """The version :func:`encode_record` writes ``value`` at."""
    return lowest_version(BY_CLASS[type(value)], value)


__all__ = ["FRAME_TYPE", "FRAME_TYPES_READ", "MAX_RECORD_BYTES", "MalformedRecord",
           "decode_record", "decode_record_strict", "encode_record", "record_version"]
