"""The epoch index of a node's log (Kafka's leader-epoch checkpoint): ``(epoch, start offset)``
of each epoch present, ascending. The core keeps it instead of the log's contents: it is all
Raft needs to validate a fetch position, find a diverging epoch and compare logs in a vote.

After a snapshot the index may start with ``(snapshot epoch, snapshot offset)`` and no record
in that epoch yet (the index "reset to the snapshot's epoch"); the lookups treat the snapshot
as the record before the log start."""

from __future__ import annotations

from fsm.raft.messages import OffsetAndEpoch

Epochs = tuple[tuple[int, int], ...]


def epoch_before(epochs: Epochs, offset: int, snapshot: OffsetAndEpoch | None) -> int:
    """The epoch of the record at ``offset - 1`` (0: none): what a Fetch at ``offset`` names as
    its last fetched epoch, and a candidate as its last epoch."""
    for epoch, start in reversed(epochs):
        if start < offset:
            return epoch
    if snapshot is not None and snapshot.offset <= offset:
        return snapshot.epoch
    return 0


def end_offset_for_epoch(epochs: Epochs, end_offset: int, epoch: int,
                         snapshot: OffsetAndEpoch | None) -> OffsetAndEpoch | None:
    """The largest epoch in the log that is ``<= epoch`` and where it ends (the start of the
    next epoch, or the log end): Kafka's ``endOffsetForEpoch``. None when the log holds no such
    epoch (not even through its snapshot)."""
    for i in range(len(epochs) - 1, -1, -1):
        e, _start = epochs[i]
        if e <= epoch:
            end = epochs[i + 1][1] if i + 1 < len(epochs) else end_offset
            return OffsetAndEpoch(end, e)
    if snapshot is not None and snapshot.epoch <= epoch:
        return OffsetAndEpoch(snapshot.offset, snapshot.epoch)
    return None


def appended(epochs: Epochs, epoch: int, base_offset: int) -> Epochs:
    """The index after appending a batch of ``epoch`` at ``base_offset``; epochs only grow
    along a log (a batch of an older epoch than the last is a bug of the caller)."""
    if epochs and epochs[-1][0] == epoch:
        return epochs
    if epochs and epochs[-1][0] > epoch:
        raise ValueError(f"batch of epoch {epoch} at {base_offset} after epoch {epochs[-1][0]}")
    return (*epochs, (epoch, base_offset))


def truncated(epochs: Epochs, offset: int, snapshot: OffsetAndEpoch | None) -> Epochs:
    """The index after dropping every record at ``offset`` and after."""
    kept = tuple((e, s) for e, s in epochs if s < offset)
    if not kept and snapshot is not None and snapshot.offset == offset:
        return ((snapshot.epoch, snapshot.offset),)
    return kept


def trimmed(epochs: Epochs, offset: int) -> Epochs:
    """The index after deleting the log below ``offset``: epochs wholly below it go, the one
    holding ``offset`` (or the last, at the log end) starts at ``offset``."""
    out = []
    for i, (e, s) in enumerate(epochs):
        nxt = epochs[i + 1][1] if i + 1 < len(epochs) else None
        if nxt is not None and nxt <= offset:
            continue
        out.append((e, max(s, offset)))
    return tuple(out)
