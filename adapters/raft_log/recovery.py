"""What opening the log checks: every batch of every segment (header, CRC, contiguous offsets,
epochs that never go down), building the in-memory index of batches as it goes.

A crash can tear the last write: the **tail** of the last segment -- bad batches (a short
header, a length past the file end, a CRC mismatch) with no good batch after them -- is
truncated, durably, and never served (it was never flushed, so the core never counted it).
Anything else is corruption of data that may have been acknowledged: a bad batch in a segment
before the last, a bad batch followed by a good one, a batch at the wrong offset, a gap
between segments. It raises :class:`CorruptLogError` naming the file, the byte position and
the offset, and the node stops rather than serve it."""

from __future__ import annotations

import mmap
from typing import NamedTuple

from adapters.raft_log.batch_format import (
    HEADER_BYTES,
    MAGIC,
    BatchHeader,
    crc_matches,
    read_header,
)
from adapters.raft_log.errors import CorruptLogError, MalformedBatch
from adapters.raft_log.segments import Segment

_MAGIC_AT = 16


class IndexEntry(NamedTuple):
    """Where one batch is: its offsets and epoch, its segment and byte range."""

    base_offset: int
    end_offset: int
    epoch: int
    segment: Segment
    position: int
    size: int


class Scan(NamedTuple):
    entries: list[IndexEntry]
    good_size: int  # the bytes of whole, good batches from the start of the file
    tail_problem: str  # why the rest (if any) was cut: "" when nothing was


def _check(data: bytes | memoryview, pos: int, size: int, max_batch_bytes: int
           ) -> BatchHeader | str:
    """The header of a whole, CRC-correct batch at ``pos``, or what is wrong with it."""
    if size - pos < HEADER_BYTES:
        return f"{size - pos} bytes left, a batch header is {HEADER_BYTES}"
    try:
        header = read_header(data, pos)
    except MalformedBatch as exc:
        return exc.reason
    if header.size > max_batch_bytes:
        return f"batch of {header.size} bytes, over the bound of {max_batch_bytes}"
    if pos + header.size > size:
        return f"batch of {header.size} bytes runs past the file end ({size})"
    if not crc_matches(data, pos, header):
        return "CRC-32C mismatch"
    return header


def _good_batch_after(data: bytes | memoryview, start: int, size: int, min_offset: int,
                      max_batch_bytes: int) -> int:
    """The position of a good batch (CRC correct, offset >= ``min_offset``) after
    ``start``, or -1: candidates are the bytes 2 at a magic byte's place."""
    magic = bytes((MAGIC,))
    find = data.find if isinstance(data, bytes | mmap.mmap) else bytes(data).find
    at = start + 1 + _MAGIC_AT
    while True:
        at = find(magic, at)
        if at < 0 or at - _MAGIC_AT + HEADER_BYTES > size:
            return -1
        pos = at - _MAGIC_AT
        found = _check(data, pos, size, max_batch_bytes)
        if isinstance(found, BatchHeader) and found.base_offset >= min_offset:
            return pos
        at += 1


def scan_segment(segment: Segment, expected_offset: int, last_epoch: int, *, last: bool,
                 max_batch_bytes: int) -> Scan:
    """Check the batches of ``segment``, which should start at ``expected_offset`` (the
    previous segment's end), with epochs from ``last_epoch`` on. A bad tail is tolerated
    (reported in the result, not cut: the caller truncates) only when ``last``."""
    path = str(segment.path)
    if segment.base_offset != expected_offset:
        raise CorruptLogError(path, 0, expected_offset,
                              f"the segment starts at offset {segment.base_offset}, the log "
                              f"before it ends at {expected_offset}")
    size = segment.size
    if size == 0:
        return Scan([], 0, "")
    entries: list[IndexEntry] = []
    with mmap.mmap(segment.fd, size, access=mmap.ACCESS_READ) as data:
        pos, offset, epoch = 0, expected_offset, last_epoch
        while pos < size:
            found = _check(data, pos, size, max_batch_bytes)
            if isinstance(found, str):
                if not last:
                    raise CorruptLogError(path, pos, offset, found + " (not the last "
                                          "segment: its batches were flushed)")
                after = _good_batch_after(data, pos, size, offset, max_batch_bytes)
                if after >= 0:
                    raise CorruptLogError(path, pos, offset, found + f"; a good batch "
                                          f"follows at byte {after}, so this is not a torn "
                                          "tail")
                return Scan(entries, pos, found)
            if found.base_offset != offset:
                raise CorruptLogError(path, pos, offset, f"batch at offset "
                                      f"{found.base_offset}, the log before it ends at "
                                      f"{offset}")
            if found.epoch < epoch:
                raise CorruptLogError(path, pos, offset, f"epoch {found.epoch} after epoch "
                                      f"{epoch}")
            entries.append(IndexEntry(offset, found.end_offset, found.epoch, segment, pos,
                                      found.size))
            pos, offset, epoch = pos + found.size, found.end_offset, found.epoch
    return Scan(entries, pos, "")
