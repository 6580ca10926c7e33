"""What the Raft invariants read: one state of a Raft quorum, as plain values.

Built by the checker from its world (``model_check.raft.view``). An *entry* is ``(epoch,
record)``, what one offset holds; a voter's ``entries`` are everything it holds (its
snapshot's contents, then its log, the unflushed tail included), its ``durable`` the part a
crash keeps (the snapshot and the flushed log). The ghost fields are the history no node
keeps: every (epoch, leader) ever elected, every entry ever reported committed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Entry = tuple[int, Any]


@dataclass(frozen=True)
class VoterFacts:
    node_id: int
    alive: bool
    role: str | None  # the RaftRole value its node last moved to; None while crashed
    epoch: int  # the epoch of that move
    hw: int  # the last high watermark its node reported (0 after a restart)
    quorum_epoch: int  # the durable quorum-state
    voted_id: int
    entries: Mapping[int, Entry]
    durable: Mapping[int, Entry]
    applied: tuple[Entry, ...]  # what its state machine applied, by offset (ever)
    heard: int = 0  # the highest epoch a message delivered to this process carried
    leader_id: int = -1  # the leader its node follows (-1: none known)
    parked: frozenset[int] = frozenset()  # a leader: the voters whose caught-up Fetch it holds
    resending: frozenset[int] = frozenset()  # the destinations of its requests still unanswered


@dataclass(frozen=True)
class RaftView:
    voters: tuple[VoterFacts, ...]
    majority: int
    elected: frozenset[tuple[int, int]]  # (epoch, leader) ever elected
    committed: tuple[tuple[int, int, Any, int], ...]
    """(offset, epoch, record, the lowest epoch it was reported committed in), by offset."""
    conflicts: tuple[tuple[int, int, Entry, Entry], ...]
    """(voter, offset, applied before, applied again) where a state machine re-applied an
    offset with a different entry."""
    pending: bool

    def voter(self, node_id: int) -> VoterFacts:
        return next(v for v in self.voters if v.node_id == node_id)
