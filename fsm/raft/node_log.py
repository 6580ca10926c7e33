"""What the core knows of its own log changes: appends, flushes, truncation. The shell holds
the records; the core holds the offsets and the epoch index, and counts flushes so that a
``Flushed`` answering a ``Flush`` issued before a truncation (or a snapshot install) is not
taken as durability of the records appended after it.

Every ``Flush`` is answered by exactly one ``Flushed``, in order (or never, if the node
crashes): the live shell flushes and queues the answer; the checker's world delivers one per
pending flush."""

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
    node.flushes_in_flight += 1
    return Flush(node.end_offset)


def flushed(node: RaftNode, end_offset: int) -> bool:
    """Take a ``Flushed``; False when it answers a flush made stale by a truncation."""
    if node.flushes_in_flight == 0:
        return False
    node.flushes_in_flight -= 1
    if node.stale_flushes:
        node.stale_flushes -= 1
        return False
    node.flushed_offset = max(node.flushed_offset, min(end_offset, node.end_offset))
    return True


def truncate(node: RaftNode, offset: int) -> list[TruncateTo]:
    """Drop the log at ``offset`` and after (never below the log start); outstanding flushes
    no longer say anything about what follows."""
    offset = max(offset, node.log_start_offset)
    if offset >= node.end_offset:
        return []
    node.epochs = idx.truncated(node.epochs, offset, node.snapshot_id)
    node.end_offset = offset
    node.flushed_offset = min(node.flushed_offset, offset)
    node.stale_flushes = node.flushes_in_flight
    return [TruncateTo(offset)]
