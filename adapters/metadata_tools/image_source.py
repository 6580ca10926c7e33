"""Where the metadata shell's image comes from, on disk: a snapshot file, or a node's
metadata log directory (its latest snapshot and the log after it). Read-only: nothing is
truncated, created or deleted (``MetadataLog.open`` would recover, which cuts a torn tail:
the shell may look at a live node's directory). The image is built by replaying the records
with the pure image code (``fsm.kraft.image``), as a controller loads its snapshot and replays
its committed batches (``fsm/kraft/on_raft.py``).

The high watermark is not on disk: from a directory, every whole batch after the snapshot is
replayed, committed or not (a leader's uncommitted tail included). The last segment is read
up to its first byte that does not decode -- a torn tail, the bytes a crash or a write in
progress leaves -- and what was left out is reported (``Loaded.note``). Damage anywhere else
(an earlier segment, the snapshot, a record that does not replay) is a :class:`SourceError`
naming the file and the byte."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.metadata_tools.dump_format import DumpError, batches
from adapters.metadata_tools.shell_tree import Provenance
from adapters.raft_log import METADATA, PARTITION_DIR
from adapters.raft_log.control_records import SnapshotHeader
from adapters.raft_log.errors import CorruptLogError
from adapters.raft_log.log import MAX_BATCH_BYTES_LIMIT
from adapters.raft_log.segments import parse_segment_name
from adapters.raft_log.snapshots import iter_batches, list_snapshots, parse_snapshot_name
from fsm.kraft.image import ImageError, MetadataImage
from fsm.kraft.records.codec import decode_record
from fsm.kraft.records.errors import MalformedRecord
from fsm.raft.messages import OffsetAndEpoch

MAX_RETRIES = 3
"""A live node may delete a segment between the listing and the read (a new snapshot):
the directory is read again, at most this many times."""


class SourceError(Exception):
    """The image could not be read; the message names the file (or address) and what."""


@dataclass(frozen=True, slots=True)
class Loaded:
    image: MetadataImage
    provenance: Provenance
    source: str  # what was read, for /local/source
    note: str = ""  # what the reader should know (a torn tail left out)


def _replay(image: MetadataImage, records: Iterable[Any], where: str) -> None:
    try:
        image.apply_all(records)
    except ImageError as exc:
        raise SourceError(f"{where}: the records do not replay: {exc}") from None


def snapshot_records(data: bytes, snap: OffsetAndEpoch, where: str
                     ) -> tuple[list[Any], int]:
    """The metadata records of a snapshot's bytes and its header's timestamp; every batch
    checked (``SourceError`` naming the byte otherwise)."""
    out: list[Any] = []
    timestamp = 0
    try:
        for batch in iter_batches(data, snap, METADATA, where, MAX_BATCH_BYTES_LIMIT):
            if batch.control:
                for r in batch.records:
                    if isinstance(r, SnapshotHeader):
                        timestamp = r.last_contained_log_timestamp
            else:
                out.extend(batch.records)
    except CorruptLogError as exc:
        raise SourceError(str(exc)) from None
    return out, timestamp


def snapshot_id_of(path: Path) -> OffsetAndEpoch:
    snap = parse_snapshot_name(path.name)
    if snap is None:
        raise SourceError(f"{path}: a snapshot file is named <end offset %020d>-<epoch %010d>"
                          ".checkpoint (the name says where the snapshot ends)")
    return snap


def load_snapshot(path: Path) -> Loaded:
    """The image of one snapshot file."""
    snap = snapshot_id_of(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    records, timestamp = snapshot_records(data, snap, str(path))
    image = MetadataImage()
    _replay(image, records, str(path))
    return Loaded(image, Provenance(snap.offset - 1, snap.epoch, timestamp),
                  f"snapshot {path}")


def partition_dir(directory: Path) -> Path:
    """``directory`` itself if it holds the log's files, else its ``__cluster_metadata-0``."""
    if (directory / PARTITION_DIR).is_dir():
        return directory / PARTITION_DIR
    if directory.is_dir():
        return directory
    raise SourceError(f"{directory}: no such directory")


def load_directory(directory: Path) -> Loaded:
    """The image of a node's metadata log directory (``metadata.log.dir`` or its
    ``__cluster_metadata-0``): the latest snapshot, then every whole batch after it."""
    for attempt in range(MAX_RETRIES):
        try:
            return _load_directory(partition_dir(directory))
        except FileNotFoundError:
            if attempt == MAX_RETRIES - 1:
                raise SourceError(f"{directory}: files kept disappearing while read (a node "
                                  "deleting its log below a new snapshot); try again") from None
    raise AssertionError("unreachable")


def _load_directory(d: Path) -> Loaded:
    snaps = list_snapshots(d)
    segments = sorted((base, p) for p in d.iterdir()
                      if (base := parse_segment_name(p.name)) is not None)
    if not snaps and not segments:
        raise SourceError(f"{d}: no snapshot and no segment: not a metadata log directory")
    image = MetadataImage()
    start = 0
    provenance = Provenance()
    parts = []
    if snaps:
        snap = snaps[-1]
        path = d / (f"{snap.offset:020d}-{snap.epoch:010d}.checkpoint")
        records, timestamp = snapshot_records(path.read_bytes(), snap, str(path))
        _replay(image, records, str(path))
        start = snap.offset
        provenance = Provenance(snap.offset - 1, snap.epoch, timestamp)
        parts.append(f"snapshot {path.name}")
    # the segments holding offsets at or after the snapshot's
    keep = [i for i, (base, _) in enumerate(segments)
            if i + 1 == len(segments) or segments[i + 1][0] > start]
    segments = segments[keep[0]:] if keep else []
    if segments and segments[0][0] > start:
        raise SourceError(f"{segments[0][1]}: the log starts at offset {segments[0][0]}, "
                          f"after {'the snapshot' if snaps else 'offset 0'} ({start}): "
                          "records are missing")
    note = ""
    replayed = 0
    for i, (base, path) in enumerate(segments):
        data = path.read_bytes()
        last = i == len(segments) - 1
        try:
            for b in batches(data, base):
                if b.header.end_offset <= start:
                    continue
                if not b.header.control:
                    records = [_decode(r.value, r.offset, r.position, path)
                               for r in b.records if r.offset >= start]
                    _replay(image, records, f"{path} (offset {b.header.base_offset})")
                    replayed += len(records)
                provenance = Provenance(b.header.end_offset - 1, b.header.epoch,
                                        b.header.max_timestamp)
        except DumpError as exc:
            if not last:
                raise SourceError(f"{path}: {exc} (not the last segment)") from None
            note = (f"{path.name}: the tail from byte {exc.position} was left out "
                    f"({exc.reason})")
    if segments:
        parts.append(f"{len(segments)} segment(s)")
    after = "after the snapshot" if snaps else "from the log start"
    source = f"directory {d} ({', '.join(parts) or 'empty'}; {replayed} records replayed " \
             f"{after}, committed or not)"
    return Loaded(image, provenance, source, note)


def _decode(value: bytes | None, offset: int, position: int, path: Path) -> Any:
    if value is None:
        raise SourceError(f"{path}: byte {position} (offset {offset}): a null record value")
    try:
        return decode_record(value)
    except MalformedRecord as exc:
        raise SourceError(f"{path}: byte {position} (offset {offset}): {exc}") from None

