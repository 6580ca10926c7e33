"""The decoder's fast path for ``PartitionChangeRecord`` v0 (the ISR alone, the leader alone,
or both: what the controller writes when a broker leaves or returns) is held to the
table-driven path differentially, as PartitionRecord's is (``test_records_fast_path``): for
records as encoded, the same bytes mutated and arbitrary bytes behind the record's prefix,
``decode_record`` and ``decode_record_strict`` give equal values of the same type or the same
``MalformedRecord``. The fast path must be *taken* for the three layouts (else all this
would pass with it switched off), must *decline* the others, and its builder makes the same
immutable value as the dataclass's constructor."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from records_strategies import record_of

from fsm.kraft.controller import partition_change as pc
from fsm.kraft.image.partitions import PartitionImage
from fsm.kraft.records.codec import (
    _fast_partition_change,
    decode_record,
    decode_record_strict,
    encode_record,
)
from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    LEADER_UNCHANGED,
    PartitionChangeRecord,
    new_partition_change_record,
)

INT32 = st.integers(-(2**31), 2**31 - 1)
BROKER = st.sampled_from([-1, 0, 1, 2, 3, 127, 128, 2**31 - 1, -(2**31)]) | INT32
ISR = st.lists(BROKER, max_size=6).map(tuple)
TOPIC = st.binary(min_size=16, max_size=16)

isr_only = st.builds(PartitionChangeRecord, INT32, TOPIC, ISR)
leader_only = st.builds(PartitionChangeRecord, INT32, TOPIC, st.none(), BROKER)
isr_and_leader = st.builds(PartitionChangeRecord, INT32, TOPIC, ISR, BROKER)
common = isr_only | leader_only | isr_and_leader
any_change = record_of(PartitionChangeRecord.TYPE)


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
        byte = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 9, 0x7F, 0x80, 0xFF])
                    | st.integers(0, 255))
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


@settings(max_examples=500, deadline=None)
@given(common | any_change, st.sampled_from([0, 1]))
def test_changes_as_encoded(value: PartitionChangeRecord, frame: int) -> None:
    raw = bytes((frame,)) + encode_record(value)[1:]  # seed 004's frame 0 as well
    assert decode_record(raw) == decode_record_strict(raw) == value
    assert type(decode_record(raw)) is PartitionChangeRecord


@settings(max_examples=400, deadline=None)
@given(common, st.sampled_from([0, 1]))
def test_the_fast_path_is_taken_for_the_three_layouts(value: PartitionChangeRecord,
                                                      frame: int) -> None:
    raw = bytes((frame,)) + encode_record(value)[1:]
    fast = _fast_partition_change(raw)
    if value.isr is None and value.leader == LEADER_UNCHANGED:
        assert fast is None  # nothing changes: no tagged field, the table's
    else:
        assert fast is not None
        assert fast == value == decode_record_strict(raw)


def test_what_the_controller_writes_for_a_leaving_broker_takes_the_fast_path() -> None:
    """The records of ``partition_change.without_broker`` (controlled shutdown, fence) and
    ``with_broker_back``, built by the controller's own code."""
    tid = uuid_of(7)
    led = PartitionImage((1, 4, 5), (1, 4, 5), leader=1, leader_epoch=3, partition_epoch=9)
    followed = PartitionImage((4, 1, 5), (4, 1, 5), leader=4)
    alone = PartitionImage((1, 4), (1,), leader=1)
    leaderless = PartitionImage((1, 4), (1,), leader=-1)
    records = [pc.without_broker(tid, 0, led, 1, lambda b: b != 1),  # moved, ISR shrunk
               pc.without_broker(tid, 1, followed, 1, lambda b: b != 1),  # ISR shrunk
               pc.without_broker(tid, 2, alone, 1, lambda b: b != 1),  # leader -1
               pc.with_broker_back(tid, 3, leaderless, lambda b: True)]  # led again
    assert [(r.isr, r.leader) for r in records] == [
        ((4, 5), 4), ((4, 5), LEADER_UNCHANGED), (None, -1), (None, 1)]
    for r in records:
        raw = encode_record(r)
        assert _fast_partition_change(raw) == r == decode_record(raw)


def test_layouts_the_fast_path_leaves_to_the_table() -> None:
    tid = uuid_of(9)
    long_isr = tuple(range(127))  # a compact length of 128: a two-byte varint
    for value in (PartitionChangeRecord(0, tid, long_isr, 1),
                  PartitionChangeRecord(0, tid, long_isr),
                  PartitionChangeRecord(0, tid, (1,), 1, replicas=(1, 2)),
                  PartitionChangeRecord(0, tid, replicas=(1, 2), adding_replicas=(2,)),
                  PartitionChangeRecord(0, tid, removing_replicas=(2,)),
                  PartitionChangeRecord(0, tid)):
        raw = encode_record(value)
        assert _fast_partition_change(raw) is None
        assert decode_record(raw) == value
    base = encode_record(PartitionChangeRecord(3, tid, (1, 2), 1))
    head, tags = base[:23], base[23:]
    assert tags.hex() == "02" + "0009" + "03" + "00000001" + "00000002" + "010400000001"
    leader_first = head + bytes.fromhex("02" "010400000001" "0009030000000100000002")
    repeated = head + bytes.fromhex("02" "0009030000000100000002" "00050200000001")
    null_isr = head + bytes.fromhex("01" "000100")
    unknown = base[:23] + b"\x03" + base[24:] + bytes.fromhex("0501ff")
    for raw in (leader_first, repeated, null_isr, unknown):
        assert _fast_partition_change(raw) is None
        same_answer(raw)
    assert decode_record(leader_first) == PartitionChangeRecord(3, tid, (1, 2), 1)
    assert decode_record(repeated) == PartitionChangeRecord(3, tid, (1,))
    assert decode_record(null_isr) == PartitionChangeRecord(3, tid)
    assert decode_record(unknown) == PartitionChangeRecord(3, tid, (1, 2), 1)


@settings(max_examples=2000, deadline=None)
@given(mutated(common | any_change))
@example(bytes.fromhex("010500"))
@example(bytes.fromhex("010500") + bytes(24))
@example(bytes.fromhex("01050000000001") + bytes(16) + bytes.fromhex("0100050200000001"))
@example(bytes.fromhex("01050000000001") + bytes(16) + bytes.fromhex("02000502000000010104"))
def test_mutated_bytes_get_the_strict_answer(data: bytes) -> None:
    same_answer(data)


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from([b"\x01\x05\x00", b"\x00\x05\x00"]),
       st.binary(min_size=20, max_size=20),
       st.sampled_from([b"\x01\x00", b"\x01\x01", b"\x02\x00", b"\x02\x01", b""]),
       st.binary(max_size=24))
def test_arbitrary_bytes_behind_the_prefix_get_the_strict_answer(
        prefix: bytes, head: bytes, tags: bytes, rest: bytes) -> None:
    same_answer(prefix + head + tags + rest)  # the tag bytes of the layouts, often
    same_answer(prefix + rest)


@settings(max_examples=200, deadline=None)
@given(INT32, TOPIC, st.none() | ISR, BROKER)
def test_new_partition_change_record_is_the_constructor(partition_id: int, topic: bytes,
                                                        isr: Any, leader: int) -> None:
    built = new_partition_change_record(partition_id, topic, isr, leader)
    made = PartitionChangeRecord(partition_id, topic, isr, leader)
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert type(built) is PartitionChangeRecord
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.leader = 3  # type: ignore[misc]
