"""What the core knows of its own log changes: appends, flushes, truncation. The shell holds
the records; the core holds the offsets and the epoch index.

``Flushed`` answers may come one per ``Flush`` (the live shell) or one for several, naming the
largest end asked (the checker's world): either way the flushed end only grows, capped at the
log end. A follower fetches only once its log is durable to its end, so no flush is still out
when an answer makes it truncate: a late ``Flushed`` never speaks for records appended after a
truncation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.raft import epochs as idx
from fsm.raft.effects import Flush, TruncateTo
from fsm.raft.messages import Batch

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def append(node: RaftNode, batch: Batch) -> None:
    if batch.base_offset != node.end_offset:
        raise ValueError(f"node {node.node_id}: batch at {batch.base_offset}, log end is "
                         f"{node.end_offset}")
    node.epochs = idx.appended(node.epochs, batch.epoch, batch.base_offset)
    node.end_offset = batch.end_offset


def flush(node: RaftNode) -> Flush:
    return Flush(node.end_offset)


def flushed(node: RaftNode, end_offset: int) -> bool:
    """Take a ``Flushed``; False when it tells nothing new."""
    end = min(end_offset, node.end_offset)
    if end <= node.flushed_offset:
        return False
    node.flushed_offset = end
    return True


def truncate(node: RaftNode, offset: int) -> list[TruncateTo]:
    """Drop the log at ``offset`` and after (never below the log start)."""
    offset = max(offset, node.log_start_offset)
    if offset >= node.end_offset:
        return []
    node.epochs = idx.truncated(node.epochs, offset, node.snapshot_id)
    node.end_offset = offset
    node.flushed_offset = min(node.flushed_offset, offset)
    return [TruncateTo(offset)]
