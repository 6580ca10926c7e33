"""``MetadataLog``: the metadata quorum's log on disk, ``<metadata.log.dir>/__cluster_metadata-0/``
-- segments of record batches v2, the ``quorum-state`` file, snapshots. A node shell carries
out the Raft core's effects on it (``AppendBatches`` -> :meth:`append`, ``Flush`` ->
:meth:`flush`, ``TruncateTo`` -> :meth:`truncate_to`, ``PersistQuorumState`` ->
:meth:`write_quorum_state`, ``InstallSnapshot`` -> :meth:`install_snapshot`, ``DeleteBefore``
-> :meth:`delete_before`; ``SendRecords`` and ``SendSnapshotChunk`` read) and builds the core's
start (``LogSummary``, ``QuorumState``) from it.

Single-threaded: the shell calls it from one thread. The index of batches (offsets, epoch,
segment, position) is kept in memory, rebuilt by :func:`~adapters.raft_log.recovery.scan_segment`
on open (Kafka keeps index files; a metadata log between snapshots is small enough to scan).

Durability: :meth:`append` writes without fsync; :meth:`flush` fsyncs and returns the durable
end. A segment is fsynced before the next is created (so only the last segment can have a
torn tail); creating and deleting segments fsync the directory; :meth:`truncate_to`,
:meth:`write_quorum_state`, snapshots and :meth:`delete_before` are durable when they return.

The log start offset is the first segment's base offset, or the oldest snapshot's end offset
if that is higher: after :meth:`delete_before` it is the snapshot it kept, exactly; a snapshot
written without a ``delete_before`` yet moves the start to it at the next open (records below
a snapshot are never needed)."""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from adapters.raft_log import batches, quorum_state_file, snapshot_image, snapshots
from adapters.raft_log.batch_format import crc_matches, read_header
from adapters.raft_log.errors import (
    BatchTooLarge,
    CorruptLogError,
    MalformedBatch,
    OffsetOutOfRange,
)
from adapters.raft_log.recovery import IndexEntry, scan_segment
from adapters.raft_log.segments import Segment, fsync_dir, parse_segment_name
from adapters.raft_log.serde import METADATA, RecordSerde
from fsm.kraft.image.image import MetadataImage
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, LeaderChange, OffsetAndEpoch

