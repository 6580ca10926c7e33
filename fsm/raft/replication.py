"""The leader's side of replication: answering Fetch (divergence, snapshot redirect, records,
parking), taking the state machine's appends, and moving the high watermark as its voters'
positions and its own durable end advance.

A caught-up fetcher (at the log end, already told the current high watermark) is *parked*:
answered when the log end or the high watermark moves, or when its ``PARKED`` timer fires
(``fetch_timeout_ms / 2``). Without it a follower and its leader would spin on empty answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft import durable, leader_state, node_log, timers, transitions
from fsm.raft import epochs as idx
from fsm.raft.effects import (
    PARKED,
    AppendBatches,
    AppendRefused,
    Effect,
    HighWatermark,
    Send,
    SendRecords,
)
from fsm.raft.events import ClientAppend
from fsm.raft.messages import NO_LEADER, Batch, FetchRequest, FetchResponse, OffsetAndEpoch
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode

MAX_OBSERVERS = 256
"""Observers a leader tracks for DescribeQuorum; past it, the one that fetched longest ago
is forgotten."""

ANONYMOUS_REPLICA = -1
"""The replica id of a fetcher without one -- a tool reading the log (``kcontrol
metadata-shell --bootstrap-controller``; Kafka's KAFKA-12161). The shell names such a
request's source by its connection, a negative id: the leader answers it like an observer's
fetch but keeps nothing about it (no position for DescribeQuorum, no parked fetch)."""

SNAPSHOT = "snapshot"
"""``divergence``'s answer when the fetcher must load the leader's snapshot."""


def divergence(node: RaftNode, fetch_offset: int,
               last_fetched_epoch: int) -> OffsetAndEpoch | str | None:
    """Whether (``last_fetched_epoch``, ``fetch_offset``) is in the leader's log: None if so;
    ``SNAPSHOT`` if the fetcher is behind the log start (or diverges below it); else the
    diverging epoch -- the leader's largest epoch not past ``last_fetched_epoch`` and that
    epoch's end offset."""
    if fetch_offset < node.log_start_offset:
        return SNAPSHOT
    snap = node.snapshot_id
    if fetch_offset == node.log_start_offset:
        return None if snap is None or snap.epoch == last_fetched_epoch else SNAPSHOT
    found = idx.end_offset_for_epoch(node.epochs, node.end_offset, last_fetched_epoch, snap)
    if found is None:
        return SNAPSHOT if snap is not None else OffsetAndEpoch(0, 0)
    if found.epoch < last_fetched_epoch or found.offset < fetch_offset:
        return found
    return None


def _response(node: RaftNode, error: ErrorCode, req: FetchRequest, **kw) -> FetchResponse:
    return FetchResponse(error, node.epoch, node.leader_id, node.high_watermark,
                         node.log_start_offset, fetch_offset=req.fetch_offset,
                         last_fetched_epoch=req.last_fetched_epoch, **kw)


def on_fetch_request(node: RaftNode, source: int, req: FetchRequest,
                     now_ms: int) -> list[Effect]:
    if req.current_leader_epoch < node.epoch:
        return [Send(source, _response(node, ErrorCode.FENCED_LEADER_EPOCH, req))]
    if req.current_leader_epoch > node.epoch:
        effects = transitions.on_higher_epoch(node, req.current_leader_epoch, NO_LEADER)
        return effects + [Send(source, _response(node, ErrorCode.UNKNOWN_LEADER_EPOCH,
                                                 req))]
    if node.role is not RaftRole.LEADER:
        return [Send(source, _response(node, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                       req))]
    anonymous = req.replica_id == ANONYMOUS_REPLICA and source < 0
    if (req.replica_id != source and not anonymous) or source == node.node_id:
        return [Send(source, _response(node, ErrorCode.INVALID_REQUEST, req))]
    found = divergence(node, req.fetch_offset, req.last_fetched_epoch)
    if found == SNAPSHOT:
        return [Send(source, _response(node, ErrorCode.NONE, req,
                                       snapshot_id=node.snapshot_id))]
    if found is not None:
        return [Send(source, _response(node, ErrorCode.NONE, req, diverging_epoch=found))]
    if anonymous:  # a tool: answered at once, no position kept, never parked
        response = _response(node, ErrorCode.NONE, req)
        if req.fetch_offset >= node.end_offset:
            return [Send(source, response)]
        return [SendRecords(source, response, req.fetch_offset, node.end_offset,
                            node.config.max_batches_per_fetch)]
    effects = record_position(node, source, req.fetch_offset, now_ms)
    effects += advance_high_watermark(node)
    if req.fetch_offset == node.end_offset and node.hw_sent.get(source) == node.high_watermark:
        node.parked[source] = req
        effects.append(timers.arm(node, PARKED, node.config.fetch_timeout_ms // 2,
                                  destination=source))
        return effects
    effects += timers.cancel(node, PARKED, source)
    node.parked.pop(source, None)
    return effects + [answer(node, source, req)]


def record_position(node: RaftNode, replica: int, fetch_offset: int,
                    now_ms: int) -> list[Effect]:
    """A valid fetch at ``fetch_offset``: the replica holds the leader's log below it (on
    disk). Voters' positions count toward the high watermark (they never go back within an
    epoch: a late duplicate does not lower them); observers' are kept for DescribeQuorum."""
    previous = node.fetch_times.get(replica, (-1, -1))
    caught_up = now_ms if fetch_offset >= node.end_offset else previous[1]
    if replica in node.positions:
        node.positions[replica] = max(node.positions[replica], fetch_offset)
        effects = transitions.stop_request(node, replica)
    else:
        if replica not in node.observers and len(node.observers) >= MAX_OBSERVERS:
            oldest = min(node.observers, key=lambda o: (node.fetch_times[o][0], o))
            del node.observers[oldest]
            del node.fetch_times[oldest]
        node.observers[replica] = fetch_offset
        effects = []
    node.fetch_times[replica] = (now_ms, caught_up)
    return effects


def answer(node: RaftNode, destination: int, req: FetchRequest) -> Effect:
    """The records from the fetch offset to the log end (or a snapshot redirect, if the log
    start passed it while the fetch was parked), with the current high watermark."""
    node.hw_sent[destination] = node.high_watermark
    if req.fetch_offset < node.log_start_offset:
        return Send(destination, _response(node, ErrorCode.NONE, req,
                                           snapshot_id=node.snapshot_id))
    response = _response(node, ErrorCode.NONE, req)
    if req.fetch_offset >= node.end_offset:
        return Send(destination, response)
    return SendRecords(destination, response, req.fetch_offset, node.end_offset,
                       node.config.max_batches_per_fetch)


def answer_parked(node: RaftNode) -> list[Effect]:
    """Answer every parked fetch that now has news: records past it, or a new HW."""
    effects: list[Effect] = []
    for dest in sorted(node.parked):
        req = node.parked[dest]
        if node.end_offset > req.fetch_offset or node.hw_sent.get(dest) != node.high_watermark:
            del node.parked[dest]
            effects += timers.cancel(node, PARKED, dest)
            effects.append(answer(node, dest, req))
    return effects


def on_parked_timer(node: RaftNode, destination: int) -> list[Effect]:
    req = node.parked.pop(destination, None)
    if req is None or node.role is not RaftRole.LEADER:
        return []
    return [answer(node, destination, req)]


def advance_high_watermark(node: RaftNode) -> list[Effect]:
    """Recompute the leader's high watermark (``leader_state.next_high_watermark``); when it
    grew, say so and answer the parked fetches."""
    if node.role is not RaftRole.LEADER:
        return []
    hw = leader_state.next_high_watermark(
        node.high_watermark, durable.durable_end(node), tuple(node.positions.values()),
        node.config.majority, node.epoch_start)
    if hw <= node.high_watermark:
        return []
    node.high_watermark = hw
    return [HighWatermark(hw), *answer_parked(node)]


def on_client_append(node: RaftNode, event: ClientAppend) -> list[Effect]:
    """The active controller appends one batch at the log end in the epoch it leads."""
    def refuse(reason: str) -> list[Effect]:
        return [AppendRefused(event.epoch, node.epoch, reason)]

    if node.role is not RaftRole.LEADER:
        return refuse(f"node {node.node_id} is {node.role.value}, not the leader")
    if event.epoch != node.epoch:
        return refuse(f"epoch {event.epoch} is not the leader's epoch {node.epoch}")
    if event.base_offset != node.end_offset:
        return refuse(f"base offset {event.base_offset} is not the log end {node.end_offset}")
    if not event.records:
        return refuse("a batch of no records")
    batch = Batch(event.base_offset, node.epoch, tuple(event.records))
    node_log.append(node, batch)
    return [AppendBatches((batch,)), node_log.flush(node), *answer_parked(node)]


def on_flushed(node: RaftNode, end_offset: int) -> list[Effect]:
    """The log is durable further: the leader's own position moves (the HW may follow); a
    follower may fetch again."""
    if not node_log.flushed(node, end_offset):
        return []
    from fsm.raft import follower

    return advance_high_watermark(node) + follower.maybe_fetch(node)
