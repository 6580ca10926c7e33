"""Role changes. Every one goes through ``RAFT_ROLE_TABLE.check`` (``move``), cancels what the
old role had armed, persists the quorum-state when it changed -- before any ``Send`` of the
new role -- and emits ``RoleChanged``; then the new role's entry step arms its timers and sends
its first requests.

``on_higher_epoch``, ``become_follower``'s ``log_on_becoming_follower`` are mutation points
(``fsm.raft.core``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.raft import election, follower, node_log, timers
from fsm.raft.effects import (
    ELECTION,
    REQUEST,
    AppendBatches,
    Effect,
    PersistQuorumState,
    RoleChanged,
    Send,
)
from fsm.raft.messages import (
    NO_LEADER,
    Batch,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    LeaderChange,
)
from fsm.raft.roles import RAFT_ROLE_TABLE, RaftRole, role_label

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode

_R = RaftRole


def move(node: RaftNode, target: RaftRole, epoch: int, leader_id: int,
         voted_id: int, keep: frozenset[tuple[str, int]] = frozenset()) -> list[Effect]:
    """The one way a role changes: checked, old timers cancelled (but those in ``keep``),
    role state reset, the durable quorum-state persisted if it changed, ``RoleChanged``."""
    source = node.role
    RAFT_ROLE_TABLE.check(role_label(node.node_id), source, target)
    if epoch < node.epoch:
        raise AssertionError(f"node {node.node_id}: epoch {node.epoch} -> {epoch}")
    effects: list[Effect] = list(timers.cancel_all(node, keep))
    before = node.quorum_state
    node.role, node.epoch, node.leader_id, node.voted_id = target, epoch, leader_id, voted_id
    node.reset_role_state()
    if node.quorum_state != before:
        effects.append(PersistQuorumState(node.quorum_state))
    effects.append(RoleChanged(source, target, epoch, leader_id))
    return effects


def _others(node: RaftNode) -> tuple[int, ...]:
    return tuple(v for v in node.config.voters if v != node.node_id)


def _arm_election(node: RaftNode, delay_ms: int | None = None) -> Effect:
    cfg = node.config
    if delay_ms is None:
        return timers.arm(node, ELECTION, cfg.election_timeout_ms, cfg.election_backoff_max_ms)
    return timers.arm(node, ELECTION, delay_ms)


# -- start -----------------------------------------------------------------------------------
def start(node: RaftNode) -> list[Effect]:
    """The first role, from the durable quorum-state: a restarted leader resigns (it never
    leads its old epoch again), a voter that voted keeps its vote, a known leader is followed,
    else unattached. A one-voter quorum elects itself at once."""
    qs, me, voter = node.quorum_state, node.node_id, node.config.is_voter
    if voter and qs.leader_id == me:
        effects = move(node, _R.RESIGNED, qs.epoch, me, qs.voted_id)
        node.successors = _others(node)
        effects += _resigned_entry(node)
    elif voter and qs.voted_id != NO_LEADER and qs.leader_id == NO_LEADER:
        effects = move(node, _R.VOTED, qs.epoch, NO_LEADER, qs.voted_id)
        effects.append(_arm_election(node))
    elif qs.leader_id not in (NO_LEADER, me):
        effects = become_follower(node, qs.epoch, qs.leader_id)
    else:
        effects = _unattached_entry(node)
    if node.config.voters == (me,) and node.role is not _R.LEADER:
        effects += become_candidate(node)
    return effects


# -- the roles' entries ----------------------------------------------------------------------
_ELECTION_TIMER = frozenset({(ELECTION, -1)})


def become_unattached(node: RaftNode, epoch: int) -> list[Effect]:
    """Unattached in ``epoch``. A voter whose election timer runs (unattached, voted,
    candidate, resigned) keeps it running, deadline unchanged, as Kafka's
    ``QuorumState.transitionToUnattached`` keeps the remaining election time: were every
    higher epoch to restart it, a voter whose log is behind -- which can never win -- could
    keep the one that can from ever standing, by standing again and again (seen in the KRaft
    fault campaign: 8 epochs and 9 s without a leader after the active controller's kill)."""
    voted = node.voted_id if epoch == node.epoch else NO_LEADER
    if node.config.is_voter and node.armed >= _ELECTION_TIMER:
        return move(node, _R.UNATTACHED, epoch, NO_LEADER, voted, keep=_ELECTION_TIMER)
    return move(node, _R.UNATTACHED, epoch, NO_LEADER, voted) + _unattached_entry(node)


def _unattached_entry(node: RaftNode) -> list[Effect]:
    if node.config.is_voter:
        return [_arm_election(node)]
    return follower.discover(node)


def become_voted(node: RaftNode, candidate_id: int, epoch: int | None = None) -> list[Effect]:
    """Grant the vote of ``epoch`` (default: the current one): persisted by the move."""
    epoch = node.epoch if epoch is None else epoch
    return move(node, _R.VOTED, epoch, NO_LEADER, candidate_id) + [_arm_election(node)]


def become_candidate(node: RaftNode) -> list[Effect]:
    """Stand: epoch + 1, vote self (persisted before any Send), Vote to every other voter."""
    effects = move(node, _R.CANDIDATE, node.epoch + 1, NO_LEADER, node.node_id)
    node.grants = frozenset({node.node_id})
    if len(node.grants) >= node.config.majority:
        return effects + become_leader(node)
    request = election.vote_request(node)
    for v in _others(node):
        effects.append(Send(v, request))
        effects.append(timers.arm(node, REQUEST, node.config.request_timeout_ms, destination=v))
    effects.append(_arm_election(node))
    return effects


def become_leader(node: RaftNode) -> list[Effect]:
    """Won: persist (leader self), append the epoch's ``LeaderChange`` as its first batch and
    flush it, tell the other voters (BeginQuorumEpoch, resent until answered or fetched)."""
    granting = tuple(sorted(node.grants))
    effects = move(node, _R.LEADER, node.epoch, node.node_id, node.node_id)
    node.epoch_start = node.end_offset
    node.positions = {v: -1 for v in _others(node)}
    change = LeaderChange(node.node_id, node.config.voters, granting)
    batch = Batch(node.end_offset, node.epoch, (change,), control=True)
    node_log.append(node, batch)
    effects += [AppendBatches((batch,)), node_log.flush(node)]
    request = BeginQuorumEpochRequest(node.epoch, node.node_id)
    for v in _others(node):
        effects.append(Send(v, request))
        effects.append(timers.arm(node, REQUEST, node.config.request_timeout_ms, destination=v))
    return effects


def log_on_becoming_follower(node: RaftNode) -> list[Effect]:
    """What a node does to its log when it starts following: nothing. It truncates only on a
    diverging epoch from its leader (truncating to the high watermark here is KIP-101's bug:
    the HW a follower knows may lag what it must keep)."""
    return []


def become_follower(node: RaftNode, epoch: int, leader_id: int) -> list[Effect]:
    """Follow ``leader_id`` in ``epoch``: persisted, the fetch timer armed, the first Fetch
    sent once the log is durable to its end."""
    voted = node.voted_id if epoch == node.epoch else NO_LEADER
    effects = move(node, _R.FOLLOWER, epoch, leader_id, voted)
    effects += log_on_becoming_follower(node)
    effects.append(timers.arm_fetch(node))
    return effects + follower.maybe_fetch(node)


def become_resigned(node: RaftNode, successors: tuple[int, ...]) -> list[Effect]:
    """A leader steps down (``Resign``): EndQuorumEpoch to the voters naming ``successors``
    (most caught up first)."""
    effects = move(node, _R.RESIGNED, node.epoch, node.leader_id, node.voted_id)
    node.successors = successors
    return effects + _resigned_entry(node)


def _resigned_entry(node: RaftNode) -> list[Effect]:
    return [*send_end_quorum_epoch(node), _arm_election(node)]


def send_end_quorum_epoch(node: RaftNode, only: int | None = None) -> list[Effect]:
    """EndQuorumEpoch to every other voter that has not answered (or to ``only``)."""
    request = EndQuorumEpochRequest(node.epoch, node.node_id, node.successors)
    effects: list[Effect] = []
    for v in _others(node) if only is None else (only,):
        if v not in node.answered:
            effects.append(Send(v, request))
            effects.append(timers.arm(node, REQUEST, node.config.request_timeout_ms,
                                      destination=v))
    return effects


# -- epochs and leaders learnt from messages -------------------------------------------------
def on_higher_epoch(node: RaftNode, epoch: int, leader_id: int,
                    vote_for: int = NO_LEADER) -> list[Effect]:
    """A message carries a higher epoch: step down to it -- following its leader if it names
    one, voting for ``vote_for`` if given (a Vote we grant), else unattached."""
    if leader_id not in (NO_LEADER, node.node_id):
        return become_follower(node, epoch, leader_id)
    if vote_for != NO_LEADER and node.config.is_voter:
        return become_voted(node, vote_for, epoch)
    return become_unattached(node, epoch)


def learn_leader(node: RaftNode, leader_id: int) -> list[Effect]:
    """A message of the current epoch names its leader: follow it unless we already do (or
    lead, or resigned from leading, this epoch)."""
    if node.leader_id == leader_id or node.role not in (_R.UNATTACHED, _R.VOTED, _R.CANDIDATE):
        return []
    return become_follower(node, node.epoch, leader_id)


def stop_request(node: RaftNode, destination: int) -> list[Effect]:
    """``destination`` answered the role's request: no more resends to it."""
    node.answered = node.answered | {destination}
    return list(timers.cancel(node, REQUEST, destination))

