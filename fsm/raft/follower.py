"""A follower (or an observer) fetching: the Fetch it sends, and what it does with the
leader's answer -- append and flush, truncate on a diverging epoch, fetch a snapshot, learn
the high watermark. One Fetch in flight; the next one goes out only once the log is durable
to its end (``durable.durable_end``), so the fetch offset the leader counts is on disk.

An unattached observer looks for the leader by fetching from the voters in turn (the
``REQUEST`` timer moves on to the next); an answer naming the leader makes it follow."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.raft import durable, node_log, snapshots, timers, transitions
from fsm.raft import epochs as idx
from fsm.raft.effects import REQUEST, AppendBatches, Effect, HighWatermark, Send
from fsm.raft.messages import NO_LEADER, Batch, FetchRequest, FetchResponse
from fsm.raft.roles import RaftRole

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def fetch_request(node: RaftNode) -> FetchRequest:
    offset = durable.durable_end(node)
    return FetchRequest(node.node_id, node.epoch, offset,
                        idx.epoch_before(node.epochs, offset, node.snapshot_id))


def send_fetch(node: RaftNode, destination: int) -> list[Effect]:
    request = fetch_request(node)
    node.pending_fetch, node.fetch_target = request, destination
    return [Send(destination, request),
            timers.arm(node, REQUEST, node.config.request_timeout_ms, destination=destination)]


def maybe_fetch(node: RaftNode) -> list[Effect]:
    """A follower with nothing in flight and its log durable to its end fetches."""
    if (node.role is RaftRole.FOLLOWER and node.pending_fetch is None
            and node.pending_snapshot is None
            and durable.durable_end(node) == node.end_offset):
        return send_fetch(node, node.leader_id)
    return []


def discover(node: RaftNode) -> list[Effect]:
    """An unattached observer asks the next voter (any answer names the leader it knows)."""
    voters = node.config.voters
    return send_fetch(node, voters[node.discover_index % len(voters)])


def on_request_timer(node: RaftNode, destination: int) -> list[Effect]:
    """No answer in time: the observer moves on; a follower resends what is in flight."""
    if node.role is RaftRole.UNATTACHED and not node.config.is_voter:
        node.pending_fetch = None
        node.discover_index = (node.discover_index + 1) % len(node.config.voters)
        return discover(node)
    if node.role is not RaftRole.FOLLOWER or destination != node.leader_id:
        return []
    if node.pending_snapshot is not None:
        return snapshots.send_request(node)
    node.pending_fetch = None
    return maybe_fetch(node)


def on_fetch_timeout(node: RaftNode) -> list[Effect]:
    """The leader was silent for ``fetch_timeout_ms``: a voter stands, an observer looks for
    the leader again."""
    if node.role is not RaftRole.FOLLOWER:
        return []
    if node.config.is_voter:
        return transitions.become_candidate(node)
    return transitions.become_unattached(node, node.epoch)


def on_fetch_response(node: RaftNode, source: int, resp: FetchResponse) -> list[Effect]:
    if resp.leader_epoch < node.epoch:
        return []
    if resp.leader_epoch > node.epoch:
        return transitions.on_higher_epoch(node, resp.leader_epoch, resp.leader_id)
    if node.role is not RaftRole.FOLLOWER:
        if resp.leader_id in (NO_LEADER, node.node_id):
            return []
        if node.fetch_target == source:
            node.pending_fetch = None
        return transitions.learn_leader(node, resp.leader_id)
    req = node.pending_fetch
    if (source != node.leader_id or req is None or node.fetch_target != source
            or resp.fetch_offset not in (-1, req.fetch_offset)
            or resp.last_fetched_epoch not in (-1, req.last_fetched_epoch)):
        return []  # late, duplicated, or not ours
    node.pending_fetch = None
    effects: list[Effect] = list(timers.cancel(node, REQUEST, source))
    effects.append(timers.arm_fetch(node))
    if resp.error is not ErrorCode.NONE:
        effects.append(timers.arm(node, REQUEST, node.config.retry_backoff_ms,
                                  destination=source))
        return effects
    if resp.diverging_epoch is not None:
        effects += node_log.truncate(node, truncation_offset(node, resp.diverging_epoch))
        return effects + maybe_fetch(node)
    if resp.snapshot_id is not None:
        return effects + snapshots.start_fetch(node, resp.snapshot_id)
    if resp.batches:
        batches = acceptable(node, resp.batches)
        if batches is None:
            return effects + maybe_fetch(node)
        for b in batches:
            node_log.append(node, b)
        effects += [AppendBatches(batches), node_log.flush(node)]
    effects += learn_high_watermark(node, resp.high_watermark)
    return effects + maybe_fetch(node)


def truncation_offset(node: RaftNode, diverging) -> int:
    """Where the log diverges from the leader's: the leader's end of the diverging epoch, or
    ours if it is earlier (our own end for the largest epoch we hold that is not past it)."""
    own = idx.end_offset_for_epoch(node.epochs, node.end_offset, diverging.epoch,
                                   node.snapshot_id)
    own_end = node.log_start_offset if own is None else own.offset
    return min(diverging.offset, own_end)


def acceptable(node: RaftNode, batches: tuple[Batch, ...]) -> tuple[Batch, ...] | None:
    """The batches if they continue the log: contiguous from its end, epochs not going back
    and not past the leader's; at most ``max_batches_per_fetch``. None otherwise."""
    batches = batches[: node.config.max_batches_per_fetch]
    offset = node.end_offset
    last = idx.epoch_before(node.epochs, offset, node.snapshot_id)
    for b in batches:
        if b.base_offset != offset or not (last <= b.epoch <= node.epoch) or not b.records:
            return None
        offset, last = b.end_offset, b.epoch
    return batches


def learn_high_watermark(node: RaftNode, leader_hw: int) -> list[Effect]:
    """A follower's high watermark: the leader's, never past its own log end; only grows."""
    hw = min(leader_hw, node.end_offset)
    if hw <= node.high_watermark:
        return []
    node.high_watermark = hw
    return [HighWatermark(hw)]
