"""The record batch v2 codec: round trips, what decoding refuses, and byte-for-byte agreement
with two independent implementations (kafka-python's ``kafka.record`` and kio's)."""

from __future__ import annotations

import io
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from adapters.raft_log import BYTES, METADATA
from adapters.raft_log import batches as batch_codec
from adapters.raft_log.batch_format import (
    ATTRIBUTES_AT,
    CRC_AT,
    HEADER_BYTES,
    crc_matches,
    decode_records,
    encode_batch,
    read_header,
)
from adapters.raft_log.control_records import (
    SnapshotFooter,
    SnapshotHeader,
    decode_control,
    encode_control,
)
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.varints import read_varint, zigzag_bytes
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import TopicRecord
from fsm.raft.messages import Batch, LeaderChange

maybe_bytes = st.none() | st.binary(max_size=300)
records = st.lists(st.tuples(maybe_bytes, maybe_bytes), min_size=1, max_size=40)


@given(st.integers(-(1 << 63), (1 << 63) - 1))
def test_varint_round_trip(v: int) -> None:
    raw = zigzag_bytes(v)
    assert read_varint(raw, 0, len(raw)) == (v, len(raw))
    assert len(raw) <= 10


def test_varint_bytes_of_kafkas_examples() -> None:
    assert zigzag_bytes(0) == b"\x00"
    assert zigzag_bytes(-1) == b"\x01"
    assert zigzag_bytes(1) == b"\x02"
    assert zigzag_bytes(63) == b"\x7e"
    assert zigzag_bytes(64) == b"\x80\x01"
    with pytest.raises(ValueError, match="past the end"):
        read_varint(b"\x80", 0, 1)


@settings(max_examples=200, deadline=None)
@given(records, st.integers(0, 1 << 40), st.integers(0, (1 << 31) - 1), st.booleans(),
       st.integers(0, 1 << 41))
def test_round_trip(recs: list, base: int, epoch: int, control: bool, ts: int) -> None:
    raw = encode_batch(base, epoch, recs, control=control, timestamp_ms=ts)
    header = read_header(raw)
    assert (header.base_offset, header.epoch, header.count, header.control) == (
        base, epoch, len(recs), control)
    assert header.size == len(raw) and header.end_offset == base + len(recs)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert header.base_timestamp == header.max_timestamp == ts
    assert crc_matches(raw, 0, header)
    assert decode_records(raw, header) == recs


@settings(max_examples=100, deadline=None)
@given(records, st.data())
def test_a_flipped_byte_after_the_crc_field_fails_the_crc(recs: list, data: st.DataObject
                                                          ) -> None:
    raw = bytearray(encode_batch(5, 2, recs))
    at = data.draw(st.integers(ATTRIBUTES_AT, len(raw) - 1))
    raw[at] ^= 1 << data.draw(st.integers(0, 7))
    try:
        header = read_header(raw)
    except MalformedBatch:
        return  # the flip made the header itself bad: also refused
    assert not crc_matches(raw, 0, header)


def test_crc_is_crc32c_of_everything_after_it() -> None:
    raw = encode_batch(0, 0, [(None, b"x")])
    crc = struct.unpack_from(">I", raw, CRC_AT)[0]
    # CRC-32C (Castagnoli) check value of "123456789" is 0xe3069283: the package is it
    from crc32c import crc32c
    assert crc32c(b"123456789") == 0xE3069283
    assert crc == crc32c(raw[ATTRIBUTES_AT:])


def test_the_header_layout_is_kafkas() -> None:
    raw = encode_batch(7, 3, [(None, b"ab"), (b"k", None)], control=False, timestamp_ms=9)
    assert HEADER_BYTES == 61
    assert struct.unpack_from(">qiib", raw) == (7, len(raw) - 12, 3, 2)
    assert struct.unpack_from(">hiqqqhii", raw, 21) == (0, 1, 9, 9, -1, -1, -1, 2)
    # first record: length 8, attributes 0, ts delta 0, offset delta 0, key null, value 2
    assert raw[61:61 + 9] == bytes([16, 0, 0, 0, 1, 4]) + b"ab" + b"\x00"


