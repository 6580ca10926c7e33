"""A scripted stand-in for ``RaftNode`` for the world's own tests: it answers each event type
with the effects a test set (``on``), records what it heard, and copies itself."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fsm.raft.config import RaftConfig
from fsm.raft.log_summary import LogSummary, QuorumState
from model_check.raft import nodes

SCRIPT: dict[tuple[int, type], Callable[[Any], list[Any]]] = {}
"""(node id, event type) -> effects; shared by every FakeNode of a test."""


class FakeNode:
    def __init__(self, config: RaftConfig, summary: LogSummary, state: QuorumState) -> None:
        self.config, self.summary, self.state = config, summary, state
        self.seen: list[Any] = []
        self.parked: dict[int, Any] = {}  # a leader's parked fetches, as the view reads them

    def handle(self, event: Any) -> list[Any]:
        self.seen.append(event)
        answer = SCRIPT.get((self.config.node_id, type(event)))
        return [] if answer is None else answer(event)

    def copy(self) -> FakeNode:
        return copy.deepcopy(self)

    def key(self) -> tuple:
        return (self.summary, self.state, tuple(repr(e) for e in self.seen))


def on(node_id: int, event_type: type, *effects: Any,
       fn: Callable[[Any], list[Any]] | None = None) -> None:
    SCRIPT[(node_id, event_type)] = fn or (lambda _e: list(effects))


@contextmanager
def fake_nodes() -> Iterator[None]:
    SCRIPT.clear()
    nodes.NODE_FACTORY.insert(0, FakeNode)
    try:
        yield
    finally:
        nodes.NODE_FACTORY.pop(0)
        SCRIPT.clear()
