"""What a Raft node knows of its own log and quorum-state when it starts: all of it durable
(the shell builds it from disk, or the checker's world from what a voter had flushed)."""

from __future__ import annotations

from dataclasses import dataclass

from fsm.raft.messages import OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class QuorumState:
    """The ``quorum-state`` file: the epoch, who leads it (or -1), whom this node voted for
    in it (or -1). Written (and fsynced) by ``PersistQuorumState`` before any answer that
    depends on it."""

    epoch: int = 0
    leader_id: int = -1
    voted_id: int = -1


@dataclass(frozen=True, slots=True)
class LogSummary:
    """``epochs``: (epoch, start offset) of each epoch present in the log, ascending (Kafka's
    leader-epoch checkpoint); ``end_offset``: the next offset; ``log_start_offset``: the first
    offset held (after the latest snapshot: its end offset); ``snapshot_id``: the latest
    snapshot, or None."""

    end_offset: int = 0
    epochs: tuple[tuple[int, int], ...] = ()
    log_start_offset: int = 0
    snapshot_id: OffsetAndEpoch | None = None