def test_decoding_refuses_what_it_cannot_serve() -> None:
    raw = encode_batch(0, 1, [(None, b"abc")])
    with pytest.raises(MalformedBatch, match="magic 1"):
        read_header(raw[:16] + b"\x01" + raw[17:])
    with pytest.raises(MalformedBatch, match="under the minimum"):
        read_header(raw[:8] + struct.pack(">i", 10) + raw[12:])
    lying = bytearray(raw)
    struct.pack_into(">i", lying, 57, 2)  # record count 2 with lastOffsetDelta 0
    with pytest.raises(MalformedBatch, match="2 records with last offset delta 0"):
        read_header(lying)
    compressed = bytearray(raw)
    struct.pack_into(">h", compressed, ATTRIBUTES_AT, 1)
    with pytest.raises(MalformedBatch, match="compression 1"):
        decode_records(compressed, read_header(compressed))
    short_record = bytearray(raw)
    short_record[61] = 2 * 20  # record length 20: past the batch
    with pytest.raises(MalformedBatch, match="does not fit"):
        decode_records(short_record, read_header(short_record))


# -- against kafka-python's kafka.record ------------------------------------------------------
def _kafka_python_batch(base: int, epoch: int, values: list[bytes], ts: int) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 30)
    for i, v in enumerate(values):
        b.append(i, timestamp=ts, key=None, value=v, headers=[])
    raw = bytearray(b.build())
    # the builder leaves the base offset and leader epoch to the broker (outside the CRC)
    struct.pack_into(">q", raw, 0, base)
    struct.pack_into(">i", raw, 12, epoch)
    return bytes(raw)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=30),
       st.integers(0, 1 << 40), st.integers(0, 1000), st.integers(0, 1 << 41))
def test_kafka_python_writes_our_bytes_and_reads_ours(values: list[bytes], base: int,
                                                      epoch: int, ts: int) -> None:
    ours = encode_batch(base, epoch, [(None, v) for v in values], timestamp_ms=ts)
    assert _kafka_python_batch(base, epoch, values, ts).hex() == ours.hex()
    theirs = DefaultRecordBatch(ours)
    theirs.validate_crc()
    assert theirs.validate_crc()
    assert (theirs.base_offset, theirs.leader_epoch, theirs.is_control_batch) == (
        base, epoch, False)
    assert [(r.offset, r.key, r.value, r.timestamp) for r in theirs] == [
        (base + i, None, v, ts) for i, v in enumerate(values)]


def test_kafka_python_reads_our_control_batch() -> None:
    key, value = encode_control(LeaderChange(1, (1, 2, 3), (1, 3)))
    raw = encode_batch(10, 4, [(key, value)], control=True)
    theirs = DefaultRecordBatch(raw)
    assert theirs.validate_crc() and theirs.is_control_batch
    (record,) = list(theirs)
    assert (record.offset, record.version, record.type) == (10, 0, 2)


# -- against kio ------------------------------------------------------------------------------
def test_kio_reads_our_batches_and_we_read_kios() -> None:
    import datetime

    from kio.records.readers import read_batch
    from kio.records.schema import NewRecordBatch, Record
    from kio.records.writers import write_new_batch
    from kio.static.primitive import TZAwareMicros, i8, i16, i32, i64

    values = [b"one", b"two", b""]
    ts = 1_700_000_000_000  # whole seconds: kio's reader drops the milliseconds
    ours = encode_batch(20, 6, [(None, v) for v in values], timestamp_ms=ts)
    batch, size = read_batch(ours, 0)
    assert size == len(ours)
    assert (batch.base_offset, batch.partition_leader_epoch) == (20, 6)
    assert [(r.offset, r.key, r.value) for r in batch.records] == [
        (20 + i, None, v) for i, v in enumerate(values)]
    when = TZAwareMicros.parse(datetime.datetime.fromtimestamp(ts / 1000, datetime.UTC))
    new = NewRecordBatch(producer_id=i64(-1), producer_epoch=i16(-1), base_sequence=i32(-1),
                         partition_leader_epoch=i32(6), attributes=i16(0), records=tuple(
                             Record(attributes=i8(0), timestamp=when, offset=i64(20 + i),
                                    key=None, value=v, headers=())
                             for i, v in enumerate(values)))
    buf = io.BytesIO()
    write_new_batch(buf, new)
    assert buf.getvalue().hex() == ours.hex()


