"""Snapshot files, ``%020d-%010d.checkpoint`` named by the snapshot id (its end offset, the
epoch of the record before it): Kafka's layout -- record batches v2 at offsets 0, 1, ... of
the snapshot, in the snapshot's epoch: a control batch with the SnapshotHeader record, the
state machine's records, a control batch with the SnapshotFooter record.

A snapshot is written to ``<name>.checkpoint.part``, fsynced, renamed, and the directory
fsynced: a ``.checkpoint`` file is always whole; a ``.part`` left by a crash is deleted when
the log opens. Reading checks every batch (header, CRC, offsets, epoch, the header first and
the footer last) and raises :class:`CorruptLogError` naming the file."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from adapters.raft_log import batches
from adapters.raft_log.batch_format import HEADER_BYTES, crc_matches, encode_batch, read_header
from adapters.raft_log.control_records import (
    SnapshotFooter,
    SnapshotHeader,
    encode_control,
)
from adapters.raft_log.errors import BatchTooLarge, CorruptLogError, MalformedBatch
from adapters.raft_log.segments import fsync_dir
from adapters.raft_log.serde import RecordSerde
from fsm.raft.messages import Batch, OffsetAndEpoch

SUFFIX = ".checkpoint"
PART_SUFFIX = ".checkpoint.part"
RECORDS_PER_BATCH = 1024
_RECORD_FRAMING = 20  # a record's bytes beyond its value, at most (varints, attributes)


def snapshot_name(snapshot_id: OffsetAndEpoch) -> str:
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}{SUFFIX}"


def parse_snapshot_name(name: str) -> OffsetAndEpoch | None:
    if not name.endswith(SUFFIX):
        return None
    offset, dash, epoch = name[:-len(SUFFIX)].partition("-")
    if dash != "-" or len(offset) != 20 or len(epoch) != 10 or not (
            offset.isdigit() and epoch.isdigit()):
        return None
    return OffsetAndEpoch(int(offset), int(epoch))


def list_snapshots(directory: Path) -> list[OffsetAndEpoch]:
    """The snapshots on disk, oldest first."""
    found = (parse_snapshot_name(p.name) for p in directory.iterdir())
    return sorted(s for s in found if s is not None)


def remove_partial(directory: Path) -> list[Path]:
    """Delete the ``.part`` files a crash left; the paths deleted."""
    gone = [p for p in directory.iterdir() if p.name.endswith(PART_SUFFIX)]
    for p in gone:
        p.unlink()
    if gone:
        fsync_dir(directory)
    return gone


def encode_snapshot(snapshot_id: OffsetAndEpoch, records: Iterable[Any], serde: RecordSerde,
                    *, timestamp_ms: int, max_batch_bytes: int,
                    records_per_batch: int = RECORDS_PER_BATCH) -> Iterator[bytes]:
    """The batches of a snapshot of ``records``, one bytes object per batch: bounded
    memory whatever the number of records."""
    epoch = snapshot_id.epoch
    key, value = encode_control(SnapshotHeader(timestamp_ms))
    yield encode_batch(0, epoch, [(key, value)], control=True, timestamp_ms=timestamp_ms)
    offset = 1
    pending: list[tuple[None, bytes]] = []
    pending_bytes = 0
    budget = max_batch_bytes - HEADER_BYTES
    for record in records:
        value = serde.encode(record)
        need = len(value) + _RECORD_FRAMING
        if need > budget:
            raise BatchTooLarge(f"a snapshot record of {len(value)} bytes is over the batch "
                                f"bound ({max_batch_bytes} bytes with framing)")
        if pending and (len(pending) >= records_per_batch or pending_bytes + need > budget):
            yield encode_batch(offset, epoch, pending, timestamp_ms=timestamp_ms)
            offset += len(pending)
            pending, pending_bytes = [], 0
        pending.append((None, value))
        pending_bytes += need
    if pending:
        yield encode_batch(offset, epoch, pending, timestamp_ms=timestamp_ms)
        offset += len(pending)
    key, value = encode_control(SnapshotFooter())
    yield encode_batch(offset, epoch, [(key, value)], control=True, timestamp_ms=timestamp_ms)


def write_file(directory: Path, snapshot_id: OffsetAndEpoch, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` as the snapshot ``snapshot_id`` (part file, fsync, rename, fsync the
    directory); its size in bytes."""
    final = directory / snapshot_name(snapshot_id)
    part = final.with_name(final.name + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    size = 0
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            done = 0
            while done < len(view):
                done += os.write(fd, view[done:])
            size += len(chunk)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        part.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(part, final)
    fsync_dir(directory)
    return size


def iter_batches(data: bytes | memoryview, snapshot_id: OffsetAndEpoch, serde: RecordSerde,
                 path: str, max_batch_bytes: int) -> Iterator[Batch]:
    """Every batch of a snapshot's bytes, checked; the header and footer included."""
    size = len(data)
    pos = offset = 0
    last: Batch | None = None
    while pos < size:
        try:
            if size - pos < HEADER_BYTES:
                raise MalformedBatch(f"{size - pos} bytes left, a batch header is "
                                     f"{HEADER_BYTES}")
            header = read_header(data, pos)
            if header.size > max_batch_bytes or pos + header.size > size:
                raise MalformedBatch(f"batch of {header.size} bytes does not fit")
            if not crc_matches(data, pos, header):
                raise MalformedBatch("CRC-32C mismatch")
            if header.base_offset != offset or header.epoch != snapshot_id.epoch:
                raise MalformedBatch(f"batch at offset {header.base_offset} epoch "
                                     f"{header.epoch}, expected offset {offset} epoch "
                                     f"{snapshot_id.epoch}")
            batch = batches.decode(data, header, serde, pos)
            if offset == 0 and not (batch.control and isinstance(batch.records[0],
                                                                 SnapshotHeader)):
                raise MalformedBatch("the first batch is not the SnapshotHeader")
        except MalformedBatch as exc:
            raise CorruptLogError(path, pos + exc.position, offset, exc.reason) from None
        yield batch
        last = batch
        pos, offset = pos + header.size, header.end_offset
    if last is None or not (last.control and isinstance(last.records[-1], SnapshotFooter)):
        raise CorruptLogError(path, size, offset, "the snapshot does not end with the "
                              "SnapshotFooter")


def records_of(data: bytes | memoryview, snapshot_id: OffsetAndEpoch, serde: RecordSerde,
               path: str, max_batch_bytes: int) -> tuple[Any, ...]:
    """The state machine's records of a snapshot's bytes (no header, no footer)."""
    out: list[Any] = []
    for batch in iter_batches(data, snapshot_id, serde, path, max_batch_bytes):
        if not batch.control:
            out.extend(batch.records)
    return tuple(out)
