"""Recovery on open, by corrupting real files: a torn or corrupt tail of the last segment is
cut and never served; a bad batch anywhere else stops the node with CorruptLogError naming
the file, the byte position and the offset."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raft_log_support import batches, flip, open_log, segment_files

from adapters.raft_log import PARTITION_DIR, CorruptLogError
from fsm.raft.messages import Batch

SIZES = [3, 1, 4, 1, 5]  # five batches, 14 records
FUNCTION_SCOPED = [HealthCheck.function_scoped_fixture]


def _written(tmp: Path, sizes: list[int] = SIZES, **kw: int) -> tuple[list[Batch], list[int]]:
    """Write and flush ``sizes`` batches; return them and their byte positions."""
    data = batches(0, sizes)
    with open_log(tmp, **kw) as log:
        log.append(data)
        log.flush()
        positions = [0]
        for b in data:
            positions.append(positions[-1] + len(log.read_bytes(b.base_offset, b.end_offset,
                                                                1)))
    return data, positions


@settings(max_examples=40, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(st.data())
def test_a_cut_anywhere_in_the_last_segment_keeps_the_whole_batches_before_it(
        tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    tmp = tmp_path_factory.mktemp("cut")
    written, positions = _written(tmp)
    (seg,) = segment_files(tmp)
    cut = data.draw(st.integers(0, positions[-1]))
    seg.write_bytes(seg.read_bytes()[:cut])
    whole = max(i for i, p in enumerate(positions) if p <= cut)
    with open_log(tmp) as log:
        assert log.read(0, 100, 100) == tuple(written[:whole])
        assert log.end_offset == (written[whole - 1].end_offset if whole else 0)
        assert bool(log.recovered_tail) == (cut != positions[whole])
    assert seg.stat().st_size == positions[whole]  # the tail is gone from disk too


def test_a_flipped_byte_in_the_final_batch_is_a_torn_tail(tmp_path: Path) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    flip(seg, positions[-2] + 40)  # inside the last batch, after its CRC field
    with open_log(tmp_path) as log:
        assert "CRC-32C mismatch" in log.recovered_tail
        assert log.read(0, 100, 100) == tuple(written[:-1])
        log.append(batches(written[-2].end_offset, [2]))  # the log goes on from there
        log.flush()
    with open_log(tmp_path) as log:
        assert log.recovered_tail == ""
        assert log.end_offset == written[-2].end_offset + 2


@pytest.mark.parametrize("garbage", [b"\x00" * 100, b"\xff" * 7, bytes(range(256)) * 3,
                                     b"\x00" * 8 + b"\x7f\xff\xff\xff"])
def test_garbage_after_the_last_batch_is_cut(tmp_path: Path, garbage: bytes) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    seg.write_bytes(seg.read_bytes() + garbage)
    with open_log(tmp_path) as log:
        assert log.recovered_tail
        assert log.read(0, 100, 100) == tuple(written)
    assert seg.stat().st_size == positions[-1]


@settings(max_examples=30, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(garbage=st.binary(min_size=1, max_size=500))
def test_random_garbage_after_the_last_batch_is_cut(
        tmp_path_factory: pytest.TempPathFactory, garbage: bytes) -> None:
    tmp = tmp_path_factory.mktemp("garbage")
    written, positions = _written(tmp)
    (seg,) = segment_files(tmp)
    seg.write_bytes(seg.read_bytes() + garbage)
    with open_log(tmp) as log:
        assert log.read(0, 100, 100) == tuple(written)


@pytest.mark.parametrize("batch", [0, 1, 3])
def test_a_bad_batch_followed_by_a_good_one_is_corruption(tmp_path: Path, batch: int) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    flip(seg, positions[batch] + 30)
    with pytest.raises(CorruptLogError) as err:
        open_log(tmp_path)
    e = err.value
    assert (e.path, e.position, e.offset) == (str(seg), positions[batch],
                                              written[batch].base_offset)
    assert "CRC-32C mismatch" in str(e) and "not a torn tail" in str(e)
    assert str(seg) in str(e) and f"byte {positions[batch]}" in str(e)
    assert f"offset {written[batch].base_offset}" in str(e)


def test_a_bad_length_in_the_middle_is_corruption(tmp_path: Path) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    raw = bytearray(seg.read_bytes())
    struct.pack_into(">i", raw, positions[1] + 8, 5000)  # a length past the file end
    seg.write_bytes(bytes(raw))
    with pytest.raises(CorruptLogError, match="runs past the file end.*good batch follows"):
        open_log(tmp_path)


def test_a_wrong_base_offset_is_corruption_though_the_crc_passes(tmp_path: Path) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    raw = bytearray(seg.read_bytes())
    struct.pack_into(">q", raw, positions[4], 99)  # the CRC does not cover the base offset
    seg.write_bytes(bytes(raw))
    with pytest.raises(CorruptLogError, match="batch at offset 99, the log before it ends "
                                              "at 9"):
        open_log(tmp_path)


def _three_segments(tmp: Path) -> tuple[list[Batch], list[Path]]:
    data = batches(0, [5] * 30)
    with open_log(tmp, segment_bytes=1024, max_batch_bytes=1024) as log:
        log.append(data)
        log.flush()
    files = segment_files(tmp)
    assert len(files) >= 3
    return data, files


@pytest.mark.parametrize("where", ["first byte after crc", "last byte"])
def test_any_bad_batch_in_an_earlier_segment_is_corruption(tmp_path: Path, where: str
                                                           ) -> None:
    _, files = _three_segments(tmp_path)
    seg = files[1]
    size = seg.stat().st_size
    flip(seg, 21 if where == "first byte after crc" else size - 1)
    with pytest.raises(CorruptLogError, match="not the last segment") as err:
        open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024)
    assert err.value.path == str(seg)
    # a cut at the end of an earlier segment is no torn tail either
    seg.write_bytes(seg.read_bytes()[:size - 3])
    with pytest.raises(CorruptLogError, match=str(seg)):
        open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024)


def test_a_missing_segment_is_a_gap(tmp_path: Path) -> None:
    _, files = _three_segments(tmp_path)
    files[1].unlink()
    base = int(files[2].name[:-4])
    with pytest.raises(CorruptLogError, match=f"the segment starts at offset {base}, the log "
                                              f"before it ends at {int(files[1].name[:-4])}"):
        open_log(tmp_path, segment_bytes=1024, max_batch_bytes=1024)


def test_corruption_after_open_is_caught_on_read(tmp_path: Path) -> None:
    written, positions = _written(tmp_path)
    (seg,) = segment_files(tmp_path)
    with open_log(tmp_path) as log:
        flip(seg, positions[2] + 50)
        assert log.read(0, 4, 10) == tuple(written[:2])
        with pytest.raises(CorruptLogError, match=f"byte {positions[2]} \\(offset 4\\): "
                                                  "CRC-32C mismatch"):
            log.read(4, 100, 10)
        with pytest.raises(CorruptLogError):
            log.read_bytes(0, 100, 10)


def test_leftover_temporary_files_are_deleted(tmp_path: Path) -> None:
    _written(tmp_path)
    d = tmp_path / PARTITION_DIR
    part = d / "00000000000000000005-0000000001.checkpoint.part"
    part.write_bytes(b"half a snapshot")
    tmp_state = d / "quorum-state.tmp"
    tmp_state.write_text("{")
    with open_log(tmp_path) as log:
        assert log.latest_snapshot() is None
    assert not part.exists() and not tmp_state.exists()


@settings(max_examples=60, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(st.data())
def test_a_flip_anywhere_is_cut_or_refused_never_served(
        tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """One byte flipped anywhere in a three-segment log (but in the base offset and epoch
    fields, which the CRC does not cover): opening either raises CorruptLogError or serves
    a prefix of what was written -- and only the last segment may lose its tail."""
    from adapters.raft_log.batch_format import read_header
    tmp = tmp_path_factory.mktemp("flip")
    written = batches(0, [5] * 30)
    with open_log(tmp, segment_bytes=1024, max_batch_bytes=1024) as log:
        log.append(written)
        log.flush()
    files = segment_files(tmp)
    which = data.draw(st.integers(0, len(files) - 1))
    raw = files[which].read_bytes()
    blind, pos = set(), 0
    while pos < len(raw):
        blind |= set(range(pos, pos + 8)) | set(range(pos + 12, pos + 16))
        pos += read_header(raw, pos).size
    at = data.draw(st.integers(0, len(raw) - 1).filter(lambda a: a not in blind))
    flip(files[which], at)
    try:
        log = open_log(tmp, segment_bytes=1024, max_batch_bytes=1024)
    except CorruptLogError as e:
        assert e.path == str(files[which])
        return
    with log:
        got = log.read(0, 1000, 1000)
    assert which == len(files) - 1, "a flip in an earlier segment was not refused"
    assert got == tuple(written[:len(got)]) and len(got) < len(written)
