"""A crash in the middle of a durable operation, by failing the step after some of it was
done: reopening finds a consistent log (a prefix of what was written, never a gap), the old
or the new quorum-state, no half snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from raft_log_support import batches, open_log, segment_files

from adapters.raft_log import PARTITION_DIR, quorum_state_file
from adapters.raft_log.segments import Segment
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import OffsetAndEpoch

SMALL = {"segment_bytes": 512, "max_batch_bytes": 512}


class Crash(Exception):
    pass


def _written(tmp: Path) -> list:
    data = batches(0, [5] * 30)
    with open_log(tmp, **SMALL) as log:
        log.append(data)
        log.flush()
    assert len(segment_files(tmp)) >= 4
    return data


def _reopened_prefix(tmp: Path, data: list) -> int:
    """Reopen: the log must read back a prefix of ``data``; its end."""
    with open_log(tmp, **SMALL) as log:
        got = log.read(log.log_start_offset, log.end_offset, 1000)
        start = next(i for i, b in enumerate(data) if b.base_offset == log.log_start_offset)
        assert got == tuple(data[start:start + len(got)])
        return log.end_offset


@pytest.mark.parametrize("crash_after", [1, 2, 3])
def test_truncate_interrupted_leaves_a_longer_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  crash_after: int) -> None:
    """Each durable step (a segment deleted, the last one cut) completes; the crash comes
    after the ``crash_after``-th. Cutting before deleting would leave a gap here."""
    data = _written(tmp_path)
    steps = []

    def step(real):  # noqa: ANN001, ANN202
        def run(self: Segment, *args: int) -> None:
            real(self, *args)
            steps.append(real.__name__)
            if len(steps) == crash_after:
                raise Crash
        return run

    monkeypatch.setattr(Segment, "delete", step(Segment.delete))
    monkeypatch.setattr(Segment, "truncate", step(Segment.truncate))
    log = open_log(tmp_path, **SMALL)
    with pytest.raises(Crash):
        log.truncate_to(12)
    log.close()
    monkeypatch.undo()
    assert steps[-1] == "delete" or crash_after == len(steps)
    assert _reopened_prefix(tmp_path, data) >= 12


def test_delete_before_interrupted_keeps_the_log_whole(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data = _written(tmp_path)
    with open_log(tmp_path, **SMALL) as log:
        log.write_snapshot(OffsetAndEpoch(10, 1), [b"old"])
        log.write_snapshot(OffsetAndEpoch(100, 1), [b"new"])
    real_delete = Segment.delete
    calls = []

    def delete(self: Segment) -> None:
        if calls:
            raise Crash
        calls.append(self)
        real_delete(self)

    monkeypatch.setattr(Segment, "delete", delete)
    log = open_log(tmp_path, **SMALL)
    with pytest.raises(Crash):
        log.delete_before(100)
    log.close()
    monkeypatch.undo()
    assert _reopened_prefix(tmp_path, data) == 150
    first = int(segment_files(tmp_path)[0].name[:-4])
    with open_log(tmp_path, **SMALL) as log:
        assert 10 < first < 100  # one segment went, the older snapshot did not
        assert log.log_start_offset == first
        assert log.delete_before(100) == 100  # done again: it completes
    with open_log(tmp_path, **SMALL) as log:
        assert log.log_start_offset == 100 and log.snapshot_ids() == (OffsetAndEpoch(100, 1),)


def test_a_quorum_state_write_interrupted_keeps_the_old_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_log(tmp_path) as log:
        log.write_quorum_state(QuorumState(3, 1, 1), (1, 2, 3))
        monkeypatch.setattr(quorum_state_file.os, "replace",
                            lambda a, b: (_ for _ in ()).throw(Crash))
        with pytest.raises(Crash):
            log.write_quorum_state(QuorumState(4, -1, 2))
        monkeypatch.undo()
    assert (tmp_path / PARTITION_DIR / "quorum-state.tmp").exists()
    with open_log(tmp_path) as log:
        assert log.read_quorum_state() == QuorumState(3, 1, 1)
    assert not (tmp_path / PARTITION_DIR / "quorum-state.tmp").exists()


def test_a_snapshot_write_interrupted_leaves_nothing(tmp_path: Path) -> None:
    _written(tmp_path)

    def records() -> Iterator[bytes]:
        yield b"one"
        raise Crash

    with open_log(tmp_path, **SMALL) as log:
        with pytest.raises(Crash):
            log.write_snapshot(OffsetAndEpoch(10, 1), records())
        assert log.latest_snapshot() is None
    assert [p.name for p in (tmp_path / PARTITION_DIR).iterdir()
            if "checkpoint" in p.name] == []
