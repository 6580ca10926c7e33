"""``RaftNode``: one node of the metadata quorum (KIP-595), pure. ``handle(event)`` takes an
event of ``fsm.raft.events`` and returns the effects of ``fsm.raft.effects`` its shell carries
out, in order (a vote or a new epoch is persisted before any ``Send`` that depends on it). The
logic lives in small modules named for what they hold -- ``election`` (Vote), ``transitions``
(role changes, through ``RAFT_ROLE_TABLE``), ``leader_state`` (the high-watermark rule),
``replication`` (the leader answering Fetch, parking, appends), ``follower`` (fetching),
``snapshots``, ``quorum_epoch`` (Begin/EndQuorumEpoch, Resign), ``describe``, ``epochs`` (the
epoch index), ``node_log`` (appends, flushes, truncation), ``timers``, ``durable``.

The node holds offsets and its epoch index, never records. ``copy()`` is cheap and independent
and ``key()`` is a canonical tuple of everything held: the model checker copies and dedupes
states by them.

Mutation points
---------------
Each bug below is made by replacing exactly one module-level function (patch the attribute on
its module: every caller looks it up there at call time, e.g.
``monkeypatch.setattr(fsm.raft.election, "log_up_to_date", lambda *a: True)``):

(a) ``fsm.raft.election.log_up_to_date(cand_last_epoch, cand_end, own_last_epoch, own_end)``
    -> always ``True``: a vote granted without the up-to-date check.
(b) ``fsm.raft.leader_state.next_high_watermark(current, leader_end, voter_offsets, majority,
    epoch_start)`` -> ``max(current, majority_offset(leader_end, voter_offsets, majority))``:
    the HW counted on an older epoch's entries (Raft's Figure 8).
(c) ``fsm.raft.transitions.log_on_becoming_follower(node)`` -> ``node_log.truncate(node,
    node.high_watermark)``: a follower truncating to its HW on becoming follower (KIP-101).
(d) ``fsm.raft.durable.durable_end(node)`` -> ``node.end_offset``: acknowledging before fsync
    (a follower fetches from its unflushed end; a leader counts its unflushed end).
(e) ``fsm.raft.transitions.on_higher_epoch(node, epoch, leader_id, vote_for=-1)`` -> ``[]``
    when ``node.role is RaftRole.LEADER`` (else the original): a leader that does not step
    down on a higher epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.raft import (
    describe,
    election,
    follower,
    quorum_epoch,
    replication,
    snapshots,
    timers,
    transitions,
)
from fsm.raft.config import RaftConfig
from fsm.raft.effects import ELECTION, FETCH, PARKED, REQUEST, Effect, Send
from fsm.raft.events import (
    ClientAppend,
    Flushed,
    Received,
    Resign,
    SnapshotWritten,
    Start,
    TimerFired,
)
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    VoteRequest,
    VoteResponse,
)
from fsm.raft.roles import RAFT_ROLE_TABLE, RaftRole

_SCALARS = (
    "role", "epoch", "leader_id", "voted_id", "end_offset", "flushed_offset",
    "log_start_offset", "epochs", "snapshot_id", "high_watermark", "armed", "grants", "answered", "epoch_start", "pending_fetch",
    "fetch_target", "pending_snapshot", "discover_index", "successors",
)
_DICTS = ("positions", "hw_sent", "parked", "fetch_times", "observers")


class RaftNode:
    """One Raft node: its durable quorum-state, what it knows of its log, and the state of
    its role (votes, voter positions, parked fetches, the fetch in flight)."""

    __slots__ = ("config", "node_id", "started", *_SCALARS, *_DICTS)

    def __init__(self, config: RaftConfig, state: QuorumState, log: LogSummary) -> None:
        if not config.voters:
            raise ValueError("a Raft quorum needs at least one voter")
        if log.end_offset < log.log_start_offset:
            raise ValueError(f"log end {log.end_offset} before log start "
                             f"{log.log_start_offset}")
        if state.epoch < 0:
            raise ValueError(f"negative epoch {state.epoch}")
        self.config = config
        self.node_id = config.node_id
        self.started = False
        self.role = RAFT_ROLE_TABLE.initial
        self.epoch, self.leader_id, self.voted_id = state.epoch, state.leader_id, state.voted_id
        self.end_offset = self.flushed_offset = log.end_offset
        self.log_start_offset = log.log_start_offset
        self.epochs = tuple(log.epochs)
        self.snapshot_id = log.snapshot_id
        self.high_watermark = log.snapshot_id.offset if log.snapshot_id else 0
        self.armed: frozenset[tuple[str, int]] = frozenset()
        self.reset_role_state()

    def reset_role_state(self) -> None:
        """Forget what the previous role held (a role change)."""
        self.grants: frozenset[int] = frozenset()
        self.answered: frozenset[int] = frozenset()
        self.epoch_start = -1
        self.positions: dict[int, int] = {}
        self.hw_sent: dict[int, int] = {}
        self.parked: dict[int, FetchRequest] = {}
        self.fetch_times: dict[int, tuple[int, int]] = {}
        self.observers: dict[int, int] = {}
        self.pending_fetch: FetchRequest | None = None
        self.fetch_target = NO_LEADER
        self.pending_snapshot: tuple[OffsetAndEpoch, int] | None = None
        self.discover_index = 0
        self.successors: tuple[int, ...] = ()

    # -- the checker's needs -----------------------------------------------------------------
    def copy(self) -> RaftNode:
        other = RaftNode.__new__(RaftNode)
        other.config, other.node_id, other.started = self.config, self.node_id, self.started
        for name in _SCALARS:
            setattr(other, name, getattr(self, name))
        for name in _DICTS:
            setattr(other, name, dict(getattr(self, name)))
        return other

    def key(self) -> tuple:
        return (self.node_id, self.started,
                *(getattr(self, name) for name in _SCALARS),
                *(tuple(sorted(getattr(self, name).items())) for name in _DICTS))

    def __repr__(self) -> str:
        return (f"RaftNode({self.node_id} {self.role.value} epoch={self.epoch} "
                f"leader={self.leader_id} end={self.end_offset} hw={self.high_watermark})")

    # -- read-only views ---------------------------------------------------------------------
    @property
    def quorum_state(self) -> QuorumState:
        return QuorumState(self.epoch, self.leader_id, self.voted_id)

    # -- events in, effects out --------------------------------------------------------------
    def handle(self, event: Any) -> list[Effect]:
        """The effects of ``event``, in the order the shell must carry them out."""
        if isinstance(event, Start):
            if self.started:
                raise ValueError(f"node {self.node_id} started twice")
            self.started = True
            return transitions.start(self)
        if not self.started:
            raise ValueError(f"node {self.node_id}: {type(event).__name__} before Start")
        handler = _EVENTS.get(type(event))
        if handler is None:
            raise TypeError(f"node {self.node_id}: not a Raft event: {event!r}")
        return handler(self, event)


def _received(node: RaftNode, ev: Received) -> list[Effect]:
    handler = _MESSAGES.get(type(ev.message))
    if handler is None:
        raise TypeError(f"node {node.node_id}: not a Raft message from {ev.source}: "
                        f"{ev.message!r}")
    return handler(node, ev.source, ev.message, ev.now_ms)


def _timer(node: RaftNode, ev: TimerFired) -> list[Effect]:
    if not timers.fired(node, ev.kind, ev.destination):
        return []  # cancelled or already fired: stale
    if ev.kind == ELECTION:
        if node.config.is_voter and node.role is not RaftRole.LEADER:
            return transitions.become_candidate(node)
        return []
    if ev.kind == FETCH:
        return follower.on_fetch_timeout(node)
    if ev.kind == PARKED:
        return replication.on_parked_timer(node, ev.destination)
    if ev.kind == REQUEST:
        return _request_timer(node, ev.destination)
    raise ValueError(f"node {node.node_id}: unknown timer kind {ev.kind!r}")


def _request_timer(node: RaftNode, dest: int) -> list[Effect]:
    """Resend the role's request in flight to ``dest`` (one per destination)."""
    if dest in node.answered:
        return []
    cfg = node.config
    if node.role is RaftRole.CANDIDATE:
        return [election_send(node, dest),
                timers.arm(node, REQUEST, cfg.request_timeout_ms, destination=dest)]
    if node.role is RaftRole.LEADER:
        return [Send(dest, BeginQuorumEpochRequest(node.epoch, node.node_id)),
                timers.arm(node, REQUEST, cfg.request_timeout_ms, destination=dest)]
    if node.role is RaftRole.RESIGNED:
        return transitions.send_end_quorum_epoch(node, only=dest)
    return follower.on_request_timer(node, dest)


