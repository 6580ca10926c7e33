"""The segment files of the log, ``%020d.log`` named by the offset of their first batch:
each is batches back to back. A segment is written at its end with ``pwrite`` (no user-space
buffer: ``fsync`` makes everything written durable), read with ``pread``; creating or deleting
one fsyncs the directory, so the set of segments on disk is what the log last said."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".log"
NAME_DIGITS = 20


def segment_name(base_offset: int) -> str:
    return f"{base_offset:0{NAME_DIGITS}d}{SUFFIX}"


def parse_segment_name(name: str) -> int | None:
    """The base offset of a segment file's name, or None for another file."""
    stem = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else ""
    if len(stem) != NAME_DIGITS or not stem.isdigit():
        return None
    return int(stem)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(eq=False, slots=True)
class Segment:
    base_offset: int
    path: Path
    fd: int
    size: int

    @classmethod
    def create(cls, directory: Path, base_offset: int) -> Segment:
        """A new, empty segment; the directory is fsynced so the file survives a crash."""
        path = directory / segment_name(base_offset)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fsync_dir(directory)
        return cls(base_offset, path, fd, 0)

    @classmethod
    def open(cls, path: Path, base_offset: int) -> Segment:
        fd = os.open(path, os.O_RDWR)
        return cls(base_offset, path, fd, os.fstat(fd).st_size)

    def write(self, data: bytes) -> int:
        """Append ``data``; the position it starts at."""
        at = self.size
        view = memoryview(data)
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], at + done)
        self.size += len(data)
        return at

    def read(self, position: int, size: int) -> bytes:
        data = os.pread(self.fd, size, position)
        if len(data) != size:
            raise OSError(f"{self.path}: short read of {len(data)} of {size} bytes at "
                          f"{position}")
        return data

    def sync(self) -> None:
        os.fsync(self.fd)

    def truncate(self, size: int) -> None:
        """Cut the file to ``size`` bytes, durably."""
        os.ftruncate(self.fd, size)
        os.fsync(self.fd)
        self.size = size

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        """Close and remove the file, and fsync the directory."""
        self.close()
        self.path.unlink()
        fsync_dir(self.path.parent)
