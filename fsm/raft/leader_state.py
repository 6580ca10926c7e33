"""The leader's view of its voters: their fetch positions in its epoch, and the high-watermark
rule built on them.

``next_high_watermark`` is a mutation point (``fsm.raft.core``): counting replicas of an
earlier epoch's entries (dropping the ``epoch_start`` condition) is Raft's Figure 8 bug."""

from __future__ import annotations

from collections.abc import Iterable


def majority_offset(leader_end: int, voter_offsets: Iterable[int], majority: int) -> int:
    """The largest offset that ``majority`` voters hold: the leader's durable end and the other
    voters' recorded fetch offsets (-1: none yet in this epoch)."""
    ends = sorted((leader_end, *voter_offsets), reverse=True)
    return ends[majority - 1] if len(ends) >= majority else -1


def next_high_watermark(current: int, leader_end: int, voter_offsets: Iterable[int],
                        majority: int, epoch_start: int) -> int:
    """The new high watermark: the majority offset, but only once it is past the start of the
    leader's epoch (the epoch's ``LeaderChange`` record, at ``epoch_start``, is then
    committed and with it every earlier entry); it never moves back."""
    offset = majority_offset(leader_end, voter_offsets, majority)
    if offset > epoch_start and offset > current:
        return offset
    return current
