"""The fast snapshot load (``adapters.raft_log.snapshot_image``) held to the table-driven path,
``image_from_records(records_of(data, ..., METADATA, ...))``, differentially: on generated
snapshots (valid logs' snapshots; topics of up to 150 partitions in batches of 1-1,024
records, so runs cross batches and the one-to-two-byte offset delta at record 64) both give
equal images and the fast load takes runs; on the same bytes mutated -- CRCs made good again,
so the batch check does not stop them -- the fast load either gives the image the
table-driven path gives, or says ``NotFast`` where it fails; it never gives an image where
the table-driven path raises."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.raft_log import BYTES, PARTITION_DIR, CorruptLogError, MetadataLog, snapshot_image
from adapters.raft_log.batch_format import ATTRIBUTES_AT, CRC_AT, read_header
from adapters.raft_log.serde import METADATA
from adapters.raft_log.snapshot_image import NotFast, load_image
from adapters.raft_log.snapshots import encode_snapshot, records_of
from fsm.kraft.image import MetadataImage, image_from_records, snapshot_records
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from fsm.raft.messages import Batch, OffsetAndEpoch
from tests.unit.kraft.image.strategies import valid_logs

SNAP = OffsetAndEpoch(5000, 3)
MAX = 16 << 20
BATCH_SIZES = st.sampled_from([1, 2, 7, 63, 64, 65, 100, 130, 1024])


def snapshot_bytes(records: list[Any], per_batch: int, snap: OffsetAndEpoch = SNAP) -> bytes:
    return b"".join(encode_snapshot(snap, records, METADATA, timestamp_ms=1_700_000_000_000,
                                    max_batch_bytes=1 << 20, records_per_batch=per_batch))


def strict(data: bytes) -> tuple[str, Any]:
    """The table-driven path's answer: the image and the record count, or the error."""
    try:
        records = records_of(data, SNAP, METADATA, "snap", MAX)
        return ("image", (image_from_records(records), len(records)))
    except Exception as exc:  # noqa: BLE001 -- any error: the fast load must not answer
        return ("error", type(exc).__name__)


def fast(data: bytes) -> tuple[str, Any]:
    try:
        return ("image", load_image(data, SNAP.epoch, MAX))
    except NotFast:
        return ("not fast", None)


def consistent(data: bytes) -> str:
    """The fast load gives the table-driven path's image, or says NotFast; never an image
    where that path fails. Which it did."""
    got, want = fast(data), strict(data)
    if got[0] == "image":
        assert want[0] == "image", f"fast load answered where the strict path says {want}"
        assert got[1] == want[1]
    return got[0]


# -- snapshots as a controller writes them -------------------------------------------------
INT32 = st.integers(-(2**31), 2**31 - 1)
BROKERS = st.integers(0, 5)


@st.composite
def partition_lists(draw: st.DrawFn) -> tuple[tuple[int, ...], ...]:
    """Replicas, ISR, removing, adding: most partitions of a topic share one shape."""
    rf = draw(st.integers(1, 4))
    return (tuple(draw(st.lists(BROKERS, min_size=rf, max_size=rf))),
            tuple(draw(st.lists(BROKERS, min_size=1, max_size=rf))),
            tuple(draw(st.lists(BROKERS, max_size=1))), tuple(draw(st.lists(BROKERS,
                                                                         max_size=1))))


@st.composite
def big_topics(draw: st.DrawFn) -> list[Any]:
    """Brokers and features, then topics each followed by up to 150 partitions, as
    ``snapshot_records`` lists them (a few partitions of another shape among them)."""
    out: list[Any] = [FeatureLevelRecord("metadata.version", 1, 7)]
    out += [RegisterBrokerRecord(b, uuid_of(b), 10 + b, (), (), None, False, False)
            for b in range(draw(st.integers(0, 3)))]
    for t in range(draw(st.integers(1, 4))):
        tid = uuid_of(1000 + t)
        out.append(TopicRecord(f"topic-{t:0{draw(st.integers(1, 60))}d}", tid))
        shape = draw(partition_lists())
        for p in range(draw(st.integers(0, 150))):
            lists = draw(partition_lists()) if draw(st.integers(0, 40)) == 0 else shape
            out.append(PartitionRecord(p, tid, *lists, draw(st.integers(-1, 5)),
                                       draw(INT32), draw(st.integers(0, 2**31 - 1))))
    return out


@settings(max_examples=40, deadline=None)
@given(big_topics(), BATCH_SIZES)
def test_equal_images_on_large_topics(records: list[Any], per_batch: int) -> None:
    data = snapshot_bytes(records, per_batch)
    image, count = load_image(data, SNAP.epoch, MAX)  # taken: no NotFast
    assert count == len(records)
    assert image == image_from_records(records)


@settings(max_examples=100, deadline=None)
@given(valid_logs(), BATCH_SIZES)
def test_equal_images_on_snapshots_of_valid_logs(log: list[Any], per_batch: int) -> None:
    records = snapshot_records(image_from_records(log))
    image, count = load_image(snapshot_bytes(records, per_batch), SNAP.epoch, MAX)
    assert (image, count) == (image_from_records(records), len(records))


