"""What a node counts as its own position: the durable (flushed) end of its log.

``durable_end`` is a mutation point (``fsm.raft.core``): returning the unflushed end makes a
follower acknowledge (fetch from) records not yet on disk, and a leader count its own unflushed
records toward the high watermark -- acknowledging before fsync."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def durable_end(node: RaftNode) -> int:
    """The end of the log's flushed prefix: the fetch offset a follower sends, and the
    leader's own offset in the high-watermark count."""
    return node.flushed_offset
