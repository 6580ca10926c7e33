"""Breadth-first search over every interleaving the world offers, up to the scenario's bounds.

Level-synchronous BFS (the shape the Spark engine distributes): level ``d`` is the list of
states first reached in ``d`` steps after the start, in discovery order. Expanding a state
restores it, lists ``enabled_actions()`` (a deterministic order) and applies each to its own
restored copy; a successor is new when its 64-bit key is unseen -- its fingerprint, or with
symmetry reduction its class key (``symmetry.canonical``: the same for every renaming of
its free brokers). Checked:

* every edge (parent view, child view): the transition invariants -- duplicates included,
  since an edge into a known state is still a step the cluster can take;
* every new state: the state invariants, and the quiescent ones when nothing is pending;
* every step: applying it must not raise (a bound or an assertion of the world or core);
* with a ``StateGraph`` (``--graph``): once the search is done, that every state can still
  reach a quiescent, healthy one (``graph.py``).

Each state keeps ``(parent key, action index)``: the first violation met in this order is at
the smallest depth, so the path rebuilt from the pointers is a shortest counterexample. The
world explored for a key is the first one found (a real world: the actions along the
pointers lead to it), so a trace is a sequence of real actions with or without symmetry.
The search is a pure function of (scenario, options): no clocks or randomness decide
anything, so two runs -- or this engine and the Spark one -- agree state for state.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from model_check.checks import STEP_RAISED, Checks, Found
from model_check.coverage import Coverage
from model_check.graph import CANNOT_RECOVER, StateGraph
from model_check.memo import Memos
from model_check.scenario import Scenario
from model_check.start import Start, start
from model_check.world import World, WorldConfig, fingerprint
from model_check.world import actions as A
from model_check.world.fingerprint import Near, fingerprint_near

ROOT = -1
"""The action index of the start state (it has no parent)."""


@dataclass(frozen=True)
class Options:
    depth: int | None = None  # None: the scenario's bound
    max_states: int | None = None  # None: the scenario's guard
    symmetry: bool | None = None  # None: the scenario's ``symmetry``


@dataclass(frozen=True)
class Level:
    depth: int  # the depth of the states found at this level
    frontier: int  # states expanded (found at depth - 1)
    generated: int  # successors generated (edges)
    new: int  # distinct new states
    duplicates: int  # successors already seen
    seconds: float


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str
    path: tuple[int, ...]  # action indices from the start state (after the setup)
    setup: tuple[A.Action, ...] = ()

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass
class Result:
    scenario: str
    engine: str
    verdict: str  # "pass" | "violation"
    states_generated: int
    distinct_states: int
    depth: int
    seconds: float
    levels: list[Level] = field(default_factory=list)
    bounded_by: str = "exhausted"  # "exhausted" | "depth" | "max-states"
    violation: Violation | None = None
    setup_steps: int = 0
    symmetry: str = "off"
    checks: str = ""
    coverage: Coverage | None = None  # what the run reached (``--coverage``)

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


class Successor(NamedTuple):  # a tuple: built once per step, it must be cheap
    index: int
    action: A.Action
    snapshot: tuple | None  # None when the step raised
    fp: int  # the key the search dedupes on: the fingerprint, or the class key (``canon``)
    view: Any
    found: Found | None  # the edge's violation (or the step raised)
    real_fp: int | None = None  # the world's own fingerprint when ``fp`` is a class key


_new = tuple.__new__  # ``Successor(...)`` without the generated ``__new__``'s call


def expand(snap: tuple, config: WorldConfig, checks: Checks, view: Any,
           known: dict[int, Any] | None = None,
           canon: Callable[[tuple], int] | None = None,
           memos: Memos | None = None) -> list[Successor]:
    """Every successor of one state, in ``enabled_actions()`` order, edge-checked. A pure
    function of its inputs (``known``: views already built, by the world's own fingerprint
    -- a view is a function of the state, so this only saves time; ``canon``: the class
    key of a snapshot, for symmetry reduction): the unit of work a Spark executor runs per
    state. With ``canon`` a successor's ``fp`` is its class key and ``real_fp`` its own
    fingerprint -- views must be cached by ``real_fp``: two worlds of one class are renamings
    of each other, not the same world. ``memos``: the search's (``model_check.memo``), for
    the worlds it restores, and the coverage it counts into."""
    listed = World.restore(snap, config, memos)
    cov = None if memos is None else memos.coverage
    actions = listed.enabled_actions()  # reads the world, changes nothing in it
    last = len(actions) - 1
    out = []
    near = Near(snap, None if memos is None else memos.digests)
    before_id = checks.edge_id(view)
    for i, action in enumerate(actions):
        # each action on its own copy of the parent; the last one on the copy that listed
        child = listed if i == last else World.restore(snap, config, memos)
        try:
            child.apply(action, describe=False)
        except Exception as e:  # noqa: BLE001 -- a raising step is a finding
            found = Found(STEP_RAISED, f"{action.describe()}: {type(e).__name__}: {e}")
            out.append(Successor(i, action, None, 0, None, found))
            continue
        csnap = child.snapshot()
        fp = fingerprint_near(csnap, near)
        cview = known.get(fp) if known is not None else None
        if cview is None:
            cview = checks.view(child)
        found = checks.on_edge(view, cview, before_id, cov)
        if canon is None:
            out.append(_new(Successor, (i, action, csnap, fp, cview, found, None)))
        else:
            out.append(Successor(i, action, csnap, canon(csnap), cview, found, fp))
    return out


def path_to(parents: dict[int, tuple[int, int]], fp: int) -> tuple[int, ...]:
    """Action indices from the start to ``fp``, following the parent pointers."""
    out: list[int] = []
    while True:
        parent, index = parents[fp]
        if index == ROOT:
            return tuple(reversed(out))
        out.append(index)
        fp = parent


def bfs(scenario: Scenario, checks: Checks, options: Options = Options(),
        on_level: Callable[[Level], None] | None = None,
        graph: StateGraph | None = None, coverage: Coverage | None = None) -> Result:
    """The search. ``graph``: keep the explored graph there and, when no invariant is
    violated, check recoverability on it (``graph.py``; ``GraphTooLarge`` past its bound).
    ``coverage``: count there what the setup and the search reached (``coverage.py``)."""
    t0 = time.perf_counter()
    depth_bound = scenario.depth if options.depth is None else options.depth
    max_states = scenario.max_states if options.max_states is None else options.max_states
    symmetric = scenario.symmetry if options.symmetry is None else options.symmetry
    memos = Memos(scenario.world_config(), coverage)
    st = start(scenario, checks, memos)
    result = Result(scenario.name, "local", "pass", 0, 1, 0, 0.0, setup_steps=len(st.setup),
                    symmetry="on" if symmetric else "off", checks=checks.name,
                    coverage=coverage)
    if st.found is not None:
        result.violation = Violation(st.found.invariant, st.found.detail, (), st.setup)
        return _finish(result, t0)
    canon = None
    if symmetric:
        from model_check.symmetry import canonicalizer

        canon = canonicalizer(st.config, memo=memos.renames)
    with _no_cyclic_gc():
        parents = _search(st, checks, depth_bound, max_states, result, on_level, memos,
                          canon, graph)
        if graph is not None and result.violation is None:
            _recoverability(graph, parents, st, result)
    return _finish(result, t0)


def _recoverability(graph: StateGraph, parents: dict[int, tuple[int, int]], st: Start,
                    result: Result) -> None:
    stuck = graph.first_unrecoverable()
    if stuck is not None:
        detail = (f"no quiescent, healthy state is reachable from this state (it reaches "
                  f"{stuck.reachable} others, none healthy): {stuck.reason}")
        result.violation = Violation(CANNOT_RECOVER, detail, path_to(parents, stuck.fp),
                                     st.setup)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the search. What the search keeps -- states
    seen, the frontier -- only grows, and every collection would traverse all of it again
    (a third of the run time with the collector on; sweeping the young generations once a
    level still cost 2.7% on ``standard`` and never found anything). The world and the
    cores make no reference cycles (a test holds the search to it), so the memory freed
    by reference counting is all there is to free."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # what the search allocated is still in the youngest generation: the first
            # collection after ``enable`` would traverse all of it (a tenth of a short
            # run). Freezing and unfreezing moves it to the oldest generation in O(1).
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _finish(result: Result, t0: float) -> Result:
    result.seconds = time.perf_counter() - t0
    if result.violation is not None:
        result.verdict = "violation"
    return result


def _search(st: Start, checks: Checks, depth_bound: int, max_states: int, result: Result,
            on_level: Callable[[Level], None] | None, memos: Memos,
            canon: Callable[[tuple], int] | None = None,
            graph: StateGraph | None = None) -> dict[int, tuple[int, int]]:
    """The levels; returns the parent pointers (keys: fingerprints, or class keys)."""
    config = st.config
    cov = memos.coverage
    root_real = fingerprint(st.snapshot, memos.digests)
    root = root_real if canon is None else canon(st.snapshot)
    parents: dict[int, tuple[int, int]] = {root: (0, ROOT)}
    root_view = checks.view(World.restore(st.snapshot, config, memos))
    if graph is not None:
        graph.add_state(root, 0, root_view)
    # (key, snapshot, view, the world's own fingerprint)
    frontier: list[tuple[int, tuple, Any, int]] = [(root, st.snapshot, root_view, root_real)]
    for depth in range(1, depth_bound + 1):
        if not frontier:
            return parents
        t = time.perf_counter()
        generated = 0
        nxt: list[tuple[int, tuple, Any, int]] = []
        # views of this level and the next, by the worlds' own fingerprints: most
        # duplicates are found here
        known: dict[int, Any] = {real: view for _, _, view, real in frontier}
        for pfp, snap, view, _ in frontier:
            if graph is not None:
                graph.mark_expanded(pfp)
            for s in expand(snap, config, checks, view, known, canon, memos):
                generated += 1
                found = s.found
                real = s.fp if s.real_fp is None else s.real_fp
                if found is None and s.fp not in parents:
                    parents[s.fp] = (pfp, s.index)
                    nxt.append((s.fp, s.snapshot, s.view, real))
                    known[real] = s.view
                    found = checks.on_state(s.view)
                    if cov is not None:
                        cov.state(checks.state_mask(s.view))
                    if graph is not None:
                        graph.add_state(s.fp, depth, s.view)
                    if found is None and len(parents) >= max_states:
                        result.bounded_by = "max-states"
                elif found is None:
                    known.setdefault(real, s.view)
                if graph is not None and found is None:
                    graph.add_step(pfp, s.fp, s.action.describe())
                if found is not None:
                    path = path_to(parents, pfp) + (s.index,)
                    result.violation = Violation(found.invariant, found.detail, path, st.setup)
                if found is not None or result.bounded_by == "max-states":
                    _level(result, depth, len(frontier), generated, len(nxt), t, on_level)
                    return parents
        _level(result, depth, len(frontier), generated, len(nxt), t, on_level)
        frontier = nxt
    if frontier:
        result.bounded_by = "depth"
    return parents


def _level(result: Result, depth: int, frontier: int, generated: int, new: int, t: float,
           on_level: Callable[[Level], None] | None) -> None:
    level = Level(depth, frontier, generated, new, generated - new, time.perf_counter() - t)
    result.levels.append(level)
    result.states_generated += generated
    result.distinct_states += new
    if new:
        result.depth = depth
    if on_level is not None:
        on_level(level)
