"""Reading the committed metadata log as an observer without a replica id (a tool: Kafka's
KAFKA-12161), pure: :class:`ObserverRead` says which request to send next and takes each
answer; ``quorum_reader`` carries the requests over the wire.

From offset 0, Fetch ``__cluster_metadata-0`` with the leader's epoch; take every whole batch
below the high watermark the answer names (a batch past it is not committed yet: left out);
when the leader answers with a snapshot id instead (the log below its start is gone, or it
starts at a snapshot), FetchSnapshot that snapshot chunk by chunk from position 0, start over
from it, and fetch on from its end offset. Done once the records read reach the high
watermark of the first answer (a quorum that keeps committing does not keep the read going:
what it shows is a committed prefix as of the moment it began). An answer naming another leader or epoch (``FENCED_LEADER_EPOCH``,
``NOT_LEADER_OR_FOLLOWER``, ``UNKNOWN_LEADER_EPOCH``, a newer ``leader_epoch``) raises
:class:`LeaderMoved` with what it says of the new leader (the reader starts again there); a
snapshot deleted while it is fetched (the leader took a newer one) :class:`ReadAgain`; a
diverging epoch, a snapshot that changed under the read or does not decode, or more than
``max_bytes`` of records and snapshot raise :class:`ReadError`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fsm.errors import ErrorCode
from fsm.raft.messages import (
    Batch,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
)

NO_REPLICA_ID = -1
"""What a tool sends as its replica id (KIP-595's observers without an id, KAFKA-12161)."""
MAX_IDLE_ANSWERS = 50
"""Answers in a row that bring nothing while the high watermark is ahead: then give up."""
LEADERSHIP_ERRORS = frozenset({ErrorCode.FENCED_LEADER_EPOCH,
                               ErrorCode.NOT_LEADER_OR_FOLLOWER,
                               ErrorCode.UNKNOWN_LEADER_EPOCH})


class ReadError(Exception):
    """The log cannot be read this way; the message says why."""


class ReadAgain(ReadError):
    """The snapshot being fetched is gone (the leader took a newer one and deleted it): the
    read starts again from offset 0."""


class LeaderMoved(Exception):  # noqa: N818 -- not an error: the reader follows it
    """The node asked is not (or no longer) the leader of the epoch read in."""

    def __init__(self, leader_id: int, epoch: int, why: str) -> None:
        super().__init__(f"{why} (leader {leader_id if leader_id >= 0 else 'unknown'}, "
                         f"epoch {epoch})")
        self.leader_id, self.epoch = leader_id, epoch


@dataclass
class ObserverRead:
    """One read of the committed log from one leader in one epoch."""

    epoch: int
    max_bytes: int
    decode_snapshot: Callable[[bytes, OffsetAndEpoch], tuple[list[Any], int]]
    """A snapshot's bytes -> (its metadata records, its header's timestamp); raises
    ``ReadError`` (or any exception, reported as one) if they do not decode."""
    batch_time: Callable[[Batch], int] = lambda b: 0
    """A batch's time (its max timestamp) for the provenance."""
    offset: int = 0
    last_epoch: int = -1
    high_watermark: int = -1
    snapshot: OffsetAndEpoch | None = None
    snapshot_records: list[Any] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)
    """The metadata records after the snapshot (or from offset 0), in order."""
    last_batch: tuple[int, int, int] = (-1, -1, 0)
    """(last offset, epoch, time) of the last record read: the image's provenance."""
    bytes_read: int = 0
    _pending: tuple[OffsetAndEpoch, int, bytearray] | None = None
    _idle: int = 0

    target: int = -1
    """The high watermark of the first answer: the read ends there (a quorum that keeps
    committing does not keep it going), or at the first batch past it."""

    @property
    def done(self) -> bool:
        return self._pending is None and 0 <= self.target <= self.offset

    def next_request(self) -> FetchRequest | FetchSnapshotRequest:
        if self._pending is not None:
            snap, position, _ = self._pending
            return FetchSnapshotRequest(NO_REPLICA_ID, self.epoch, snap, position)
        return FetchRequest(NO_REPLICA_ID, self.epoch, self.offset, self.last_epoch)

    def _leadership(self, error: ErrorCode, leader_id: int, epoch: int, what: str) -> None:
        if error in LEADERSHIP_ERRORS:
            raise LeaderMoved(leader_id, epoch, f"{what} answered {error.name}")
        if epoch > self.epoch:
            raise LeaderMoved(leader_id, epoch, f"{what}: a new epoch")

    def _count(self, n: int) -> None:
        self.bytes_read += n
        if self.bytes_read > self.max_bytes:
            raise ReadError(f"over {self.max_bytes} bytes read (--max-bytes) before the high "
                            f"watermark {self.high_watermark}")

    def on_fetch(self, r: FetchResponse, size: int = 0) -> None:
        """The answer to the last Fetch; ``size`` its records' bytes."""
        self._leadership(r.error, r.leader_id, r.leader_epoch, "Fetch")
        if r.error is not ErrorCode.NONE:
            raise ReadError(f"Fetch answered {r.error.name}")
        if r.diverging_epoch is not None:
            raise ReadError(f"the leader's log diverges from what was read at offset "
                            f"{self.offset} (epoch {r.diverging_epoch.epoch} ends at "
                            f"{r.diverging_epoch.offset})")
        self._count(size)
        self.high_watermark = r.high_watermark
        if self.target < 0:
            self.target = r.high_watermark
        if r.snapshot_id is not None:
            if self.snapshot is not None and r.snapshot_id == self.snapshot:
                raise ReadError(f"the leader sends snapshot {r.snapshot_id} again at offset "
                                f"{self.offset}")
            self._pending = (r.snapshot_id, 0, bytearray())
            return
        progress = False
        for b in r.batches:
            if b.base_offset != self.offset:
                raise ReadError(f"a batch at offset {b.base_offset}, asked for {self.offset}")
            if b.end_offset > r.high_watermark:
                break  # not committed yet
            if not b.control:
                self.records.extend(b.records)
            self.offset, self.last_epoch = b.end_offset, b.epoch
            self.last_batch = (b.end_offset - 1, b.epoch, self.batch_time(b))
            progress = True
        self._idle = 0 if progress else self._idle + 1
        if self._idle > MAX_IDLE_ANSWERS and not self.done:
            raise ReadError(f"{MAX_IDLE_ANSWERS} answers brought nothing below the high "
                            f"watermark {r.high_watermark} (at offset {self.offset})")

    def on_snapshot_chunk(self, r: FetchSnapshotResponse) -> None:
        """The answer to the last FetchSnapshot."""
        assert self._pending is not None, "no FetchSnapshot was sent"
        snap, position, data = self._pending
        self._leadership(r.error, r.leader_id, r.leader_epoch, "FetchSnapshot")
        if r.error in (ErrorCode.SNAPSHOT_NOT_FOUND, ErrorCode.POSITION_OUT_OF_RANGE):
            raise ReadAgain(f"FetchSnapshot of {snap} answered {r.error.name} (the leader "
                            "took a newer snapshot)")
        if r.error is not ErrorCode.NONE:
            raise ReadError(f"FetchSnapshot of {snap} answered {r.error.name}")
        if r.snapshot_id != snap or r.position != position:
            raise ReadError(f"FetchSnapshot answered {r.snapshot_id} at {r.position}, asked "
                            f"{snap} at {position}")
        chunk = bytes(r.chunk or b"")
        if r.size > self.max_bytes:
            raise ReadError(f"snapshot {snap} is {r.size} bytes, over --max-bytes "
                            f"({self.max_bytes})")
        if not chunk and position < r.size:
            raise ReadError(f"FetchSnapshot of {snap} sent nothing at {position} of {r.size}")
        self._count(len(chunk))
        data += chunk
        position += len(chunk)
        if position > r.size:
            raise ReadError(f"snapshot {snap}: {position} bytes received, its size is {r.size}")
        if position < r.size:
            self._pending = (snap, position, data)
            return
        try:
            records, timestamp = self.decode_snapshot(bytes(data), snap)
        except ReadError:
            raise
        except Exception as exc:  # noqa: BLE001 -- whatever the snapshot decoder says
            raise ReadError(f"snapshot {snap} does not decode: {exc}") from None
        self._pending = None
        self.snapshot, self.snapshot_records, self.records = snap, records, []
        self.offset, self.last_epoch = snap.offset, snap.epoch
        self.last_batch = (snap.offset - 1, snap.epoch, timestamp)
