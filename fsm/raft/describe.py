"""DescribeQuorum (the tools' view): the leader answers with its voters' and observers'
positions in its epoch and when they last fetched and were caught up; anyone else says it is
not the leader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft.effects import Effect, Send
from fsm.raft.messages import DescribeQuorumResponse, ReplicaState
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def on_describe_quorum(node: RaftNode, source: int, now_ms: int) -> list[Effect]:
    if node.role is not RaftRole.LEADER:
        return [Send(source, DescribeQuorumResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                                    node.leader_id, node.epoch,
                                                    node.high_watermark))]

    def state(replica: int, offset: int) -> ReplicaState:
        return ReplicaState(replica, offset, *node.fetch_times.get(replica, (-1, -1)))

    voters = tuple(
        ReplicaState(v, node.end_offset, now_ms, now_ms) if v == node.node_id
        else state(v, node.positions.get(v, -1))
        for v in node.config.voters)
    observers = tuple(state(o, node.observers[o]) for o in sorted(node.observers))
    return [Send(source, DescribeQuorumResponse(ErrorCode.NONE, node.node_id, node.epoch,
                                                node.high_watermark, voters, observers))]
