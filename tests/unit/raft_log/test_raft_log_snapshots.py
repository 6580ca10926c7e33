"""Snapshots: Kafka's checkpoint files (header, records, footer), chunks for FetchSnapshot,
a follower's install, and deleting the log below a snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch
from raft_log_support import batches, flip, open_log, segment_files

from adapters.raft_log import PARTITION_DIR, CorruptLogError, OffsetOutOfRange
from adapters.raft_log.batch_format import read_header
from fsm.raft.log_summary import LogSummary
from fsm.raft.messages import OffsetAndEpoch

SNAP = OffsetAndEpoch(20, 2)


def _log_with_epochs(tmp: Path, **kw: int):  # noqa: ANN202 -- a MetadataLog
    log = open_log(tmp, **kw)
    log.append(batches(0, [5, 5], epoch=1) + batches(10, [5] * 6, epoch=2))
    log.flush()
    return log


def test_write_and_read_a_snapshot(tmp_path: Path) -> None:
    records = [f"state{i}".encode() * (i % 7) for i in range(3000)]
    with _log_with_epochs(tmp_path) as log:
        size = log.write_snapshot(SNAP, records)
        path = tmp_path / PARTITION_DIR / "00000000000000000020-0000000002.checkpoint"
        assert path.stat().st_size == size == log.snapshot_size(SNAP)
        assert log.latest_snapshot() == SNAP
        assert log.read_snapshot(SNAP) == tuple(records)
    raw = path.read_bytes()
    # Kafka's layout: offsets from 0 in the snapshot's epoch, header and footer control
    # batches (types 3 and 4) around the records, each batch readable by kafka-python
    pos, offset, kinds = 0, 0, []
    while pos < len(raw):
        h = read_header(raw, pos)
        assert (h.base_offset, h.epoch) == (offset, 2)
        b = DefaultRecordBatch(raw[pos:pos + h.size])
        assert b.validate_crc()
        kinds.append([r.type for r in b] if h.control else len(list(b)))
        pos, offset = pos + h.size, h.end_offset
    assert kinds[0] == [3] and kinds[-1] == [4] and sum(kinds[1:-1]) == 3000
    with open_log(tmp_path) as log:
        assert log.latest_snapshot() == SNAP
        assert log.summary().log_start_offset == 20  # the oldest snapshot bounds it


def test_a_snapshot_must_match_the_log(tmp_path: Path) -> None:
    with _log_with_epochs(tmp_path) as log:
        with pytest.raises(ValueError, match="in epoch 2"):
            log.write_snapshot(OffsetAndEpoch(20, 1), [])
        with pytest.raises(ValueError, match="not a batch boundary"):
            log.write_snapshot(OffsetAndEpoch(12, 2), [])
        with pytest.raises(OffsetOutOfRange):
            log.write_snapshot(OffsetAndEpoch(41, 2), [])
        log.write_snapshot(OffsetAndEpoch(40, 2), [])  # the end: fine
        assert log.read_snapshot(OffsetAndEpoch(40, 2)) == ()


def test_chunks_and_install_on_a_follower(tmp_path: Path) -> None:
    leader_dir, follower_dir = tmp_path / "leader", tmp_path / "follower"
    with _log_with_epochs(leader_dir) as leader:
        leader.write_snapshot(SNAP, [b"a", b"b", b"c"])
        size = leader.snapshot_size(SNAP)
        chunks, position = [], 0
        while position < size:
            chunk = leader.read_snapshot_chunk(SNAP, position, 50)
            assert 0 < len(chunk) <= 50
            chunks.append(chunk)
            position += len(chunk)
        assert leader.read_snapshot_chunk(SNAP, size, 50) == b""
        with pytest.raises(OffsetOutOfRange):
            leader.read_snapshot_chunk(SNAP, size + 1, 50)
    data = b"".join(chunks)
    with open_log(follower_dir) as follower:
        follower.append(batches(0, [3], epoch=1))  # behind and diverged: replaced
        with pytest.raises(CorruptLogError, match="received"):
            follower.install_snapshot(SNAP, data[:-1])
        assert follower.end_offset == 3
        follower.install_snapshot(SNAP, data)
        assert follower.summary() == LogSummary(20, ((2, 20),), 20, SNAP)
        assert follower.read_snapshot(SNAP) == (b"a", b"b", b"c")
        with pytest.raises(ValueError, match="in epoch 1, after epoch 2"):
            follower.append(batches(20, [2], epoch=1))  # below the snapshot's epoch
        follower.append(batches(20, [2], epoch=3))
        follower.flush()
    with open_log(follower_dir) as follower:
        assert follower.summary() == LogSummary(22, ((3, 20),), 20, SNAP)  # epoch 2 has no record
        assert follower.end_offset_for_epoch(2) == SNAP
        assert follower.end_offset_for_epoch(1) == OffsetAndEpoch(-1, -1)


def test_a_crash_after_the_install_before_the_log_was_replaced(tmp_path: Path) -> None:
    with _log_with_epochs(tmp_path / "leader") as leader:
        leader.write_snapshot(SNAP, [b"x"])
        data = leader.read_snapshot_chunk(SNAP, 0, 1 << 20)
    with open_log(tmp_path) as follower:
        follower.append(batches(0, [3], epoch=1))
        follower.flush()
    (tmp_path / PARTITION_DIR / "00000000000000000020-0000000002.checkpoint").write_bytes(data)
    with open_log(tmp_path) as follower:
        assert follower.summary() == LogSummary(20, ((2, 20),), 20, SNAP)


def test_delete_before_removes_segments_and_older_snapshots(tmp_path: Path) -> None:
    with _log_with_epochs(tmp_path, segment_bytes=256, max_batch_bytes=256) as log:
        n = len(segment_files(tmp_path))
        with pytest.raises(OffsetOutOfRange, match="no snapshot covers it"):
            log.delete_before(10)
        log.write_snapshot(OffsetAndEpoch(10, 1), [b"old"])
        log.write_snapshot(SNAP, [b"new"])
        assert log.delete_before(SNAP.offset) == 20
        assert log.snapshot_ids() == (SNAP,)
        files = segment_files(tmp_path)
        assert len(files) < n and int(files[0].name[:-4]) <= 20
        assert log.summary() == LogSummary(40, ((2, 20),), 20, SNAP)
        assert log.read(20, 40, 100) == tuple(batches(20, [5] * 4, epoch=2))
        with pytest.raises(OffsetOutOfRange):
            log.read(15, 40, 100)
        with pytest.raises(OffsetOutOfRange, match="below the log start"):
            log.truncate_to(19)
        assert log.end_offset_for_epoch(1) == OffsetAndEpoch(-1, -1)
    with open_log(tmp_path, segment_bytes=256, max_batch_bytes=256) as log:
        assert log.summary() == LogSummary(40, ((2, 20),), 20, SNAP)


def test_a_corrupt_snapshot_is_not_served(tmp_path: Path) -> None:
    with _log_with_epochs(tmp_path) as log:
        log.write_snapshot(SNAP, [b"x" * 100])
        path = tmp_path / PARTITION_DIR / "00000000000000000020-0000000002.checkpoint"
        flip(path, 83 + 61 + 30)  # inside the records' batch (the header batch is 83 bytes)
        with pytest.raises(CorruptLogError, match=f"{path}: corrupt at byte 83 \\(offset 1\\)"
                                                  ": CRC-32C mismatch"):
            log.read_snapshot(SNAP)


def test_deleting_up_to_the_end_leaves_the_snapshot_epoch(tmp_path: Path) -> None:
    """The core's epoch index after deleting the log to its end keeps the last epoch at the
    new start (``fsm.raft.epochs.trimmed``); the summary a restart reads says the same."""
    end = OffsetAndEpoch(40, 2)
    with _log_with_epochs(tmp_path) as log:
        log.write_snapshot(end, [b"all"])
        assert log.delete_before(40) == 40
        assert log.summary() == LogSummary(40, ((2, 40),), 40, end)
    with open_log(tmp_path) as log:
        assert log.summary() == LogSummary(40, ((2, 40),), 40, end)
        assert log.end_offset_for_epoch(5) == end


def test_a_snapshot_of_encoded_records_read_as_values(tmp_path: Path) -> None:
    """A node's log keeps records as bytes; its snapshot is read back decoded, batch by
    batch, with the metadata serde (what a restarted controller loads, issue 26) -- the
    same values as decoding the bytes after; a record that does not decode names the
    file."""
    from adapters.raft_log import METADATA
    from fsm.kraft.records.codec import decode_record, encode_record
    from fsm.kraft.records.uuid import uuid_of
    from fsm.kraft.records.values import PartitionRecord, TopicRecord

    values = [TopicRecord("t", uuid_of(1))] + [
        PartitionRecord(p, uuid_of(1), (1, 2, 3), (1, 2), (), (), 1, p % 5, p % 7)
        for p in range(2500)]
    with _log_with_epochs(tmp_path) as log:
        log.write_snapshot(SNAP, [encode_record(v) for v in values])
        raw = log.read_snapshot(SNAP)
        assert tuple(decode_record(r) for r in raw) == tuple(values)
        assert log.read_snapshot(SNAP, serde=METADATA) == tuple(values)
        other = OffsetAndEpoch(25, 2)
        log.write_snapshot(other, [encode_record(values[0]), b"\x01\x03\x00junk"])
        with pytest.raises(CorruptLogError, match="checkpoint"):
            log.read_snapshot(other, serde=METADATA)
