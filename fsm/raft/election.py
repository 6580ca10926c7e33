"""Elections (KIP-595 Vote): who may be granted a vote, and counting the grants.

``log_up_to_date`` is a mutation point (``fsm.raft.core``): granting without it lets a
candidate that misses committed entries win."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft import transitions
from fsm.raft.effects import Effect, Send
from fsm.raft.epochs import epoch_before
from fsm.raft.messages import NO_LEADER, VoteRequest, VoteResponse
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def log_up_to_date(candidate_last_epoch: int, candidate_end_offset: int,
                   own_last_epoch: int, own_end_offset: int) -> bool:
    """Raft's election restriction: the candidate's log is at least as up to date as ours --
    a later last epoch, or the same last epoch and an end offset at least ours."""
    return (candidate_last_epoch, candidate_end_offset) >= (own_last_epoch, own_end_offset)


def last_epoch(node: RaftNode) -> int:
    return epoch_before(node.epochs, node.end_offset, node.snapshot_id)


def vote_request(node: RaftNode) -> VoteRequest:
    return VoteRequest(node.epoch, node.node_id, last_epoch(node), node.end_offset)


def on_vote_request(node: RaftNode, source: int, req: VoteRequest) -> list[Effect]:
    """Grant at most one vote per epoch, to an up-to-date candidate; a higher epoch first
    steps down. The vote is persisted (by the role move) before the granting ``Send``."""
    if not node.config.is_voter or req.candidate_id not in node.config.voters:
        return [Send(source, VoteResponse(ErrorCode.INCONSISTENT_VOTER_SET, node.epoch,
                                          node.leader_id, False))]
    if req.candidate_epoch < node.epoch:
        return [Send(source, VoteResponse(ErrorCode.FENCED_LEADER_EPOCH, node.epoch,
                                          node.leader_id, False))]
    fits = log_up_to_date(req.last_offset_epoch, req.last_offset, last_epoch(node),
                          node.end_offset)
    effects: list[Effect] = []
    if req.candidate_epoch > node.epoch:
        vote_for = req.candidate_id if fits else NO_LEADER
        effects += transitions.on_higher_epoch(node, req.candidate_epoch, NO_LEADER, vote_for)
    elif (fits and node.role is RaftRole.UNATTACHED and node.voted_id == NO_LEADER
          and node.config.is_voter):
        effects += transitions.become_voted(node, req.candidate_id)
    granted = (node.epoch == req.candidate_epoch and node.role is RaftRole.VOTED
               and node.voted_id == req.candidate_id)
    effects.append(Send(source, VoteResponse(ErrorCode.NONE, node.epoch, node.leader_id,
                                             granted)))
    return effects


def on_vote_response(node: RaftNode, source: int, resp: VoteResponse) -> list[Effect]:
    """Count a grant of this epoch's candidacy; a majority (self included) makes the leader.
    A response of a higher epoch steps down; a stale or duplicated one does nothing."""
    if resp.leader_epoch > node.epoch:
        return transitions.on_higher_epoch(node, resp.leader_epoch, resp.leader_id)
    if resp.leader_epoch < node.epoch:
        return []
    if resp.leader_id not in (NO_LEADER, node.node_id):
        return transitions.learn_leader(node, resp.leader_id)
    if node.role is not RaftRole.CANDIDATE or source not in node.config.voters:
        return []
    effects = transitions.stop_request(node, source)
    if resp.vote_granted:
        node.grants = node.grants | {source}
        if len(node.grants) >= node.config.majority:
            effects += transitions.become_leader(node)
    return effects