def test_control_record_values_are_kios_messages() -> None:
    from kio.schema.leader_change_message.v0 import LeaderChangeMessage
    from kio.schema.leader_change_message.v0.data import Voter
    from kio.schema.snapshot_footer_record.v0 import SnapshotFooterRecord
    from kio.schema.snapshot_header_record.v0 import SnapshotHeaderRecord
    from kio.serial import entity_writer
    from kio.static.primitive import i16, i32, i64

    def kio(entity: object) -> bytes:
        buf = io.BytesIO()
        entity_writer(type(entity))(buf, entity)
        return buf.getvalue()

    lc = LeaderChange(3, (1, 2, 3), (2, 3))
    key, value = encode_control(lc)
    assert key == b"\x00\x00\x00\x02"
    assert value.hex() == kio(LeaderChangeMessage(
        version=i16(0), leader_id=i32(3), voters=tuple(Voter(voter_id=i32(v)) for v in (1, 2, 3)),
        granting_voters=tuple(Voter(voter_id=i32(v)) for v in (2, 3)))).hex()
    assert decode_control(key, value) == lc
    key, value = encode_control(SnapshotHeader(123))
    assert key == b"\x00\x00\x00\x03"
    assert value == kio(SnapshotHeaderRecord(version=i16(0),
                                             last_contained_log_timestamp=i64(123)))
    assert decode_control(key, value) == SnapshotHeader(123)
    key, value = encode_control(SnapshotFooter())
    assert (key, value) == (b"\x00\x00\x00\x04", kio(SnapshotFooterRecord(version=i16(0))))
    with pytest.raises(ValueError, match="unknown control record type 9"):
        decode_control(b"\x00\x00\x00\x09", value)


# -- fsm.raft Batches ---------------------------------------------------------------------------
def test_a_raft_batch_is_one_v2_batch_both_serdes() -> None:
    topic = TopicRecord("foo", uuid_of(3))
    b = Batch(4, 2, (topic, topic))
    raw = batch_codec.encode(b, METADATA, 5)
    header = read_header(raw)
    assert batch_codec.decode(raw, header, METADATA) == b
    raw_values = [v for _, v in decode_records(raw, header)]
    assert raw_values[0][0] == 1  # frame type 1: Kafka's
    c = Batch(6, 2, (LeaderChange(1, (1, 2), (1,)),), control=True)
    raw = batch_codec.encode(c, BYTES)
    assert batch_codec.decode(raw, read_header(raw), BYTES) == c
    with pytest.raises(MalformedBatch, match="metadata record 0"):
        junk = batch_codec.encode(Batch(0, 0, (b"\x05junk",)), BYTES)
        batch_codec.decode(junk, read_header(junk), METADATA)


