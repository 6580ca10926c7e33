"""One controller voter's metadata log in the KRaft world on Raft: its batches, its log start,
its latest snapshot (id and records) and its ``quorum-state`` -- an immutable value, so a copy
of the world shares it and a step replaces it.

Everything here is durable at once: the world carries out ``Flush`` as soon as the Raft
node has asked for it (crashes between an append and its fsync are the Raft world's,
``model_check.raft``). The methods are the Raft effects on the log (``AppendBatches``,
``TruncateTo``, ``InstallSnapshot``, ``DeleteBefore``) and the reads a node, its glue and the
brokers need; a request the log cannot honour (an append that is not at the end, a read that
does not start at a batch boundary) raises ``LogError``, which the search reports as a
raising step."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, OffsetAndEpoch


class LogError(AssertionError):
    """A Raft node asked its log for something impossible."""


@dataclass(frozen=True, slots=True)
class VoterLog:
    batches: tuple[Batch, ...] = ()
    start: int = 0
    """The first offset the log holds (after the latest snapshot, or what ``DeleteBefore``
    left)."""
    snapshot_id: OffsetAndEpoch | None = None
    snapshot: tuple[Any, ...] = ()
    """The latest snapshot's metadata records (canonical, as ``snapshot_records`` writes)."""
    quorum: QuorumState = QuorumState()

    # -- reading -------------------------------------------------------------------------------
    @property
    def end(self) -> int:
        return self.batches[-1].end_offset if self.batches else self.start

    def summary(self) -> LogSummary:
        """What a node restarted on this log knows of it."""
        epochs: list[tuple[int, int]] = []
        for b in self.batches:
            if not epochs or epochs[-1][0] != b.epoch:
                epochs.append((b.epoch, b.base_offset))
        return LogSummary(self.end, tuple(epochs), self.start, self.snapshot_id)

    def read(self, from_offset: int, to_offset: int, max_batches: int = 1 << 30
             ) -> tuple[Batch, ...]:
        """The whole batches from ``from_offset`` (a batch boundary, or the log end) that end
        at or before ``to_offset``, at most ``max_batches``."""
        if not self.start <= from_offset <= self.end:
            raise LogError(f"read from {from_offset}: the log holds [{self.start}, {self.end})")
        out: list[Batch] = []
        for b in self.batches:
            if b.end_offset <= from_offset:
                continue
            if b.base_offset < from_offset:
                raise LogError(f"read from {from_offset}, inside batch "
                               f"[{b.base_offset}, {b.end_offset})")
            if b.end_offset > to_offset or len(out) >= max_batches:
                break
            out.append(b)
        return tuple(out)

    def records(self, from_offset: int, to_offset: int) -> tuple[Any, ...]:
        """The records at offsets ``[from_offset, to_offset)`` (control records included:
        every record takes an offset), as far as the log holds them."""
        out: list[Any] = []
        for b in self.batches:
            lo, hi = max(b.base_offset, from_offset), min(b.end_offset, to_offset)
            if lo < hi:
                out += b.records[lo - b.base_offset:hi - b.base_offset]
        return tuple(out)

    # -- the Raft node's effects -----------------------------------------------------------------
    def appended(self, batches: tuple[Batch, ...]) -> VoterLog:
        end = self.end
        for b in batches:
            if b.base_offset != end:
                raise LogError(f"append at {b.base_offset}; the log ends at {end}")
            end = b.end_offset
        return replace(self, batches=self.batches + batches)

    def truncated(self, offset: int) -> VoterLog:
        if offset < self.start:
            raise LogError(f"truncate to {offset}, below the log start {self.start}")
        kept = []
        for b in self.batches:
            if b.end_offset <= offset:
                kept.append(b)
            elif b.base_offset < offset:
                raise LogError(f"truncate to {offset}, inside batch "
                               f"[{b.base_offset}, {b.end_offset})")
        return replace(self, batches=tuple(kept))

    def deleted_before(self, offset: int) -> VoterLog:
        """Drop the batches below ``offset`` (never past the latest snapshot: the log start
        becomes the smaller of the two)."""
        start = min(offset, self.snapshot_id.offset if self.snapshot_id else self.start)
        if start <= self.start:
            return self
        for b in self.batches:
            if b.base_offset < start < b.end_offset:
                raise LogError(f"delete before {start}, inside batch "
                               f"[{b.base_offset}, {b.end_offset})")
        return replace(self, batches=tuple(b for b in self.batches if b.base_offset >= start),
                       start=start)

    def with_snapshot(self, snapshot_id: OffsetAndEpoch, records: tuple[Any, ...]) -> VoterLog:
        """A snapshot of this log's committed prefix was written."""
        return replace(self, snapshot_id=snapshot_id, snapshot=records)

    def installed(self, snapshot_id: OffsetAndEpoch, records: tuple[Any, ...]) -> VoterLog:
        """A snapshot fetched from the leader replaces the log: start and end become its end
        offset."""
        return replace(self, batches=(), start=snapshot_id.offset, snapshot_id=snapshot_id,
                       snapshot=records)

    def with_quorum(self, state: QuorumState) -> VoterLog:
        return replace(self, quorum=state)