def election_send(node: RaftNode, dest: int) -> Effect:
    return Send(dest, election.vote_request(node))


_EVENTS: dict[type, Callable[[RaftNode, Any], list[Effect]]] = {
    Received: _received,
    TimerFired: _timer,
    ClientAppend: replication.on_client_append,
    Flushed: lambda n, e: replication.on_flushed(n, e.end_offset),
    SnapshotWritten: lambda n, e: snapshots.on_snapshot_written(n, e.snapshot_id),
    Resign: lambda n, e: quorum_epoch.on_resign(n),
}

_MESSAGES: dict[type, Callable[[RaftNode, int, Any, int], list[Effect]]] = {
    VoteRequest: lambda n, s, m, t: election.on_vote_request(n, s, m),
    VoteResponse: lambda n, s, m, t: election.on_vote_response(n, s, m),
    BeginQuorumEpochRequest: lambda n, s, m, t: quorum_epoch.on_begin_request(n, s, m),
    BeginQuorumEpochResponse: lambda n, s, m, t: quorum_epoch.on_begin_response(n, s, m),
    EndQuorumEpochRequest: lambda n, s, m, t: quorum_epoch.on_end_request(n, s, m),
    EndQuorumEpochResponse: lambda n, s, m, t: quorum_epoch.on_end_response(n, s, m),
    FetchRequest: replication.on_fetch_request,
    FetchResponse: lambda n, s, m, t: follower.on_fetch_response(n, s, m),
    FetchSnapshotRequest: lambda n, s, m, t: snapshots.on_fetch_snapshot_request(n, s, m),
    FetchSnapshotResponse: lambda n, s, m, t: snapshots.on_fetch_snapshot_response(n, s, m),
    DescribeQuorumRequest: lambda n, s, m, t: describe.on_describe_quorum(n, s, t),
}
"""Message type -> handler: the messages a node takes (every type of ``fsm.raft.messages``
that travels)."""
