"""Builders for the Raft core's unit tests: a node started from a given durable state, driven
to a role by the events that would get it there, and effect filters."""

from __future__ import annotations

from typing import Any

from fsm.errors import ErrorCode
from fsm.raft.config import RaftConfig
from fsm.raft.core import RaftNode
from fsm.raft.effects import Send
from fsm.raft.events import Flushed, Received, Start, TimerFired
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import (
    Batch,
    FetchRequest,
    FetchResponse,
    OffsetAndEpoch,
    VoteResponse,
)

VOTERS = (1, 2, 3)
FRESH = QuorumState()
EMPTY = LogSummary()


def make(node_id: int = 1, voters: tuple[int, ...] = VOTERS, state: QuorumState = FRESH,
         log: LogSummary = EMPTY, **cfg: Any) -> tuple[RaftNode, list]:
    node = RaftNode(RaftConfig(node_id, voters, **cfg), state, log)
    return node, node.handle(Start())


def log_of(*runs: tuple[int, int], start: int = 0,
           snapshot: OffsetAndEpoch | None = None) -> LogSummary:
    """A log summary from runs of (epoch, number of records), from offset ``start``."""
    epochs, offset = [], start
    if snapshot is not None:
        epochs.append((snapshot.epoch, snapshot.offset))
    for epoch, count in runs:
        if not epochs or epochs[-1][0] != epoch:
            epochs.append((epoch, offset))
        offset += count
    return LogSummary(offset, tuple(epochs), start, snapshot)


def of(effects: list, kind: type) -> list:
    return [e for e in effects if isinstance(e, kind)]


def sent(effects: list, kind: type | None = None, to: int | None = None) -> list:
    return [e.message for e in effects if isinstance(e, Send)
            and (kind is None or isinstance(e.message, kind))
            and (to is None or e.destination == to)]


def leader(node_id: int = 1, voters: tuple[int, ...] = VOTERS, log: LogSummary = EMPTY,
           epoch: int = 0, flush: bool = True, **cfg: Any) -> RaftNode:
    """A node elected leader of ``epoch + 1`` by the other voters' grants (its LeaderChange
    flushed unless ``flush`` is False)."""
    node, _ = make(node_id, voters, QuorumState(epoch), log, **cfg)
    node.handle(TimerFired("election"))
    for v in voters:
        if v != node_id and node.role.value == "candidate":
            node.handle(Received(v, VoteResponse(ErrorCode.NONE, node.epoch, -1, True)))
    assert node.role.value == "leader", node
    if flush:
        node.handle(Flushed(node.end_offset))
    return node


def follower(node_id: int = 2, leader_id: int = 1, epoch: int = 1,
             log: LogSummary = EMPTY, voters: tuple[int, ...] = VOTERS,
             **cfg: Any) -> tuple[RaftNode, list]:
    """A node restarted as follower of ``leader_id`` in ``epoch``; its first Fetch is out."""
    return make(node_id, voters, QuorumState(epoch, leader_id, -1), log, **cfg)


def fetch(node: RaftNode, replica: int, offset: int, last_epoch: int, now: int = 0) -> list:
    return node.handle(Received(replica, FetchRequest(replica, node.epoch, offset, last_epoch),
                                now))


def answer(node: RaftNode, request: FetchRequest, leader_id: int = 1, hw: int = 0,
           batches: tuple[Batch, ...] = (), **kw: Any) -> list:
    """The leader's answer to ``request`` (echoing it) delivered to ``node``."""
    kw.setdefault("log_start_offset", 0)
    resp = FetchResponse(ErrorCode.NONE, node.epoch, leader_id, hw, batches=batches,
                         fetch_offset=request.fetch_offset,
                         last_fetched_epoch=request.last_fetched_epoch, **kw)
    return node.handle(Received(leader_id, resp))


def batch(base: int, epoch: int, n: int = 1) -> Batch:
    return Batch(base, epoch, tuple(f"r{base + i}" for i in range(n)))
