"""The decoder's fast path (PartitionRecord and TopicRecord v0 in their common layout, read
with one ``struct`` call) is held to the table-driven path differentially: for every input
-- records as encoded, the same bytes mutated, arbitrary bytes behind the fast path's
prefix -- ``decode_record`` and ``decode_record_strict`` give equal values of the same
type, or both raise ``MalformedRecord`` with the same message. The fast path must also be
*taken* for the common layout (else these tests would pass with it switched off), and the
builders it and the image use make the same immutable values as the dataclasses'
constructors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from records_strategies import record_of

from fsm.kraft.image.partitions import PartitionImage, new_partition_image, new_partition_images
from fsm.kraft.records.codec import (
    _LAYOUTS,
    _fast_partition,
    _fast_topic,
    decode_record,
    decode_record_strict,
    encode_record,
)
from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import PartitionRecord, TopicRecord, new_partition_record

INT32 = st.integers(-(2**31), 2**31 - 1)
SMALL_LIST = st.lists(INT32, max_size=4).map(tuple)


def outcome(fn: Any, data: bytes) -> tuple[str, Any]:
    try:
        value = fn(data)
    except MalformedRecord as exc:
        return ("error", str(exc))
    return (type(value).__name__, value)


def same_answer(data: bytes) -> None:
    fast, strict = outcome(decode_record, data), outcome(decode_record_strict, data)
    assert fast == strict, data.hex()


@st.composite
def mutated(draw: st.DrawFn, record: st.SearchStrategy[Any]) -> bytes:
    """An encoded record with a few bytes replaced, inserted, deleted, or its end cut."""
    raw = bytearray(encode_record(draw(record)))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "cut", "append"]))
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        byte = draw(st.sampled_from([0, 1, 2, 0x7F, 0x80, 0xFF]) | st.integers(0, 255))
        if kind == "replace" and raw:
            raw[at] = byte
        elif kind == "insert":
            raw.insert(at, byte)
        elif kind == "delete" and raw:
            del raw[at]
        elif kind == "cut":
            del raw[at:]
        else:
            raw.append(byte)
    return bytes(raw)


common_partition = st.builds(
    PartitionRecord, INT32, st.binary(min_size=16, max_size=16), SMALL_LIST, SMALL_LIST,
    SMALL_LIST, SMALL_LIST, INT32, INT32, INT32)
any_partition = record_of(PartitionRecord.TYPE)
any_topic = record_of(TopicRecord.TYPE)


@settings(max_examples=400, deadline=None)
@given(any_partition | common_partition)
def test_partition_records_as_encoded(value: PartitionRecord) -> None:
    raw = encode_record(value)
    assert decode_record(raw) == decode_record_strict(raw) == value
    assert type(decode_record(raw)) is PartitionRecord


@settings(max_examples=300, deadline=None)
@given(common_partition, st.sampled_from([0, 1]))
def test_the_fast_path_is_taken_for_the_common_layout(value: PartitionRecord,
                                                     frame: int) -> None:
    raw = bytes((frame,)) + encode_record(value)[1:]  # seed 004's frame 0 as well
    fast = _fast_partition(raw)
    assert fast is not None
    assert fast == value == decode_record_strict(raw)


@settings(max_examples=300, deadline=None)
@given(any_topic)
def test_topic_records_as_encoded(value: TopicRecord) -> None:
    raw = encode_record(value)
    assert decode_record(raw) == decode_record_strict(raw) == value
    if len(value.name.encode()) < 0x7F:
        assert _fast_topic(raw) == value


@settings(max_examples=1500, deadline=None)
@given(mutated(common_partition | any_partition | any_topic))
@example(bytes.fromhex("010300"))
@example(bytes.fromhex("010200"))
@example(bytes.fromhex("0102000161") + bytes(16))  # one byte short: no tagged-field count
@example(bytes.fromhex("01020002ff") + bytes(17))  # a name that is not UTF-8
def test_mutated_bytes_get_the_strict_answer(data: bytes) -> None:
    same_answer(data)


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from([b"\x01\x03\x00", b"\x00\x03\x00", b"\x01\x02\x00", b"\x00\x02\x00"]),
       st.binary(max_size=80))
def test_arbitrary_bytes_behind_the_prefix_get_the_strict_answer(prefix: bytes,
                                                                 rest: bytes) -> None:
    same_answer(prefix + rest)


def test_layouts_the_fast_path_leaves_to_the_table() -> None:
    tid = uuid_of(9)
    long_list = tuple(range(127))  # a length of 128: a two-byte varint
    for value in (PartitionRecord(0, tid, long_list, (1,)),
                  PartitionRecord(0, tid, (1,), long_list),
                  PartitionRecord(0, tid, (1,), (1,), long_list, ())):
        raw = encode_record(value)
        assert _fast_partition(raw) is None
        assert decode_record(raw) == value
    name = "t" * 200
    raw = encode_record(TopicRecord(name, tid))
    assert _fast_topic(raw) is None
    assert decode_record(raw) == TopicRecord(name, tid)
    # null removing/adding replicas (Kafka 2.8) read as (), on both paths
    raw = bytearray(encode_record(PartitionRecord(3, tid, (1, 2), (1,))))
    assert raw[-15:-13] == b"\x01\x01"
    raw[-15:-13] = b"\x00\x00"
    assert decode_record(bytes(raw)) == decode_record_strict(bytes(raw)) \
        == PartitionRecord(3, tid, (1, 2), (1,))
    # a tagged field (unknown: skipped) is the table's to read
    raw = encode_record(PartitionRecord(3, tid, (1, 2), (1,)))[:-1] + b"\x01\x09\x01\x00"
    assert _fast_partition(raw) is None
    assert decode_record(raw) == PartitionRecord(3, tid, (1, 2), (1,))


def test_layouts_remembered_by_size_and_replica_count_are_checked_again() -> None:
    """Two records of one size and replica count whose other arrays split differently: the
    layout remembered for the first is not the second's."""
    tid = uuid_of(4)
    first = PartitionRecord(1, tid, (1, 2, 3), (1, 2), (3,), ())
    second = PartitionRecord(2, tid, (1, 2, 3), (1,), (2, 3), ())
    third = PartitionRecord(3, tid, (1, 2, 3), (1,), (2,), (3,))
    raws = [encode_record(v) for v in (first, second, third)]
    assert len({len(r) for r in raws}) == 1 and len({r[23] for r in raws}) == 1
    for _ in range(2):
        for value, raw in zip((first, second, third), raws, strict=True):
            assert _fast_partition(raw) == value == decode_record(raw)
    # every length byte is checked: here only the removing replicas' length tells them
    # apart (the byte where the first one's adding-replicas length is reads 2 in both)
    x = PartitionRecord(5, tid, (1, 2, 3), (1,), (), (7,))
    y = PartitionRecord(6, tid, (1, 2, 3), (1,), (0x02000000,), ())
    _LAYOUTS.clear()  # x's layout is the one remembered for their size
    for value in (x, y, x, y):
        assert _fast_partition(encode_record(value)) == value