def test_runs_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Of 3,000 partitions of one topic in batches of 1,024, only each batch's first record
    and its record 64 (where the offset delta grows to two bytes) are decoded alone."""
    decoded: list[Any] = []
    real = snapshot_image.decode_record
    monkeypatch.setattr(snapshot_image, "decode_record", lambda v: decoded.append(v) or real(v))
    tid = uuid_of(7)
    records = [TopicRecord("t", tid)] + [
        PartitionRecord(p, tid, (1, 2, 3), (1, 2, 3), (), (), 1 + p % 3, 0, 0)
        for p in range(3000)]
    image, _ = load_image(snapshot_bytes(records, 1024), SNAP.epoch, MAX)
    assert image == image_from_records(records)
    assert len(decoded) == 1 + 3 * 2  # the TopicRecord, then 2 per batch
    parts = image.topics[tid].partitions
    assert list(parts) == list(range(3000))
    assert len({id(p.replicas) for p in parts.values()}) == 1  # replica lists interned


# -- bad and unusual snapshots: the table-driven path decides --------------------------------
def with_good_crcs(data: bytearray) -> bytes:
    """``data`` with every batch's CRC made to match its bytes (where a header still
    parses), so that a mutation gets past the CRC check to the records."""
    pos = 0
    while pos + 61 <= len(data):
        try:
            h = read_header(data, pos)
        except ValueError:
            break
        if pos + h.size > len(data):
            break
        struct.pack_into(">I", data, pos + CRC_AT,
                         crc32c(bytes(data[pos + ATTRIBUTES_AT:pos + h.size])))
        pos += h.size
    return bytes(data)


@st.composite
def mutated_snapshots(draw: st.DrawFn) -> bytes:
    records = draw(big_topics())
    raw = bytearray(snapshot_bytes(records, draw(BATCH_SIZES)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw) - 1))
        kind = draw(st.sampled_from(["replace", "replace", "replace", "insert", "delete"]))
        byte = draw(st.sampled_from([0, 1, 2, 3, 4, 6, 0x7F, 0x80, 0xFF]) | st.integers(0, 255))
        if kind == "replace":
            raw[at] = byte
        elif kind == "insert":
            raw.insert(at, byte)
        else:
            del raw[at]
    return with_good_crcs(raw) if draw(st.integers(0, 4)) else bytes(raw)  # mostly past the CRC


@settings(max_examples=400, deadline=None)
@given(mutated_snapshots())
def test_mutated_snapshots_never_answer_differently(data: bytes) -> None:
    consistent(data)


def test_a_mutated_field_of_a_run_is_read_not_checked() -> None:
    """A byte that holds a field (a replica id) changes the image, not the path; a byte of
    the layout (an array length) ends the run, and the table-driven path decides."""
    tid = uuid_of(9)
    records = [TopicRecord("t", tid)] + [
        PartitionRecord(p, tid, (1, 2, 3), (1, 2), (), (), 1, 0, 0) for p in range(100)]
    data = bytearray(snapshot_bytes(records, 1024))
    at = bytes(data).index(struct.pack(">i", 50) + tid) + 4 + 16 + 1
    data[at + 3] = 9  # replica 1 -> 9
    assert consistent(with_good_crcs(data)) == "image"
    image, _ = load_image(with_good_crcs(data), SNAP.epoch, MAX)
    assert image.topics[tid].partitions[50].replicas == (9, 2, 3)
    data[at - 1] = 5  # the replicas' array length: 4 items, not 3
    assert consistent(with_good_crcs(data)) == "not fast"


@pytest.mark.parametrize("records", [
    [PartitionRecord(0, uuid_of(1), (1,), (1,))],  # a partition of an unknown topic
    [TopicRecord("t", uuid_of(1)), TopicRecord("t", uuid_of(2))],  # a name twice
    [TopicRecord("t", uuid_of(1))] + [PartitionRecord(p, uuid_of(2), (1,), (1,))
                                      for p in range(10)],  # a run of an unknown topic
])
def test_records_that_do_not_replay_are_left_to_the_table_driven_path(
        records: list[Any]) -> None:
    data = snapshot_bytes(records, 1024)
    assert fast(data) == ("not fast", None)
    assert strict(data) == ("error", "ImageError")


def test_partitions_of_two_topics_in_one_run_are_left_to_the_table_driven_path() -> None:
    records = [TopicRecord("a", uuid_of(1)), TopicRecord("b", uuid_of(2))] + [
        PartitionRecord(p, uuid_of(1 + p % 2), (1,), (1,)) for p in range(10)]
    data = snapshot_bytes(records, 1024)
    assert fast(data) == ("not fast", None)
    assert strict(data)[0] == "image"


def test_empty_and_truncated_snapshots() -> None:
    data = snapshot_bytes([TopicRecord("t", uuid_of(1))], 1024)
    image, count = load_image(snapshot_bytes([], 1024), SNAP.epoch, MAX)
    assert (image, count) == (MetadataImage(), 0)
    for cut in (0, 10, 61, len(data) - 1):
        assert consistent(data[:cut]) == "not fast"
    assert fast(data + data[:70]) == ("not fast", None)  # bytes after the footer


def test_the_log_builds_the_image_or_leaves_it_to_read_snapshot(tmp_path: Path) -> None:
    tid = uuid_of(3)
    records = [TopicRecord("t", tid)] + [PartitionRecord(p, tid, (1, 2), (2,), (), (), 2, 1, 1)
                                         for p in range(200)]
    snap = OffsetAndEpoch(20, 2)
    with MetadataLog.open(tmp_path, serde=BYTES, clock_ms=lambda: 1) as log:
        log.append([Batch(0, 2, tuple(b"r%d" % i for i in range(20)))])
        log.flush()
        log.write_snapshot(snap, [METADATA.encode(r) for r in records])
        got = log.read_snapshot_image(snap)
        assert got is not None and got == (image_from_records(records), 201)
        path = tmp_path / PARTITION_DIR / "00000000000000000020-0000000002.checkpoint"
        data = bytearray(path.read_bytes())
        data[200] ^= 0x40  # a CRC mismatch: read_snapshot names it
        path.write_bytes(bytes(data))
        assert log.read_snapshot_image(snap) is None
        with pytest.raises(CorruptLogError, match="CRC"):
            log.read_snapshot(snap, serde=METADATA)
