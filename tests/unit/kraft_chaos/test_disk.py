"""``SmallDisk`` on a real tmpfs (skipped, with the reason, where this process cannot mount)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.kraft_chaos.disk import DiskError, SmallDisk, mount_problem

PROBLEM = mount_problem()
needs_mount = pytest.mark.skipif(PROBLEM is not None, reason=f"no small disk here: {PROBLEM}")


def test_mount_problem_is_an_answer_asked_once() -> None:
    first = mount_problem()
    assert first is None or (isinstance(first, str) and "\n" not in first)
    assert mount_problem() is first


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    d = SmallDisk(tmp_path / "data", size_mib=2)
    yield d
    d.unmount()


def _write(path: Path, data: bytes = b"x" * 8192) -> None:
    path.write_bytes(data)


@needs_mount
def test_fill_then_restore(disk: SmallDisk) -> None:
    _write(disk.path / "log")
    written = disk.fill()
    assert 1 << 20 < written <= 2 << 20
    assert disk.state == "full" and disk.free_bytes() == 0
    with pytest.raises(OSError) as caught:
        _write(disk.path / "more")
    assert caught.value.errno == errno.ENOSPC
    disk.restore()
    assert disk.state == "ok"
    _write(disk.path / "more")
    assert (disk.path / "log").read_bytes() == b"x" * 8192


@needs_mount
def test_read_only_with_and_without_a_writer(disk: SmallDisk) -> None:
    with open(disk.path / "segment", "ab") as held:  # a node's open segment
        held.write(b"a")
        held.flush()
        disk.read_only()
        assert disk.state == "read-only"
        with pytest.raises(OSError) as caught:
            _write(disk.path / "snapshot")
        assert caught.value.errno == errno.EROFS
        with pytest.raises(OSError) as caught:
            os.replace(disk.path / "segment", disk.path / "renamed")
        assert caught.value.errno == errno.EROFS
        disk.restore()
        held.write(b"b")
    _write(disk.path / "snapshot")
    assert (disk.path / "segment").read_bytes() == b"ab"
    disk.read_only()  # no writer now: a real remount
    with pytest.raises(OSError) as caught:
        (disk.path / "segment").open("ab")
    assert caught.value.errno == errno.EROFS
    with pytest.raises(DiskError, match="read-only"):
        disk.fill()
    disk.restore()
    _write(disk.path / "segment")


@needs_mount
def test_unmount_is_idempotent_and_the_files_go(disk: SmallDisk) -> None:
    _write(disk.path / "log")
    disk.unmount()
    disk.unmount()
    assert disk.state == "unmounted" and not os.path.ismount(disk.path)
    assert not (disk.path / "log").exists()
    with pytest.raises(DiskError, match="unmounted"):
        disk.fill()


@needs_mount
def test_a_directory_with_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        SmallDisk(tmp_path)
    with pytest.raises(ValueError, match="1 to"):
        SmallDisk(tmp_path / "x", size_mib=0)