PARTITION_DIR = "__cluster_metadata-0"
DEFAULT_SEGMENT_BYTES = 8 << 20
DEFAULT_MAX_BATCH_BYTES = 1 << 20
MAX_BATCH_BYTES_LIMIT = 16 << 20
"""No batch larger than this is written or read: a header announcing more is corrupt."""
DEFAULT_MAX_READ_BYTES = 8 << 20


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class MetadataLog:
    """Open with :meth:`open`; close with :meth:`close` (or use it as a context manager)."""

    def __init__(self, directory: Path, serde: RecordSerde, segment_bytes: int,
                 max_batch_bytes: int, clock_ms: Callable[[], int]) -> None:
        self.directory = directory
        self.serde = serde
        self.segment_bytes = segment_bytes
        self.max_batch_bytes = max_batch_bytes
        self._clock_ms = clock_ms
        self._segments: list[Segment] = []
        self._index: list[IndexEntry] = []
        self._bases: list[int] = []  # the index's base offsets, for bisect
        self._epochs: list[tuple[int, int]] = []  # (epoch, start offset), ascending
        self._end = 0
        self._flushed = 0
        self._log_start = 0
        self._snapshots: list[OffsetAndEpoch] = []
        self.recovered_tail = ""  # why recovery cut the last segment's tail ("": it did not)

    # -- opening and closing -----------------------------------------------------------------
    @classmethod
    def open(cls, log_dir: str | os.PathLike[str], *, serde: RecordSerde = METADATA,
             segment_bytes: int = DEFAULT_SEGMENT_BYTES,
             max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
             clock_ms: Callable[[], int] = _wall_clock_ms) -> MetadataLog:
        """Open (creating it if need be) the log under ``log_dir`` (``metadata.log.dir``) and
        recover it: see :mod:`adapters.raft_log.recovery`. ``CorruptLogError`` if it holds
        corrupt data other than a torn tail."""
        if not 0 < max_batch_bytes <= MAX_BATCH_BYTES_LIMIT:
            raise ValueError(f"max_batch_bytes {max_batch_bytes} is not in "
                             f"(0, {MAX_BATCH_BYTES_LIMIT}]")
        if segment_bytes < max_batch_bytes:
            raise ValueError(f"segment_bytes {segment_bytes} is under max_batch_bytes "
                             f"{max_batch_bytes}")
        parent = Path(log_dir)
        directory = parent / PARTITION_DIR
        if not directory.is_dir():
            directory.mkdir(parents=True, exist_ok=True)
            fsync_dir(parent)
        log = cls(directory, serde, segment_bytes, max_batch_bytes, clock_ms)
        try:
            log._recover()
        except BaseException:
            log.close()
            raise
        return log

    def _recover(self) -> None:
        d = self.directory
        snapshots.remove_partial(d)
        quorum_state_file.remove_temp(d)
        self._snapshots = snapshots.list_snapshots(d)
        found = sorted((base, p) for p in d.iterdir()
                       if (base := parse_segment_name(p.name)) is not None)
        self._segments = [Segment.open(p, base) for base, p in found]
        expected = self._segments[0].base_offset if self._segments else 0
        epoch = 0
        for i, segment in enumerate(self._segments):
            last = i == len(self._segments) - 1
            scan = scan_segment(segment, expected, epoch, last=last,
                                max_batch_bytes=MAX_BATCH_BYTES_LIMIT)
            if scan.good_size < segment.size:
                self.recovered_tail = (f"{segment.path}: cut {segment.size - scan.good_size} "
                                       f"bytes at byte {scan.good_size}: {scan.tail_problem}")
                segment.truncate(scan.good_size)
            for entry in scan.entries:
                self._add_entry(entry)
            if scan.entries:
                expected, epoch = scan.entries[-1].end_offset, scan.entries[-1].epoch
        self._end = self._flushed = expected
        latest = self._snapshots[-1] if self._snapshots else None
        if latest is not None and latest.offset > self._end:
            self._reset_to(latest.offset)  # installed, then a crash before the log was reset
        elif not self._segments:
            self._segments.append(Segment.create(d, self._end))
        first = self._segments[0].base_offset
        self._log_start = max(first, self._snapshots[0].offset if self._snapshots else 0)

    def close(self) -> None:
        for segment in self._segments:
            segment.close()

    def __enter__(self) -> MetadataLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the core starts from -----------------------------------------------------------
    @property
    def end_offset(self) -> int:
        return self._end

    @property
    def flushed_offset(self) -> int:
        """The durable end: what survives a crash."""
        return self._flushed

    @property
    def log_start_offset(self) -> int:
        return self._log_start

    def summary(self) -> LogSummary:
        """What the core starts from. With no record above the log start, the epochs are
        the latest snapshot's alone, at the log start -- the core's own index after it
        installs a snapshot or deletes the log up to its end (``fsm.raft.epochs``)."""
        epochs = self._live_epochs()
        snap = self.latest_snapshot()
        if not epochs and snap is not None and snap.offset == self._log_start:
            epochs = ((snap.epoch, self._log_start),)
        return LogSummary(end_offset=self._end, epochs=epochs,
                          log_start_offset=self._log_start, snapshot_id=snap)

    def _live_epochs(self) -> tuple[tuple[int, int], ...]:
        """The epochs with records at or after the log start, the first clamped to it."""
        start = self._log_start
        out = []
        for i, (epoch, first) in enumerate(self._epochs):
            nxt = self._epochs[i + 1][1] if i + 1 < len(self._epochs) else self._end
            if nxt > start:
                out.append((epoch, max(first, start)))
        return tuple(out)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The largest epoch <= ``epoch`` this log knows (its records, or the latest
        snapshot's) and the offset where it ends -- Kafka's answer to a diverging fetch.
        ``OffsetAndEpoch(-1, -1)`` if every epoch known is above ``epoch``."""
        live = self._live_epochs()
        i = bisect.bisect_right(live, (epoch, float("inf"))) - 1
        if i >= 0:
            end = live[i + 1][1] if i + 1 < len(live) else self._end
            return OffsetAndEpoch(end, live[i][0])
        snap = self.latest_snapshot()
        if snap is not None and snap.epoch <= epoch:
            return OffsetAndEpoch(live[0][1] if live else self._end, snap.epoch)
        return OffsetAndEpoch(-1, -1)

    # -- appending -----------------------------------------------------------------------------
    def append(self, batch_list: Sequence[Batch]) -> int:
        """Append ``batch_list`` at the log end (not yet durable: :meth:`flush`); the new end.
        Each batch must start where the previous ends, in an epoch no lower; a batch whose
        encoding is over ``max_batch_bytes`` raises :class:`BatchTooLarge`. Nothing is
        written unless every batch is good.

        A batch with ``raw`` bytes (a follower's fetched batch, decoded with ``keep_raw``) is
        written as those bytes when their header agrees with the batch (offset, epoch, count,
        control flag, length): a follower's segments hold the leader's bytes, not a second
        encoding. Otherwise its records are encoded, as for any batch."""
        encoded: list[tuple[Batch, bytes]] = []
        end = self._end
        snap = self.latest_snapshot()
        epoch = (self._epochs[-1][0] if self._epochs
                 else snap.epoch if snap is not None and snap.offset == end else 0)
        now = self._clock_ms()
        for batch in batch_list:
            if batch.base_offset != end:
                raise ValueError(f"batch at offset {batch.base_offset}: the log end is {end}")
            if batch.epoch < epoch:
                raise ValueError(f"batch at offset {batch.base_offset} in epoch "
                                 f"{batch.epoch}, after epoch {epoch}")
            if batch.control and not all(isinstance(r, LeaderChange) for r in batch.records):
                raise ValueError(f"control batch at offset {batch.base_offset}: only "
                                 "LeaderChange records go in the log")
            if batch.raw is not None and batches.raw_fits(batch):
                data = batch.raw  # a fetched batch: the leader's bytes, as they came
            else:
                data = batches.encode(batch, self.serde, now)
            if len(data) > self.max_batch_bytes:
                raise BatchTooLarge(f"batch at offset {batch.base_offset} ({len(batch.records)}"
                                    f" records) is {len(data)} bytes, over max_batch_bytes "
                                    f"({self.max_batch_bytes})")
            encoded.append((batch, data))
            end, epoch = batch.end_offset, batch.epoch
        pending: list[tuple[Batch, bytes]] = []
        active = self._segments[-1]
        room = self.segment_bytes - active.size
        for batch, data in encoded:
            if len(data) > room and (active.size or pending):
                self._write(active, pending)
                pending = []
                active = self._roll(batch.base_offset)
                room = self.segment_bytes
            pending.append((batch, data))
            room -= len(data)
        self._write(active, pending)
        return self._end

    def _write(self, segment: Segment, pending: list[tuple[Batch, bytes]]) -> None:
        if not pending:
            return
        position = segment.size
        try:
            segment.write(b"".join(data for _, data in pending))
        except OSError:
            segment.truncate(position)  # a partial write (disk full) is not left behind
            raise
        for batch, data in pending:
            self._add_entry(IndexEntry(batch.base_offset, batch.end_offset, batch.epoch,
                                       segment, position, len(data)))
            position += len(data)

    def _add_entry(self, entry: IndexEntry) -> None:
        self._index.append(entry)
        self._bases.append(entry.base_offset)
        if not self._epochs or self._epochs[-1][0] != entry.epoch:
            self._epochs.append((entry.epoch, entry.base_offset))
        self._end = entry.end_offset

    def _roll(self, base_offset: int) -> Segment:
        """Make the active segment durable, then start a new one at ``base_offset``."""
        self._segments[-1].sync()
        self._flushed = self._end
        segment = Segment.create(self.directory, base_offset)
        self._segments.append(segment)
        return segment

    def flush(self) -> int:
        """fsync the log to its end (older segments were at their roll); the durable end."""
        if self._flushed < self._end:
            self._segments[-1].sync()
            self._flushed = self._end
        return self._flushed

    # -- truncating ----------------------------------------------------------------------------
    def truncate_to(self, offset: int) -> int:
        """Drop every record at ``offset`` and after, durably; the new end. A batch holding
        ``offset`` goes whole (Kafka's rule: batches are never split), so the end may land
        below ``offset``. No-op at or past the end."""
        if offset < self._log_start:
            raise OffsetOutOfRange(f"truncate to {offset}: below the log start "
                                   f"{self._log_start}")
        if offset >= self._end:
            return self._end
        cut = bisect.bisect_right(self._bases, offset) - 1  # the batch holding offset
        new_end = self._index[cut].base_offset
        # segments wholly at or after the new end go first, highest first (no gap on a crash)
        while len(self._segments) > 1 and self._segments[-1].base_offset >= new_end:
            self._segments.pop().delete()
        segment = self._segments[-1]
        first_cut = self._index[cut]
        if first_cut.segment is segment:
            segment.truncate(first_cut.position)
        elif segment.base_offset >= new_end:
            segment.truncate(0)  # the only segment left starts at the new end
        del self._index[cut:]
        del self._bases[cut:]
        while self._epochs and self._epochs[-1][1] >= new_end:
            self._epochs.pop()
        self._end = self._flushed = new_end  # the cut segment fsynced, earlier ones at roll
        return new_end

    truncate = truncate_to  # the name the node shell's port uses

    # -- reading -------------------------------------------------------------------------------
    def _select(self, from_offset: int, to_offset: int, max_batches: int,
                max_bytes: int) -> list[IndexEntry]:
        if not self._log_start <= from_offset <= self._end:
            raise OffsetOutOfRange(f"read from {from_offset}: the log holds "
                                   f"[{self._log_start}, {self._end})")
        if max_batches < 0 or max_bytes < 0:
            raise ValueError(f"max_batches {max_batches}, max_bytes {max_bytes}: negative")
        i = max(bisect.bisect_right(self._bases, from_offset) - 1, 0)
        out: list[IndexEntry] = []
        size = 0
        while i < len(self._index) and len(out) < max_batches:
            entry = self._index[i]
            if entry.end_offset > to_offset or (out and size + entry.size > max_bytes):
                break
            if entry.end_offset > from_offset:
                out.append(entry)
                size += entry.size
            i += 1
        return out

    def _read_spans(self, entries: list[IndexEntry]) -> list[tuple[IndexEntry, bytes, int]]:
        """Each entry with the bytes it was read in (one pread per run in a segment) and its
        position in them, its header and CRC checked again (the disk may have rotted)."""
        out: list[tuple[IndexEntry, bytes, int]] = []
        j = 0
        while j < len(entries):
            k = j + 1
            while k < len(entries) and entries[k].segment is entries[j].segment:
                k += 1
            first, last = entries[j], entries[k - 1]
            data = first.segment.read(first.position,
                                      last.position + last.size - first.position)
            for e in entries[j:k]:
                at = e.position - first.position
                self._verify(data, at, e)
                out.append((e, data, at))
            j = k
        return out

    def _verify(self, data: bytes, at: int, entry: IndexEntry) -> None:
        try:
            header = read_header(data, at)
            if header.base_offset != entry.base_offset or header.size != entry.size:
                raise MalformedBatch("the batch changed on disk since the log was opened")
            if not crc_matches(data, at, header):
                raise MalformedBatch("CRC-32C mismatch")
        except MalformedBatch as exc:
            raise CorruptLogError(str(entry.segment.path), entry.position + exc.position,
                                  entry.base_offset, exc.reason) from None

    def read(self, from_offset: int, to_offset: int, max_batches: int,
             max_bytes: int = DEFAULT_MAX_READ_BYTES) -> tuple[Batch, ...]:
        """The batches from the one holding ``from_offset`` up to ``to_offset`` (exclusive:
        a batch ending after it is left out), at most ``max_batches`` and about ``max_bytes``
        (at least one batch if any fits the offsets) -- ``SendRecords``' reads."""
        out: list[Batch] = []
        for entry, data, at in self._read_spans(
                self._select(from_offset, to_offset, max_batches, max_bytes)):
            header = read_header(data, at)
            try:
                out.append(batches.decode(data, header, self.serde, at))
            except MalformedBatch as exc:
                raise CorruptLogError(str(entry.segment.path), entry.position + exc.position,
                                      entry.base_offset, exc.reason) from None
        return tuple(out)

    def read_bytes(self, from_offset: int, to_offset: int, max_batches: int,
                   max_bytes: int = DEFAULT_MAX_READ_BYTES) -> bytes:
        """The same batches as :meth:`read`, as the bytes on disk (CRC-checked): a Fetch
        answer's records field."""
        return b"".join(data[at:at + e.size] for e, data, at in self._read_spans(
            self._select(from_offset, to_offset, max_batches, max_bytes)))

    # -- quorum-state --------------------------------------------------------------------------
    def read_quorum_state(self) -> QuorumState:
        """The ``quorum-state`` file's state; ``QuorumState()`` (epoch 0, no leader, no vote)
        if the node never wrote one."""
        found = quorum_state_file.read(self.directory)
        return found[0] if found else QuorumState()

    def read_quorum_voters(self) -> tuple[int, ...] | None:
        found = quorum_state_file.read(self.directory)
        return found[1] if found else None

    def write_quorum_state(self, state: QuorumState, voters: Iterable[int] | None = None
                           ) -> None:
        """Durable (fsync, rename, fsync of the directory) when it returns. ``voters``
        None keeps the voters the file names (none if there is no file)."""
        if voters is None:
            voters = self.read_quorum_voters() or ()
        quorum_state_file.write(self.directory, state, tuple(voters))

    # -- snapshots -----------------------------------------------------------------------------
    def latest_snapshot(self) -> OffsetAndEpoch | None:
        return self._snapshots[-1] if self._snapshots else None

    def snapshot_ids(self) -> tuple[OffsetAndEpoch, ...]:
        return tuple(self._snapshots)

    def _epoch_before(self, offset: int) -> int | None:
        """The epoch of the record before ``offset`` (None if not known)."""
        i = bisect.bisect_right(self._bases, offset - 1) - 1
        if i >= 0 and self._index[i].base_offset <= offset - 1 < self._index[i].end_offset:
            return self._index[i].epoch
        for snap in self._snapshots:
            if snap.offset == offset:
                return snap.epoch
        return 0 if offset == 0 else None

    def write_snapshot(self, snapshot_id: OffsetAndEpoch, records: Iterable[Any]) -> int:
        """Write the snapshot ``snapshot_id`` of ``records`` (the state machine's, encoded by
        the log's serde); durable when it returns; its size in bytes. Its offset must be a
        batch boundary of this log whose record before it is in ``snapshot_id.epoch``."""
        offset = snapshot_id.offset
        if not self._log_start <= offset <= self._end:
            raise OffsetOutOfRange(f"snapshot at {offset}: the log holds "
                                   f"[{self._log_start}, {self._end}]")
        epoch = self._epoch_before(offset)
        if epoch != snapshot_id.epoch:
            raise ValueError(f"snapshot {snapshot_id}: the record before offset {offset} is "
                             f"in epoch {epoch}")
        i = bisect.bisect_left(self._bases, offset)
        if offset != self._end and not (i < len(self._bases) and self._bases[i] == offset):
            raise ValueError(f"snapshot at {offset}: not a batch boundary")
        if snapshot_id in self._snapshots:
            return (self.directory / snapshots.snapshot_name(snapshot_id)).stat().st_size
        size = snapshots.write_file(self.directory, snapshot_id, snapshots.encode_snapshot(
            snapshot_id, records, self.serde, timestamp_ms=self._clock_ms(),
            max_batch_bytes=self.max_batch_bytes))
        bisect.insort(self._snapshots, snapshot_id)
        return size

    def _snapshot_path(self, snapshot_id: OffsetAndEpoch) -> Path:
        if snapshot_id not in self._snapshots:
            raise KeyError(f"no snapshot {snapshot_id} (have {self._snapshots})")
        return self.directory / snapshots.snapshot_name(snapshot_id)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch, serde: RecordSerde | None = None
                      ) -> tuple[Any, ...]:
        """The state machine's records of the snapshot, every batch checked. ``serde``: the
        one to decode them with, if not the log's (a node that keeps the log's records as
        bytes reads a snapshot's as values, batch by batch, with no million ``bytes`` in
        between)."""
        path = self._snapshot_path(snapshot_id)
        return snapshots.records_of(path.read_bytes(), snapshot_id, serde or self.serde,
                                    str(path), MAX_BATCH_BYTES_LIMIT)

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch
                            ) -> tuple[MetadataImage, int] | None:
        """The snapshot's metadata records replayed into an image as they are read, and how
        many there were: the fast load (``snapshot_image``), held to
        ``image_from_records(read_snapshot(snapshot_id, serde=METADATA))``. None where that
        path must decide (a snapshot the fast load does not take, or a bad one: then
        ``read_snapshot`` reads it again, and names what is wrong)."""
        path = self._snapshot_path(snapshot_id)
        try:
            return snapshot_image.load_image(path.read_bytes(), snapshot_id.epoch,
                                             MAX_BATCH_BYTES_LIMIT)
        except snapshot_image.NotFast:
            return None

    def snapshot_size(self, snapshot_id: OffsetAndEpoch) -> int:
        return self._snapshot_path(snapshot_id).stat().st_size

    def read_snapshot_chunk(self, snapshot_id: OffsetAndEpoch, position: int,
                            max_bytes: int) -> bytes:
        """At most ``max_bytes`` of the snapshot's file from ``position`` (FetchSnapshot)."""
        path = self._snapshot_path(snapshot_id)
        size = path.stat().st_size
        if not 0 <= position <= size or max_bytes < 0:
            raise OffsetOutOfRange(f"snapshot {snapshot_id} is {size} bytes: no chunk at "
                                   f"{position} of {max_bytes} bytes")
        with path.open("rb") as f:
            f.seek(position)
            return f.read(min(max_bytes, size - position))

    def install_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        """A follower's snapshot fetched whole from the leader: checked (every batch, header
        and footer), written durably, then it replaces the log -- log start and end become
        its offset, the segments and the other snapshots go."""
        name = snapshots.snapshot_name(snapshot_id)
        for _ in snapshots.iter_batches(data, snapshot_id, self.serde, name + " (received)",
                                        MAX_BATCH_BYTES_LIMIT):
            pass
        snapshots.write_file(self.directory, snapshot_id, [data])
        if snapshot_id not in self._snapshots:
            bisect.insort(self._snapshots, snapshot_id)
        self._reset_to(snapshot_id.offset)
        self._delete_snapshots(lambda s: s != snapshot_id)
        self._log_start = snapshot_id.offset

    def _reset_to(self, offset: int) -> None:
        """Empty the log and start it again at ``offset``: every segment goes (highest first),
        a new empty one is created."""
        while self._segments:
            self._segments.pop().delete()
        self._index.clear()
        self._bases.clear()
        self._epochs.clear()
        self._segments.append(Segment.create(self.directory, offset))
        self._end = self._flushed = offset

    def _delete_snapshots(self, doomed: Callable[[OffsetAndEpoch], bool]) -> None:
        gone = [s for s in self._snapshots if doomed(s)]
        for s in gone:
            (self.directory / snapshots.snapshot_name(s)).unlink(missing_ok=True)
            self._snapshots.remove(s)
        if gone:
            fsync_dir(self.directory)

    def delete_before(self, offset: int) -> int:
        """The log below ``offset`` goes (``offset`` at most the latest snapshot's): whole
        segments below it are deleted (oldest first), snapshots older than it too; the log
        start becomes ``offset``. Durable when it returns; the new log start."""
        latest = self.latest_snapshot()
        if latest is None or offset > latest.offset:
            raise OffsetOutOfRange(f"delete before {offset}: no snapshot covers it "
                                   f"(latest {latest})")
        if offset <= self._log_start:
            return self._log_start
        while len(self._segments) > 1 and self._segments[1].base_offset <= offset:
            doomed = self._segments.pop(0)
            n = bisect.bisect_left(self._bases, self._segments[0].base_offset)
            del self._index[:n]
            del self._bases[:n]
            doomed.delete()
        self._delete_snapshots(lambda s: s.offset < offset)
        self._log_start = offset
        while len(self._epochs) > 1 and self._epochs[1][1] <= offset:
            self._epochs.pop(0)
        return offset