def test_records_with_headers_and_long_varints_decode() -> None:
    """kafka-python writes what our encoder never does -- headers, keys, timestamp deltas --
    and values over 63 bytes take two-byte varints: the decoder's slow paths read them."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 30)
    values = [b"v" * 200, b"", b"x"]
    for i, v in enumerate(values):
        b.append(i, timestamp=10 + 1000 * i, key=b"k" * (i * 70), value=v,
                 headers=[("h", b"1"), ("hh", None)] if i != 1 else [])
    raw = bytes(b.build())
    header = read_header(raw)
    assert crc_matches(raw, 0, header)
    assert decode_records(raw, header) == [(b"k" * (i * 70), v) for i, v in enumerate(values)]
    assert decode_records(memoryview(b"pad" + raw), header, 3) == decode_records(raw, header)


@settings(max_examples=300, deadline=None)
@given(records, st.data())
def test_any_damage_with_a_good_crc_is_malformed_never_another_error(
        recs: list, data: st.DataObject) -> None:
    """The CRC made right again after a byte of the records changed (what a writer's bug
    would produce): decoding gives the records or MalformedBatch, nothing else."""
    from crc32c import crc32c
    raw = bytearray(encode_batch(0, 1, recs))
    at = data.draw(st.integers(HEADER_BYTES, len(raw) - 1))
    raw[at] = data.draw(st.integers(0, 255))
    struct.pack_into(">I", raw, CRC_AT, crc32c(bytes(raw[ATTRIBUTES_AT:])))
    header = read_header(raw)
    try:
        decoded = decode_records(bytes(raw), header)
    except MalformedBatch:
        return
    assert len(decoded) == len(recs)


def test_a_data_record_with_a_null_value_is_refused_by_name() -> None:
    raw = encode_batch(7, 1, [(None, b"ok"), (None, None)])
    with pytest.raises(MalformedBatch, match=r"bytes record 1 \(offset 8\): null value"):
        batch_codec.decode(raw, read_header(raw), BYTES)


def test_value_lengths_at_the_varint_boundaries_decode_inline_or_not() -> None:
    """A value length of one varint byte (< 64), two (64-8191: the inline path of records
    of ~100 bytes) and three; kafka-python's batches of them read the same."""
    sizes = [100, 0, 63, 64, 8191, 8192, 20000]
    recs = [(None, bytes([i]) * n) for i, n in enumerate(sizes)]
    raw = encode_batch(3, 1, recs)
    assert decode_records(raw, read_header(raw)) == recs
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 20)
    for i, (_, v) in enumerate(recs):
        b.append(i, timestamp=0, key=None, value=v, headers=[])
    theirs = bytes(b.build())
    assert decode_records(theirs, read_header(theirs)) == recs
    short = bytearray(raw)
    short[HEADER_BYTES + 1] = 0x7F  # the first record's 2-byte length: 8171 bytes
    with pytest.raises(MalformedBatch, match="record 0 does not fill its length 8171"):
        decode_records(bytes(short), read_header(raw))


long_records = st.lists(st.tuples(st.none() | st.binary(max_size=8), st.binary(max_size=90)),
                        min_size=60, max_size=200)


@settings(max_examples=60, deadline=None)
@given(long_records, st.data())
def test_offset_deltas_of_two_bytes_inline_and_damage(recs: list, data: st.DataObject) -> None:
    """Records 64 and after have a two-byte offset delta (read inline, issue 26): a batch of
    up to 200 round-trips, kafka-python reads it the same, and a byte changed under a good
    CRC gives the records or MalformedBatch, nothing else."""
    from crc32c import crc32c
    raw = encode_batch(0, 1, recs)
    assert decode_records(raw, read_header(raw)) == recs
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 20)
    for i, (k, v) in enumerate(recs):
        b.append(i, timestamp=0, key=k, value=v, headers=[])
    theirs = bytes(b.build())
    assert decode_records(theirs, read_header(theirs)) == recs
    damaged = bytearray(raw)
    at = data.draw(st.integers(HEADER_BYTES, len(raw) - 1))
    damaged[at] = data.draw(st.sampled_from([0x80, 0x81, 0xFF, 0x00, 0x02]) | st.integers(0, 255))
    struct.pack_into(">I", damaged, CRC_AT, crc32c(bytes(damaged[ATTRIBUTES_AT:])))
    try:
        got = decode_records(bytes(damaged), read_header(damaged))
    except MalformedBatch:
        return
    assert len(got) == len(recs)
