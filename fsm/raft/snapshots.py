"""Snapshots: the leader serving FetchSnapshot, a follower fetching one chunk at a time and
installing it, and any node recording the snapshot its state machine wrote (the log below it
goes). The core never holds a snapshot's contents: the shell fills ``size`` and ``chunk`` of
``SendSnapshotChunk`` (and answers ``POSITION_OUT_OF_RANGE`` itself for a position past the
end: only it knows the size)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft import epochs as idx
from fsm.raft import follower, timers, transitions
from fsm.raft.effects import (
    REQUEST,
    DeleteBefore,
    Effect,
    InstallSnapshot,
    Send,
    SendSnapshotChunk,
)
from fsm.raft.messages import (
    NO_LEADER,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
)
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


# -- the leader ------------------------------------------------------------------------------
def on_fetch_snapshot_request(node: RaftNode, source: int,
                              req: FetchSnapshotRequest) -> list[Effect]:
    def answer(error: ErrorCode) -> list[Effect]:
        return [Send(source, FetchSnapshotResponse(error, node.epoch, node.leader_id,
                                                   req.snapshot_id, position=req.position))]

    if req.current_leader_epoch < node.epoch:
        return answer(ErrorCode.FENCED_LEADER_EPOCH)
    if req.current_leader_epoch > node.epoch:
        effects = transitions.on_higher_epoch(node, req.current_leader_epoch, NO_LEADER)
        return effects + answer(ErrorCode.UNKNOWN_LEADER_EPOCH)
    if node.role is not RaftRole.LEADER:
        return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if req.snapshot_id != node.snapshot_id:
        return answer(ErrorCode.SNAPSHOT_NOT_FOUND)
    if req.position < 0:
        return answer(ErrorCode.POSITION_OUT_OF_RANGE)
    response = FetchSnapshotResponse(ErrorCode.NONE, node.epoch, node.node_id, req.snapshot_id,
                                     position=req.position)
    return [SendSnapshotChunk(source, response)]


# -- the follower ----------------------------------------------------------------------------
def start_fetch(node: RaftNode, snapshot_id: OffsetAndEpoch) -> list[Effect]:
    node.pending_snapshot = (snapshot_id, 0)
    return send_request(node)


def send_request(node: RaftNode) -> list[Effect]:
    assert node.pending_snapshot is not None
    snapshot_id, position = node.pending_snapshot
    request = FetchSnapshotRequest(node.node_id, node.epoch, snapshot_id, position)
    return [Send(node.leader_id, request),
            timers.arm(node, REQUEST, node.config.request_timeout_ms,
                       destination=node.leader_id)]


def on_fetch_snapshot_response(node: RaftNode, source: int,
                               resp: FetchSnapshotResponse) -> list[Effect]:
    if resp.leader_epoch < node.epoch:
        return []
    if resp.leader_epoch > node.epoch:
        return transitions.on_higher_epoch(node, resp.leader_epoch, resp.leader_id)
    pending = node.pending_snapshot
    if (node.role is not RaftRole.FOLLOWER or source != node.leader_id or pending is None
            or pending != (resp.snapshot_id, resp.position)):
        return []  # late, duplicated, or not ours
    effects: list[Effect] = list(timers.cancel(node, REQUEST, source))
    effects.append(timers.arm_fetch(node))
    received = 0 if resp.chunk is None else len(resp.chunk)
    if resp.error is not ErrorCode.NONE or (received == 0 and resp.position < resp.size):
        # the leader has another snapshot now, or none: ask again by Fetch after a backoff
        node.pending_snapshot = None
        effects.append(timers.arm(node, REQUEST, node.config.retry_backoff_ms,
                                  destination=source))
        return effects
    position = resp.position + received
    if position < resp.size:
        node.pending_snapshot = (resp.snapshot_id, position)
        return effects + send_request(node)
    return effects + install(node, resp.snapshot_id)


def install(node: RaftNode, snapshot_id: OffsetAndEpoch) -> list[Effect]:
    """The whole snapshot is here: it replaces the log (start = end = its offset, the epoch
    index reset to its epoch). The high watermark moves to it without a ``HighWatermark``:
    ``InstallSnapshot`` itself tells the state machine it holds everything below."""
    node.pending_snapshot = None
    node.snapshot_id = snapshot_id
    node.log_start_offset = node.end_offset = node.flushed_offset = snapshot_id.offset
    node.epochs = ((snapshot_id.epoch, snapshot_id.offset),)
    node.high_watermark = max(node.high_watermark, snapshot_id.offset)
    return [InstallSnapshot(snapshot_id), *follower.maybe_fetch(node)]


# -- any node --------------------------------------------------------------------------------
def on_snapshot_written(node: RaftNode, snapshot_id: OffsetAndEpoch) -> list[Effect]:
    """The state machine snapshotted the committed prefix up to ``snapshot_id``: record it and
    let the log below it go. An older snapshot than the one held does nothing."""
    if snapshot_id.offset > node.high_watermark:
        raise ValueError(f"node {node.node_id}: snapshot {snapshot_id} past the high "
                         f"watermark {node.high_watermark}")
    if snapshot_id.offset <= node.log_start_offset:
        return []
    expected = idx.epoch_before(node.epochs, snapshot_id.offset, node.snapshot_id)
    if snapshot_id.epoch != expected:
        raise ValueError(f"node {node.node_id}: snapshot {snapshot_id} names epoch "
                         f"{snapshot_id.epoch}, the log's record before it is of {expected}")
    node.snapshot_id = snapshot_id
    node.epochs = idx.trimmed(node.epochs, snapshot_id.offset)
    node.log_start_offset = snapshot_id.offset
    node.flushed_offset = max(node.flushed_offset, snapshot_id.offset)  # the snapshot is durable
    # A follower whose flush was pending may now be durable to its end: the ``Flushed`` still
    # to come tells nothing new and would not send the next Fetch, so this does -- without
    # it the follower fell silent until its fetch timeout and stood for election (the KRaft
    # fault campaign: an election after every follower snapshot taken ahead of its flush).
    return [DeleteBefore(snapshot_id.offset), *follower.maybe_fetch(node)]
