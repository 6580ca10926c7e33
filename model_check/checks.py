"""The invariants the search checks, behind one small seam.

The engine calls ``Checks``: ``view(world)`` builds the global snapshot once per state,
``state(view)`` / ``transition(before, after)`` / ``quiescent(view)`` return violations
(objects with ``invariant`` and ``detail``). ``default_checks()`` wires the catalogue of
``invariants/`` over ``model_check.world.global_view`` (imported when first used, so that
this module loads while the catalogue is being written). Tests pass their own ``Checks``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Found(NamedTuple):
    """A violation as the engine records it (independent of the catalogue's class)."""

    invariant: str
    detail: str


_MEMO_LIMIT = 100_000

STEP_RAISED = "step-raised"
"""Pseudo-invariant: applying an action raised (a bound or an assertion in the world/core)."""


def _none(*_args: object) -> list:
    return []


@dataclass(frozen=True)
class Checks:
    view: Callable[[Any], Any]
    state: Callable[[Any], list]
    transition: Callable[[Any, Any], list] = _none
    quiescent: Callable[[Any], list] = _none
    pending: Callable[[Any], bool] = lambda view: bool(view.pending)
    name: str = "custom"
    state_key: Callable[[Any], tuple] | None = None
    """A key under which views get the same ``on_state`` verdict (None: no memo)."""
    edge_key: Callable[[Any], tuple] | None = None
    """A key of one view such that two steps whose before and after views have equal keys
    get the same ``on_edge`` verdict (None: no memo)."""
    _memo: dict = field(default_factory=dict, compare=False, repr=False)
    _edges: dict = field(default_factory=dict, compare=False, repr=False)

    def on_state(self, view: Any) -> Found | None:
        """State invariants, then the quiescent ones when nothing is pending; memoised by
        ``state_key`` (many states differ only in what the invariants do not read)."""
        key = self.state_key
        if key is None:
            return self._on_state(view)
        k = key(view)
        hit = self._memo.get(k)
        if hit is not None:
            return hit[1]
        found = self._on_state(view)
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[k] = (view, found)  # the view keeps the parts ``k`` names by id alive
        return found

    def _on_state(self, view: Any) -> Found | None:
        for v in self.state(view):
            return Found(v.invariant, v.detail)
        if not self.pending(view):
            for v in self.quiescent(view):
                return Found(v.invariant, v.detail)
        return None

    def on_edge(self, before: Any, after: Any, before_key: tuple | None = None
                ) -> Found | None:
        """Transition invariants of the step ``before -> after``; memoised by ``edge_key``
        (the same step is taken in many states that differ only in what they do not read).
        ``before_key``: ``edge_key(before)``, when the caller has it (one per parent)."""
        key = self.edge_key
        if key is None:
            return self._on_edge(before, after)
        k = (key(before) if before_key is None else before_key, key(after))
        hit = self._edges.get(k)
        if hit is not None:
            return hit[2]
        found = self._on_edge(before, after)
        if len(self._edges) >= _MEMO_LIMIT:
            self._edges.clear()
        self._edges[k] = (before, after, found)  # the views keep the parts ``k`` names alive
        return found

    def _on_edge(self, before: Any, after: Any) -> Found | None:
        for v in self.transition(before, after):
            return Found(v.invariant, v.detail)
        return None


class ChecksUnavailable(RuntimeError):
    """The invariant catalogue or the global view cannot be imported."""


def default_checks() -> Checks:
    try:
        from invariants import check_quiescent, check_state, check_transition
        from model_check.world.global_view import global_view
    except ImportError as e:
        raise ChecksUnavailable(f"the invariant catalogue is not available: {e}") from None
    return Checks(view=global_view, state=check_state, transition=check_transition,
                  quiescent=check_quiescent, name="invariants", state_key=view_parts,
                  edge_key=transition_parts)


def transition_parts(view: Any) -> tuple:
    """What the catalogue's transition invariants read of a ``GlobalView``: ZooKeeper's,
    the controllers' and the brokers' parts, by identity (a test holds the catalogue to it)."""
    return (id(view.zk), *map(id, view.controllers or ()), *map(id, view.brokers or ()))


def view_parts(view: Any) -> tuple:
    """A ``GlobalView`` as a key: the ZooKeeper, controller and broker views by identity
    (the world's views share the parts of components a step did not touch,
    ``global_view``), the other fields by value. Views with equal keys are equal."""
    return (id(view.zk), *map(id, view.controllers or ()), *map(id, view.brokers or ()),
            view.pending, view.deleted_topics, view.reassign_targets,
            view.unclean_leader_election, view.messages_lost)
