"""The world's one binding to the Raft core (``fsm.raft.core.RaftNode``) and its driver
(``fsm.raft.driver.RaftDriver``): how a node is made, driven through the world's port, and
written canonically for the state's key. ``NODE_FACTORY`` may be replaced (the world's own
unit tests drive scripted nodes through it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from fsm.raft.config import RaftConfig
from fsm.raft.driver import RaftDriver
from fsm.raft.log_summary import LogSummary, QuorumState


def _real_node(config: RaftConfig, summary: LogSummary, state: QuorumState) -> Any:
    from fsm.raft.core import RaftNode

    return RaftNode(config, state, summary)


NODE_FACTORY: list[Callable[[RaftConfig, LogSummary, QuorumState], Any]] = [_real_node]
"""The one factory in use (a list so a test can swap it and put it back)."""


def new_node(config: RaftConfig, summary: LogSummary, state: QuorumState) -> Any:
    return NODE_FACTORY[0](config, summary, state)


def drive(step: Callable[[Any], Sequence[Any]], port: Any, event: Any) -> None:
    """One event to the node, its effects in order to ``port`` (the core's own driver)."""
    RaftDriver(step, port).process(event)


def node_key(node: Any) -> Any:
    """A node written canonically: its own ``key()`` if it has one, else its fields (slots
    or ``__dict__``) as values, maps and sets sorted."""
    if node is None:
        return None
    own = getattr(node, "key", None)
    if callable(own):
        return own()
    return _canon(node)


def _canon(x: Any, depth: int = 0) -> Any:
    if depth > 6:
        return repr(x)
    if isinstance(x, (int, str, float, bool, type(None), Enum, bytes)):
        return x
    if isinstance(x, dict):
        return tuple(sorted(((repr(k), _canon(v, depth + 1)) for k, v in x.items())))
    if isinstance(x, (set, frozenset)):
        return tuple(sorted(repr(_canon(v, depth + 1)) for v in x))
    if isinstance(x, (list, tuple)):
        return tuple(_canon(v, depth + 1) for v in x)
    slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ())]
    names = slots or sorted(getattr(x, "__dict__", {}))
    if not names:
        return x
    return (type(x).__name__,) + tuple(_canon(getattr(x, n, None), depth + 1)
                                       for n in names if n not in _SKIP)


_SKIP = frozenset({"config", "_out", "_notes"})
