"""Bytes that are not a record: each refused with MalformedRecord (a ValueError) naming the
record type, the field and the offset; values out of range refused by encode with a
ValueError naming the field; and on any bytes at all decode_record raises nothing else."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records_strategies import records

from fsm.kraft.records import MAX_RECORD_BYTES, MalformedRecord, decode_record, encode_record
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    BrokerEndpoint,
    ConfigRecord,
    DelegationTokenRecord,
    FailedReplicasRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    QuotaRecord,
    RegisterBrokerRecord,
    TopicRecord,
)

UUID_HEX = uuid_of(9).hex()
TOPIC = bytes.fromhex("00020004626172" + UUID_HEX + "00")


def refused(raw: bytes, *parts: str) -> str:
    with pytest.raises(MalformedRecord) as info:
        decode_record(raw)
    message = str(info.value)
    for part in parts:
        assert part in message, message
    return message


def test_truncated_at_every_length() -> None:
    for n in range(len(TOPIC)):
        refused(TOPIC[:n], "offset")
    refused(TOPIC[:3], "TopicRecord", "field name", "truncated unsigned varint", "offset 3")
    refused(TOPIC[:5], "TopicRecord", "field name", "string length 3 runs past the end")
    refused(TOPIC[:10], "TopicRecord", "field topic_id", "uuid is 16 bytes", "offset 7")


def test_trailing_bytes() -> None:
    refused(TOPIC + b"\x00", "TopicRecord", "1 trailing bytes", f"offset {len(TOPIC)}")


def test_frame_type_record_type_version() -> None:
    refused(b"\x02" + TOPIC[1:], "unknown frame type 2", "offset 0")
    refused(b"\x00\x0f\x00", "unknown record type 15", "offset 1")
    refused(b"\x00\x7f\x00", "unknown record type 127")
    refused(b"\x00\x02\x01" + TOPIC[3:], "TopicRecord", "unsupported version 1", "offset 2")
    refused(b"\x00\x00\x02", "RegisterBrokerRecord", "unsupported version 2")
    refused(b"", "truncated", "offset 0")


def test_varints() -> None:
    refused(b"\x00\x02\x00\x80\x80\x80\x80\x80\x01", "TopicRecord", "field name",
            "longer than 5 bytes", "offset 3")
    refused(b"\x00\x02\x00\xff\xff\xff\xff\x7f", "over 32 bits", "offset 3")
    refused(b"\x80", "truncated unsigned varint", "offset 0")
    refused(b"\x80\x80\x80\x80\x80\x00", "frame", "longer than 5 bytes")


def test_lengths_past_the_end_nulls_and_utf8() -> None:
    refused(bytes.fromhex("00020010626172"), "field name", "length 15 runs past the end",
            "offset 3")
    refused(bytes.fromhex("000200" "00") + uuid_of(1) + b"\x00", "field name",
            "null (length -1)", "not nullable")
    refused(bytes.fromhex("00020003ff fe") + uuid_of(1) + b"\x00", "field name",
            "invalid UTF-8")
    # PartitionRecord replicas claiming 2**31 items in 4 bytes: refused before allocating
    raw = bytes.fromhex("000300 00000000" + UUID_HEX + "8080808008")
    refused(raw, "PartitionRecord", "field replicas", "runs past the end", "offset 23")
    refused(bytes.fromhex("000300 00000000" + UUID_HEX + "00"), "field replicas",
            "null (length -1) in an array")


def test_bool_byte() -> None:
    value = FenceBrokerRecord(1, 2)
    again = encode_record(value)  # compared as bytes: a float64 may decode as NaN
    assert encode_record(decode_record(again)) == again
    quota = encode_record(QuotaRecord((), "k", 1.5, True))
    refused(quota[:-2] + b"\x02\x00", "QuotaRecord", "field remove", "a bool is 0 or 1, not 2")


def test_tagged_sections() -> None:
    base = bytes.fromhex("00050000000007" + UUID_HEX)
    refused(base + bytes.fromhex("01 01 08 00000003"), "field tagged fields",
            "size 8 runs past the end")
    refused(base + bytes.fromhex("01 01 05 00000003 00"), "PartitionChangeRecord",
            "field leader", "declares 5 bytes, its value took 4")
    refused(base + bytes.fromhex("ff ff ff ff 0f"), "tagged fields cannot fit")


def test_size_bound() -> None:
    refused(TOPIC + bytes(MAX_RECORD_BYTES), "MAX_RECORD_BYTES")
    big = DelegationTokenRecord("o", ("x" * 30000,) * 40, 1, 2, 3, "t")
    with pytest.raises(ValueError, match="MAX_RECORD_BYTES"):
        encode_record(big)


def test_a_tiny_input_cannot_make_us_allocate_much() -> None:
    hostile = [bytes.fromhex("000300 00000000" + UUID_HEX + "ffffffff0f"),
               bytes.fromhex("000d00 00000001 ffffffff07"),
               bytes.fromhex("000a00 02 6f ffffffff07")]
    for raw in hostile:
        tracemalloc.start()
        try:
            with pytest.raises(MalformedRecord):
                decode_record(raw)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 64 * 1024, (raw.hex(), peak)


@pytest.mark.parametrize(("value", "field"), [
    (FenceBrokerRecord(2**31, 0), "FenceBrokerRecord.id"),
    (FenceBrokerRecord(1, 2**63), "FenceBrokerRecord.epoch"),
    (ConfigRecord(128, "t", "k", "v"), "ConfigRecord.resource_type"),
    (ConfigRecord(2, "t", None, "v"), "ConfigRecord.name"),  # type: ignore[arg-type]
    (RegisterBrokerRecord(1, uuid_of(1), 1, (BrokerEndpoint("P", "h", 65536),)),
     "RegisterBrokerRecord.end_points[0].port"),
    (RegisterBrokerRecord(1, uuid_of(1), 1, (BrokerEndpoint("P", "h", -1),)),
     "RegisterBrokerRecord.end_points[0].port"),
    (TopicRecord("t", b"short"), "TopicRecord.topic_id"),
    (TopicRecord("\ud800", uuid_of(1)), "TopicRecord.name"),
    (TopicRecord("x" * 32768, uuid_of(1)), "TopicRecord.name"),
    (PartitionRecord(0, uuid_of(1), (1, 2**31), ()), "PartitionRecord.replicas[1]"),
    (PartitionChangeRecord(0, uuid_of(1), leader=True), "PartitionChangeRecord.leader"),
    (FailedReplicasRecord(1, (uuid_of(1),)), "FailedReplicasRecord.topics[0]"),  # type: ignore[arg-type]
    (QuotaRecord((), "k", "1", False), "QuotaRecord.value"),  # type: ignore[arg-type]
    (QuotaRecord((), "k", 1.0, 1), "QuotaRecord.remove"),  # type: ignore[arg-type]
])
def test_encode_refuses_out_of_range_naming_the_field(value: object, field: str) -> None:
    with pytest.raises(ValueError) as info:
        encode_record(value)
    assert str(info.value).startswith(field + ":"), str(info.value)


def test_encode_refuses_what_is_not_a_record() -> None:
    with pytest.raises(ValueError, match="not a metadata record"):
        encode_record(BrokerEndpoint("P", "h", 1))


def _decode_or_refuse(raw: bytes) -> None:
    try:
        value = decode_record(raw)
    except MalformedRecord as exc:
        assert str(exc)
        return
    again = encode_record(value)  # compared as bytes: a float64 may decode as NaN
    assert encode_record(decode_record(again)) == again


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=80))
def test_random_bytes_decode_or_are_refused(raw: bytes) -> None:
    _decode_or_refuse(raw)


@settings(max_examples=1500, deadline=None)
@given(st.binary(max_size=60).map(lambda b: b"\x00" + bytes([b[0] % 18]) + b"\x00" + b[1:]
                                  if b else b))
def test_random_payloads_behind_a_valid_header(raw: bytes) -> None:
    _decode_or_refuse(raw)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    raw = bytearray(encode_record(draw(records)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "cut", "insert", "delete"]))
        i = draw(st.integers(0, max(len(raw) - 1, 0)))
        if op == "flip" and raw:
            raw[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and raw:
            raw[i] = draw(st.sampled_from([0x00, 0x01, 0x7f, 0x80, 0xff]))
        elif op == "cut":
            del raw[i:]
        elif op == "insert":
            raw[i:i] = draw(st.binary(min_size=1, max_size=6))
        elif op == "delete" and raw:
            del raw[i]
    return bytes(raw)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_valid_encodings_decode_or_are_refused(raw: bytes) -> None:
    _decode_or_refuse(raw)
