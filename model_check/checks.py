"""The invariants the search checks, behind one small seam.

The engine calls ``Checks``: ``view(world)`` builds the global snapshot once per state,
``state(view)`` / ``transition(before, after)`` / ``quiescent(view)`` return violations
(objects with ``invariant`` and ``detail``). ``default_checks()`` wires the catalogue of
``invariants/`` over ``model_check.world.global_view`` (imported when first used, so that
this module loads while the catalogue is being written). Tests pass their own ``Checks``.

Coverage (``model_check.coverage``): ``state_cover(view)`` and ``edge_cover(before, after)``
give the catalogue's coverage bits of a state and a step (which invariants were evaluated,
whose premise held, which were waived and would have failed). ``on_edge`` adds a step's bits
to the active ``Coverage`` itself (every step is checked once); a state's bits are counted
by the engine that decides the state is new (``state_mask``). Both are memoised beside the
verdicts, by the same keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from model_check.coverage import Coverage


class Found(NamedTuple):
    """A violation as the engine records it (independent of the catalogue's class)."""

    invariant: str
    detail: str


_MEMO_LIMIT = 100_000

STEP_RAISED = "step-raised"
"""Pseudo-invariant: applying an action raised (a bound or an assertion in the world/core)."""


_MISSING = object()


class _EdgeIds:
    """``Checks.edge_id``'s tables, owned by the ``Checks`` (bounded: dropped when full; the
    counter goes on, so a number once given names one key for good).

    * ``by_view``: ``id(view) -> (view, number)``: a view met again (a duplicate's view comes
      from the search's ``known``) is one dict lookup by identity, without building its key.
      The entry keeps the view alive, so the id stays its own (views are not interned: two
      equal views built apart are two objects, and get the same number through ``by_key``).
    * ``by_key``: ``edge_key(view) -> (number, view)``; the view kept alive holds the parts
      whose identities the key names, so they are not reused while the key is known.

    Nothing is written into the views themselves."""

    __slots__ = ("by_key", "by_view", "next")

    def __init__(self) -> None:
        self.by_view: dict[int, tuple[Any, int]] = {}
        self.by_key: dict[tuple, tuple[int, Any]] = {}
        self.next = 0

    def number(self, view: Any, key: tuple) -> int:
        by_key = self.by_key
        hit = by_key.get(key)
        if hit is None:
            if len(by_key) >= _MEMO_LIMIT:
                by_key.clear()
            self.next += 1
            hit = by_key[key] = (self.next, view)
        return hit[0]


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
    state_cover: Callable[[Any], int] | None = None
    """The coverage bits of a view's state (and quiescent) invariants (None: not counted)."""
    edge_cover: Callable[[Any, Any], int] | None = None
    """The coverage bits of a step's transition invariants (None: not counted)."""
    _memo: dict = field(default_factory=dict, compare=False, repr=False)
    _edges: dict = field(default_factory=dict, compare=False, repr=False)
    _state_masks: dict = field(default_factory=dict, compare=False, repr=False)
    _edge_masks: dict = field(default_factory=dict, compare=False, repr=False)
    _edge_ids: _EdgeIds = field(default_factory=_EdgeIds, compare=False, repr=False)

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

    def state_mask(self, view: Any) -> int:
        """``state_cover(view)`` (0 without one), memoised by ``state_key``."""
        cover = self.state_cover
        if cover is None:
            return 0
        key = self.state_key
        if key is None:
            return cover(view)
        k = key(view)
        masks = self._state_masks
        hit = masks.get(k)
        if hit is not None:
            return hit[1]
        mask = cover(view)
        if len(masks) >= _MEMO_LIMIT:
            masks.clear()
        masks[k] = (view, mask)  # the view keeps the parts ``k`` names by id alive
        return mask

    def _on_state(self, view: Any) -> Found | None:
        for v in self.state(view):
            return Found(v.invariant, v.detail)
        if not self.pending(view):
            for v in self.quiescent(view):
                return Found(v.invariant, v.detail)
        return None

    def edge_id(self, view: Any) -> int | None:
        """A small int naming ``edge_key(view)``: views with equal keys get the same number,
        and a number is never reused (None: no memo). The edge memo is keyed by two of them
        -- hashing two ints instead of two tuples of part identities per step -- and a view
        met again keeps its number (``_EdgeIds.by_view``, the ``Checks``' own table)."""
        key = self.edge_key
        if key is None:
            return None
        ids = self._edge_ids
        by_view = ids.by_view
        hit = by_view.get(id(view))
        if hit is not None and hit[0] is view:
            return hit[1]
        n = ids.number(view, key(view))
        if len(by_view) >= _MEMO_LIMIT:
            by_view.clear()
        by_view[id(view)] = (view, n)
        return n

    def on_edge(self, before: Any, after: Any, before_id: int | None = None,
                cov: Coverage | None = None) -> Found | None:
        """Transition invariants of the step ``before -> after``; memoised by ``edge_key``
        (the same step is taken in many states that differ only in what they do not read).
        ``before_id``: ``edge_id(before)``, when the caller has it (one per parent).
        ``cov``: count the step's invariant coverage there."""
        if self.edge_key is None:
            if cov is not None and self.edge_cover is not None:
                cov.edge(self.edge_cover(before, after))
            return self._on_edge(before, after)
        k = (self.edge_id(before) if before_id is None else before_id, self.edge_id(after))
        if cov is not None and self.edge_cover is not None:
            masks = self._edge_masks
            mask = masks.get(k)
            if mask is None:
                mask = self.edge_cover(before, after)
                if len(masks) >= _MEMO_LIMIT:
                    masks.clear()
                masks[k] = mask
            cov.edge(mask)
        edges = self._edges
        hit = edges.get(k, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        found = self._on_edge(before, after)
        if len(edges) >= _MEMO_LIMIT:
            edges.clear()
        edges[k] = found  # numbers are never reused: nothing needs to stay alive for ``k``
        return found

    def _on_edge(self, before: Any, after: Any) -> Found | None:
        for v in self.transition(before, after):
            return Found(v.invariant, v.detail)
        return None


class ChecksUnavailable(RuntimeError):
    """The invariant catalogue or the global view cannot be imported."""


def default_checks() -> Checks:
    try:
        from invariants import (
            check_quiescent,
            check_state,
            check_transition,
            coverage_of_state,
            coverage_of_transition,
        )
        from model_check.world.global_view import global_view
    except ImportError as e:
        raise ChecksUnavailable(f"the invariant catalogue is not available: {e}") from None
    return Checks(view=global_view, state=check_state, transition=check_transition,
                  quiescent=check_quiescent, name="invariants", state_key=view_parts,
                  edge_key=transition_parts, state_cover=coverage_of_state,
                  edge_cover=coverage_of_transition)


def transition_parts(view: Any) -> tuple:
    """What the catalogue's transition invariants read of a ``GlobalView``: ZooKeeper's,
    the controllers' and the brokers' parts, by identity, and whether unclean leader
    election is allowed (a test holds the catalogue to it)."""
    return (id(view.zk), *map(id, view.controllers or ()), *map(id, view.brokers or ()),
            view.unclean_leader_election)


def view_parts(view: Any) -> tuple:
    """A ``GlobalView`` as a key: the ZooKeeper, controller and broker views by identity
    (the world's views share the parts of components a step did not touch,
    ``global_view``), the other fields by value. Views with equal keys are equal."""
    return (id(view.zk), *map(id, view.controllers or ()), *map(id, view.brokers or ()),
            view.pending, view.deleted_topics, view.reassign_targets,
            view.unclean_leader_election)
