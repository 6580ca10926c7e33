"""Helpers of the metadata log's tests: a log of bytes records in a temporary directory,
batches to append, and the segment files to corrupt."""

from __future__ import annotations

from pathlib import Path

from adapters.raft_log import BYTES, PARTITION_DIR, MetadataLog
from fsm.raft.messages import Batch


def open_log(tmp: Path, **kw: object) -> MetadataLog:
    return MetadataLog.open(tmp, serde=BYTES, clock_ms=lambda: 1_700_000_000_000, **kw)


def batches(start: int, sizes: list[int], epoch: int = 1) -> list[Batch]:
    """Contiguous data batches of ``sizes`` records each from offset ``start``: record
    ``o`` is ``b"r<o>"``."""
    out = []
    for n in sizes:
        out.append(Batch(start, epoch, tuple(f"r{start + i}".encode() for i in range(n))))
        start += n
    return out


def segment_files(tmp: Path) -> list[Path]:
    return sorted((tmp / PARTITION_DIR).glob("*.log"))


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x40
    path.write_bytes(bytes(data))
