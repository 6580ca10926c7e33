"""BeginQuorumEpoch (a new leader tells the voters) and EndQuorumEpoch (a leader resigning
tells them whom to elect first), both sides."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft import timers, transitions
from fsm.raft.effects import ELECTION, FETCH, Effect, Send
from fsm.raft.messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
)
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def on_begin_request(node: RaftNode, source: int, req: BeginQuorumEpochRequest
                     ) -> list[Effect]:
    """Follow the new leader (persisted before the answer)."""
    effects: list[Effect] = []
    if req.leader_epoch < node.epoch:
        error = ErrorCode.FENCED_LEADER_EPOCH
    elif req.leader_id == node.node_id or req.leader_id not in node.config.voters:
        error = ErrorCode.INCONSISTENT_VOTER_SET
    else:
        error = ErrorCode.NONE
        if req.leader_epoch > node.epoch:
            effects += transitions.on_higher_epoch(node, req.leader_epoch, req.leader_id)
        else:
            effects += transitions.learn_leader(node, req.leader_id)
    return effects + [Send(source, BeginQuorumEpochResponse(error, node.epoch, node.leader_id))]


def on_begin_response(node: RaftNode, source: int, resp: BeginQuorumEpochResponse
                      ) -> list[Effect]:
    if resp.leader_epoch > node.epoch:
        return transitions.on_higher_epoch(node, resp.leader_epoch, resp.leader_id)
    if (resp.leader_epoch == node.epoch and node.role is RaftRole.LEADER
            and source in node.positions):
        return transitions.stop_request(node, source)
    return []


def election_delay(node: RaftNode, successors: tuple[int, ...]) -> int:
    """How soon a voter stands after its leader resigned: the first preferred successor at
    once, the next ones after growing backoffs, the rest after the longest."""
    cfg = node.config
    if node.node_id not in successors:
        return cfg.election_backoff_max_ms
    return min(cfg.retry_backoff_ms * ((1 << successors.index(node.node_id)) - 1),
               cfg.election_backoff_max_ms)


def on_end_request(node: RaftNode, source: int, req: EndQuorumEpochRequest) -> list[Effect]:
    """The leader of the epoch resigns: stand soon (preferred successors first)."""
    effects: list[Effect] = []
    if req.leader_epoch < node.epoch:
        error = ErrorCode.FENCED_LEADER_EPOCH
    else:
        error = ErrorCode.NONE
        if req.leader_epoch > node.epoch:
            effects += transitions.on_higher_epoch(node, req.leader_epoch, NO_LEADER)
        if node.config.is_voter and node.epoch == req.leader_epoch:
            delay = election_delay(node, req.preferred_successors)
            if node.role is RaftRole.FOLLOWER and node.leader_id == req.leader_id:
                effects.append(timers.arm(node, FETCH, delay))
            elif node.role in (RaftRole.UNATTACHED, RaftRole.VOTED):
                effects.append(timers.arm(node, ELECTION, delay))
    return effects + [Send(source, EndQuorumEpochResponse(error, node.epoch, node.leader_id))]


def on_end_response(node: RaftNode, source: int, resp: EndQuorumEpochResponse
                    ) -> list[Effect]:
    if resp.leader_epoch > node.epoch:
        return transitions.on_higher_epoch(node, resp.leader_epoch, resp.leader_id)
    if resp.leader_epoch == node.epoch and node.role is RaftRole.RESIGNED:
        return transitions.stop_request(node, source)
    return []


def on_resign(node: RaftNode) -> list[Effect]:
    """Graceful step-down of the leader; anywhere else nothing to do."""
    if node.role is not RaftRole.LEADER:
        return []
    successors = tuple(sorted(node.positions, key=lambda v: (-node.positions[v], v)))
    return transitions.become_resigned(node, successors)
