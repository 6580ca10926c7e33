"""What a Raft node asks its shell to do: effects out, carried out **in order**. Every effect
that makes something durable (``PersistQuorumState``, ``TruncateTo``, ``InstallSnapshot``,
``DeleteBefore``) is durable before the shell carries out the next effect: a vote is on disk
before the ``Send`` that grants it. ``AppendBatches`` is *not* durable until the shell has
carried out ``Flush`` and answered ``events.Flushed`` -- which may come later (the checker's
world lets a crash fall in between); the core counts only flushed offsets: its own as leader,
and in the Fetch it sends as follower."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import Batch, FetchResponse, FetchSnapshotResponse, OffsetAndEpoch
from fsm.raft.roles import RaftRole

ELECTION = "election"  # unattached/voted/candidate/resigned voter: stand for election
FETCH = "fetch"  # follower: the leader is silent (fetch timeout): stand for election
REQUEST = "request"  # per destination: resend the request in flight to it
PARKED = "parked"  # leader, per destination: answer a parked (caught-up) fetch anyway
TIMERS = (ELECTION, FETCH, REQUEST, PARKED)


# -- durable ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PersistQuorumState:
    state: QuorumState


@dataclass(frozen=True, slots=True)
class AppendBatches:
    """Append to the log end (``batches[0].base_offset`` is the log end); not yet durable."""

    batches: tuple[Batch, ...]


@dataclass(frozen=True, slots=True)
class Flush:
    """Make the log durable to its end, then answer ``events.Flushed(end_offset)`` (one answer
    may stand for several flushes: the largest end; none if the node crashes first)."""

    end_offset: int


@dataclass(frozen=True, slots=True)
class TruncateTo:
    """Drop every record at ``offset`` and after (durable before the next effect)."""

    offset: int


@dataclass(frozen=True, slots=True)
class InstallSnapshot:
    """The snapshot fetched from the leader is whole: it replaces the log (log start and end
    become ``snapshot_id.offset``), and the state machine loads it."""

    snapshot_id: OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class DeleteBefore:
    """Delete the log below ``offset`` (segments wholly below the latest snapshot)."""

    offset: int


# -- messages and timers ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Send:
    destination: int
    message: Any


@dataclass(frozen=True, slots=True)
class SendRecords:
    """Send ``response`` to ``destination`` with its ``batches`` filled by the shell: the log's
    batches from ``from_offset`` (a batch boundary) up to ``to_offset`` (exclusive: the end
    the core knew), at most ``max_batches``."""

    destination: int
    response: FetchResponse
    from_offset: int
    to_offset: int
    max_batches: int


@dataclass(frozen=True, slots=True)
class SendSnapshotChunk:
    """Send ``response`` with ``size`` and ``chunk`` filled by the shell from the snapshot
    ``response.snapshot_id`` at ``response.position``."""

    destination: int
    response: FetchSnapshotResponse


@dataclass(frozen=True, slots=True)
class ArmTimer:
    """Arm (or re-arm) timer ``kind`` (per ``destination`` for ``REQUEST``): it fires after
    ``delay_ms`` plus a random jitter in [0, ``jitter_ms``] the shell draws."""

    kind: str
    delay_ms: int
    jitter_ms: int = 0
    destination: int = -1


@dataclass(frozen=True, slots=True)
class CancelTimer:
    kind: str
    destination: int = -1


# -- to the state machine --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RoleChanged:
    """The node moved (checked against ``RAFT_ROLE_TABLE``): for the state-change log, the
    checker's coverage and the state machine (``leader_id`` -1: none known)."""

    source: RaftRole
    target: RaftRole
    epoch: int
    leader_id: int


@dataclass(frozen=True, slots=True)
class HighWatermark:
    """The committed prefix of the log now ends at ``offset`` (exclusive); it only grows
    (a follower learns it from its leader, never past its own log end)."""

    offset: int


@dataclass(frozen=True, slots=True)
class AppendRefused:
    """A ``ClientAppend`` this node cannot take: not the leader of ``epoch`` (``leader_epoch``
    is the node's), or a base offset that is not the log end."""

    epoch: int
    leader_epoch: int
    reason: str


Effect = Any
