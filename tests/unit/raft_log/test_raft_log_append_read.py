"""MetadataLog: append, flush, read, truncate, summary, bounds -- what the node shell does
with the Raft core's effects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raft_log_support import batches, open_log, segment_files

from adapters.raft_log import (
    PARTITION_DIR,
    BatchTooLarge,
    MetadataLog,
    OffsetOutOfRange,
)
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import PartitionChangeRecord, TopicRecord
from fsm.raft.log_summary import LogSummary
from fsm.raft.messages import Batch, LeaderChange, OffsetAndEpoch


def test_a_new_log_is_empty_and_makes_its_directory(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        assert log.summary() == LogSummary(0, (), 0, None)
        assert log.read(0, 0, 10) == ()
    assert [p.name for p in (tmp_path / PARTITION_DIR).iterdir()] == [
        "00000000000000000000.log"]


def test_append_read_flush_and_reopen(tmp_path: Path) -> None:
    lc = Batch(0, 1, (LeaderChange(1, (1, 2, 3), (1, 2)),), control=True)
    data = batches(1, [3, 1, 2], epoch=1) + batches(7, [2], epoch=3)
    with open_log(tmp_path) as log:
        assert log.append([lc]) == 1
        assert log.append(data) == 9
        assert log.flushed_offset == 0
        assert log.flush() == 9 and log.flushed_offset == 9
        assert log.read(0, 9, 10) == (lc, *data)
        assert log.summary() == LogSummary(9, ((1, 0), (3, 7)), 0, None)
    with open_log(tmp_path) as log:
        assert log.recovered_tail == ""
        assert log.summary() == LogSummary(9, ((1, 0), (3, 7)), 0, None)
        assert log.read(0, 9, 10) == (lc, *data)


def test_reads_are_bounded_and_stop_at_to_offset(tmp_path: Path) -> None:
    data = batches(0, [2, 2, 2, 2])
    with open_log(tmp_path) as log:
        log.append(data)
        assert log.read(0, 8, 2) == tuple(data[:2])
        assert log.read(2, 8, 10) == tuple(data[1:])
        assert log.read(3, 8, 10) == tuple(data[1:])  # the batch holding 3, whole
        assert log.read(0, 5, 10) == tuple(data[:2])  # the batch ending at 6 is past 5
        assert log.read(0, 8, 0) == ()
        assert log.read(8, 8, 10) == ()
        one = len(log.read_bytes(0, 2, 1))
        assert log.read(0, 8, 10, max_bytes=2 * one) == tuple(data[:2])
        assert log.read(0, 8, 10, max_bytes=1) == tuple(data[:1])  # at least one
        with pytest.raises(OffsetOutOfRange, match=r"read from 9: the log holds \[0, 8\)"):
            log.read(9, 10, 1)


def test_read_bytes_are_the_bytes_on_disk(tmp_path: Path) -> None:
    with open_log(tmp_path, segment_bytes=1 << 20, max_batch_bytes=1 << 20) as log:
        log.append(batches(0, [1, 2, 3]))
        log.flush()
        raw = segment_files(tmp_path)[0].read_bytes()
        assert log.read_bytes(0, 6, 10) == raw
        assert log.read_bytes(1, 6, 1) == log.read_bytes(1, 3, 5)


def test_appends_must_continue_the_log(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        log.append(batches(0, [2], epoch=2))
        with pytest.raises(ValueError, match="batch at offset 3: the log end is 2"):
            log.append(batches(3, [1], epoch=2))
        with pytest.raises(ValueError, match="in epoch 1, after epoch 2"):
            log.append(batches(2, [1], epoch=1))
        with pytest.raises(ValueError, match="no records"):
            log.append([Batch(2, 2, ())])
        with pytest.raises(ValueError, match="only LeaderChange"):
            log.append([Batch(2, 2, (b"x",), control=True)])
        # nothing of a refused call is written, even its good first batches
        with pytest.raises(ValueError):
            log.append([*batches(2, [1], epoch=2), *batches(9, [1], epoch=2)])
        assert log.end_offset == 2


def test_a_batch_over_the_bound_is_refused(tmp_path: Path) -> None:
    with open_log(tmp_path, max_batch_bytes=4096, segment_bytes=8192) as log:
        big = Batch(0, 1, (b"x" * 5000,))
        with pytest.raises(BatchTooLarge, match=r"batch at offset 0 \(1 records\) is 5\d+ "
                                                r"bytes, over max_batch_bytes \(4096\)"):
            log.append([big])
        assert log.end_offset == 0 and segment_files(tmp_path)[0].stat().st_size == 0
    with pytest.raises(ValueError, match="max_batch_bytes"):
        MetadataLog.open(tmp_path, max_batch_bytes=1 << 30)


def test_segments_roll_at_the_size_bound_and_reopen(tmp_path: Path) -> None:
    data = batches(0, [5] * 40)
    with open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024) as log:
        log.append(data[:10])
        log.append(data[10:])
        log.flush()
        files = segment_files(tmp_path)
        assert len(files) > 3
        assert all(f.stat().st_size <= 1024 for f in files)
        bases = [int(f.name[:-4]) for f in files]
        assert bases[0] == 0 and bases == sorted(bases) and all(b % 5 == 0 for b in bases)
        assert log.read(0, 200, 100) == tuple(data)
    with open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024) as log:
        assert log.read(0, 200, 100) == tuple(data)
        assert log.summary().end_offset == 200


def test_truncate_drops_the_suffix_durably(tmp_path: Path) -> None:
    data = batches(0, [5] * 40, epoch=1)
    with open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024) as log:
        log.append(data[:20])
        log.append(batches(100, [5] * 20, epoch=2))
        log.flush()
        n = len(segment_files(tmp_path))
        assert log.truncate_to(300) == 200  # past the end: nothing
        assert log.truncate_to(102) == 100  # inside a batch: the batch goes whole
        assert log.summary().epochs == ((1, 0),)
        assert len(segment_files(tmp_path)) < n
        assert log.truncate_to(35) == 35
        assert log.flushed_offset == 35
        log.append(batches(35, [1], epoch=4))
        assert log.summary() == LogSummary(36, ((1, 0), (4, 35)), 0, None)
    with open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024) as log:
        assert log.summary() == LogSummary(36, ((1, 0), (4, 35)), 0, None)
        assert log.read(30, 36, 10) == (data[6], *batches(35, [1], epoch=4))
        assert log.truncate_to(0) == 0
        assert log.summary() == LogSummary(0, (), 0, None)
        assert len(segment_files(tmp_path)) == 1
        log.append(batches(0, [1]))
    with open_log(tmp_path) as log:
        assert log.end_offset == 1


def test_end_offset_for_epoch(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        assert log.end_offset_for_epoch(3) == OffsetAndEpoch(-1, -1)
        log.append(batches(0, [2], epoch=1) + batches(2, [3], epoch=3)
                   + batches(5, [1], epoch=6))
        assert log.end_offset_for_epoch(0) == OffsetAndEpoch(-1, -1)
        assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
        assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)
        assert log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 3)
        assert log.end_offset_for_epoch(5) == OffsetAndEpoch(5, 3)
        assert log.end_offset_for_epoch(6) == OffsetAndEpoch(6, 6)
        assert log.end_offset_for_epoch(9) == OffsetAndEpoch(6, 6)


def test_the_default_serde_is_the_metadata_record_codec(tmp_path: Path) -> None:
    recs = (TopicRecord("t", uuid_of(1)), PartitionChangeRecord(0, uuid_of(1), leader=2))
    with MetadataLog.open(tmp_path) as log:
        log.append([Batch(0, 1, recs)])
        log.flush()
    with MetadataLog.open(tmp_path) as log:
        assert log.read(0, 2, 1) == (Batch(0, 1, recs),)
    with pytest.raises(ValueError, match="not a metadata record: bytes"), \
            MetadataLog.open(tmp_path) as log:
        log.append([Batch(2, 1, (b"raw",))])


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.tuples(st.just("append"), st.lists(st.integers(1, 4), min_size=1, max_size=4),
              st.integers(0, 2)),
    st.tuples(st.just("truncate"), st.integers(0, 40)),
    st.tuples(st.just("reopen"))), max_size=12))
def test_the_log_is_its_model_through_appends_truncations_and_reopens(
        tmp_path_factory: pytest.TempPathFactory, steps: list) -> None:
    """A list of batches is the model; the log (small segments, so they roll) must read back
    the same batches and summary after every step, and after a reopen."""
    tmp = tmp_path_factory.mktemp("model")
    model: list[Batch] = []
    log = open_log(tmp, segment_bytes=256, max_batch_bytes=256)
    try:
        for step in steps:
            end = model[-1].end_offset if model else 0
            if step[0] == "append":
                epoch = (model[-1].epoch if model else 0) + step[2]
                new = batches(end, step[1], epoch)
                log.append(new)
                model += new
            elif step[0] == "truncate":
                log.truncate_to(step[1])
                model = [b for b in model if b.end_offset <= step[1]]
            else:
                log.flush()
                log.close()
                log = open_log(tmp, segment_bytes=256, max_batch_bytes=256)
            end = model[-1].end_offset if model else 0
            assert log.read(0, end, 1000) == tuple(model)
            assert log.end_offset == end
            epochs: list[tuple[int, int]] = []
            for b in model:
                if not epochs or epochs[-1][0] != b.epoch:
                    epochs.append((b.epoch, b.base_offset))
            assert log.summary().epochs == tuple(epochs)
    finally:
        log.close()


def test_directory_and_files(tmp_path: Path) -> None:
    with open_log(tmp_path, segment_bytes=512, max_batch_bytes=512) as log:
        log.append(batches(0, [5] * 10))
    names = sorted(os.listdir(tmp_path / PARTITION_DIR))
    assert all(len(n) == 24 and n.endswith(".log") for n in names)
