"""The messages of the metadata quorum (KIP-595), by their Kafka names and fields (API keys
as released: Fetch 1, Vote 52, BeginQuorumEpoch 53, EndQuorumEpoch 54, DescribeQuorum 55,
FetchSnapshot 59). The wire codec (issue 25) maps these to Kafka's flexible versions; the core
and the checker's world use them as they are.

Offsets are Kafka's: a log's *end offset* is the offset its next record takes; the *high
watermark* is the end offset of the committed prefix (exclusive). Every record, control
records included, takes one offset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fsm.errors import ErrorCode

NO_LEADER = -1
"""``leader_id`` when none is known (Kafka's -1)."""


class OffsetAndEpoch(NamedTuple):
    """A snapshot's id (its end offset and the epoch of the record before it), or a
    diverging epoch (``epoch`` and that epoch's end offset on the leader)."""

    offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """The control record a new leader appends first in its epoch (Kafka's LeaderChangeMessage):
    committing it is what lets the high watermark move in the new epoch."""

    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Batch:
    """Records appended together in one epoch. The core reads only ``base_offset``, ``epoch``
    and how many records there are; ``records`` are the state machine's (opaque to Raft) or,
    when ``control``, Raft's own (``LeaderChange``).

    ``raw``: the batch's bytes as it came off the wire (record batch v2, CRC checked), kept by
    a shell's decoder so that a follower's log writes them as they are instead of encoding the
    records again; None elsewhere. The core never reads it, and it takes no part in equality,
    hashing or ``repr`` (a checker's states are the same with or without it)."""

    base_offset: int
    epoch: int
    records: tuple[Any, ...]
    control: bool = False
    raw: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def end_offset(self) -> int:
        return self.base_offset + len(self.records)


# -- Vote (52) -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class VoteRequest:
    candidate_epoch: int
    candidate_id: int
    last_offset_epoch: int
    last_offset: int  # the candidate's log end offset


@dataclass(frozen=True, slots=True)
class VoteResponse:
    error: ErrorCode
    leader_epoch: int
    leader_id: int
    vote_granted: bool


# -- BeginQuorumEpoch (53) -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    leader_epoch: int
    leader_id: int


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    error: ErrorCode
    leader_epoch: int
    leader_id: int


# -- EndQuorumEpoch (54) ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    leader_epoch: int
    leader_id: int
    preferred_successors: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    error: ErrorCode
    leader_epoch: int
    leader_id: int


# -- Fetch (1) on __cluster_metadata-0 -------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int  # the fetcher's log end offset (durable: flushed)
    last_fetched_epoch: int  # the epoch of the record before fetch_offset (0: none)


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """Records from ``fetch_offset`` (``batches``), or ``diverging_epoch`` (truncate to its
    offset and fetch again), or ``snapshot_id`` (behind the log start: FetchSnapshot it).

    ``fetch_offset`` and ``last_fetched_epoch`` echo the request's, so that a late or
    duplicated answer (the checker's world reorders and duplicates) is not taken for the answer
    to a later, different Fetch (a stale diverging epoch would truncate what the leader has
    since counted). They are not on Kafka's wire: -1 (unknown) stands for them there, and the
    ordered connection with one Fetch in flight does their job."""

    error: ErrorCode
    leader_epoch: int
    leader_id: int
    high_watermark: int
    log_start_offset: int
    batches: tuple[Batch, ...] = ()
    diverging_epoch: OffsetAndEpoch | None = None
    snapshot_id: OffsetAndEpoch | None = None
    fetch_offset: int = -1
    last_fetched_epoch: int = -1


# -- FetchSnapshot (59) ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest:
    replica_id: int
    current_leader_epoch: int
    snapshot_id: OffsetAndEpoch
    position: int  # bytes (or records, in the checker's world) already received


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse:
    """A chunk of the snapshot from ``position``; ``size`` is the whole snapshot's. ``chunk``
    is filled by the shell (the core never holds snapshot contents)."""

    error: ErrorCode
    leader_epoch: int
    leader_id: int
    snapshot_id: OffsetAndEpoch
    size: int = 0
    position: int = 0
    chunk: Any = None


# -- DescribeQuorum (55) ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DescribeQuorumRequest:
    pass


@dataclass(frozen=True, slots=True)
class ReplicaState:
    replica_id: int
    log_end_offset: int  # -1: never fetched in this epoch
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1


@dataclass(frozen=True, slots=True)
class DescribeQuorumResponse:
    error: ErrorCode
    leader_id: int
    leader_epoch: int
    high_watermark: int
    current_voters: tuple[ReplicaState, ...] = ()
    observers: tuple[ReplicaState, ...] = ()