def test_memoryview_and_bytearray_inputs() -> None:
    value = PartitionRecord(1, uuid_of(2), (1, 2, 3), (1, 2), (), (3,), 1, 4, 5)
    raw = encode_record(value)
    assert decode_record(bytearray(raw)) == decode_record(memoryview(raw)) == value


@settings(max_examples=200, deadline=None)
@given(common_partition)
def test_new_partition_record_is_the_constructor(value: PartitionRecord) -> None:
    built = new_partition_record(*(getattr(value, f.name)
                                   for f in dataclasses.fields(PartitionRecord)))
    assert built == value and hash(built) == hash(value) and repr(built) == repr(value)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.leader = 3  # type: ignore[misc]


@settings(max_examples=200, deadline=None)
@given(st.tuples(SMALL_LIST, SMALL_LIST, SMALL_LIST, SMALL_LIST, INT32, INT32, INT32))
def test_new_partition_image_is_the_constructor(fields: tuple[Any, ...]) -> None:
    built, made = new_partition_image(*fields), PartitionImage(*fields)
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert type(built) is PartitionImage
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.leader = 3  # type: ignore[misc]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(SMALL_LIST, SMALL_LIST, SMALL_LIST, SMALL_LIST, INT32, INT32, INT32),
                max_size=20))
def test_new_partition_images_is_the_constructor_row_by_row(rows: list[tuple[Any, ...]]
                                                             ) -> None:
    columns = [tuple(c) for c in zip(*rows, strict=True)] if rows else [()] * 7
    built = new_partition_images(*columns)
    assert built == [PartitionImage(*row) for row in rows]
    assert all(type(b) is PartitionImage for b in built)
    if built:
        with pytest.raises(dataclasses.FrozenInstanceError):
            built[0].leader = 3  # type: ignore[misc]
        with pytest.raises(ValueError, match="lengths"):  # a short column leaves none half-made
            new_partition_images(*columns[:6], columns[6][:-1])
