"""The KRaft checker's search: breadth-first over every interleaving of a ``KRaftWorld`` up to
the scenario's depth, the same shape as the ZooKeeper-mode search (``model_check.search``:
level-synchronous, parent pointers for a shortest counterexample, ``Result`` and ``Level``
the same records, so ``kcontrol check`` prints both alike).

A state is a world object (the frontier keeps them; each action is applied to a copy of its
own, the last to the world itself); its key the world's canonical 64-bit ``key()``. Checked: every
step must not raise; every edge the transition invariants; every new state the state
invariants, and the quiescent ones when nothing is pending. Not (yet) here: symmetry
reduction, the memo room, Spark, coverage -- the KRaft worlds of issue 23 are small; issue 24
brings the Raft world and the Spark engine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from invariants.kraft import CATALOGUE, KRaftView
from invariants.registry import QUIESCENT, STATE, TRANSITION
from model_check.kraft.scenario import KRaftScenario
from model_check.kraft.setup import setup
from model_check.kraft.view import view_of
from model_check.kraft.world import KAction, KRaftWorld
from model_check.search import Level, Result, Violation

STEP_RAISED = "step-raised"
ROOT = -1


@dataclass(frozen=True)
class KStart:
    snapshot: KRaftWorld
    setup: tuple[KAction, ...]
    found: tuple[str, str] | None


def check_state(view: KRaftView) -> tuple[str, str] | None:
    for inv in CATALOGUE:
        if inv.kind == STATE or (inv.kind == QUIESCENT and not view.pending):
            for v in inv.check(view):
                return v.invariant, v.detail
    return None


def check_edge(before: KRaftView, after: KRaftView) -> tuple[str, str] | None:
    for inv in CATALOGUE:
        if inv.kind == TRANSITION:
            for v in inv.check(before, after):
                return v.invariant, v.detail
    return None


def start(scenario: KRaftScenario, reached: set[tuple[str, ...]] | None = None) -> KStart:
    world, actions, found = setup(scenario, check_state, check_edge, view_of, reached)
    return KStart(world.snapshot(), actions, found)


def bfs(scenario: KRaftScenario, depth: int | None = None, max_states: int | None = None,
        on_level: Callable[[Level], None] | None = None,
        reached: set[tuple[str, ...]] | None = None) -> Result:
    """``reached``: fill it with what the run reached (``coverage.py``)."""
    t0 = time.perf_counter()
    bound = scenario.depth if depth is None else depth
    limit = scenario.max_states if max_states is None else max_states
    st = start(scenario, reached)
    result = Result(scenario.name, "local", "pass", 0, 1, 0, 0.0, setup_steps=len(st.setup),
                    checks="kraft")
    if st.found is not None:
        result.violation = Violation(*st.found, (), st.setup)
        return _finish(result, t0)
    root_world = KRaftWorld.restore(st.snapshot)
    root_world.reached = reached
    root = root_world.key()
    parents: dict[int, tuple[int, int]] = {root: (0, ROOT)}
    frontier = [(root, root_world, view_of(root_world))]
    for d in range(1, bound + 1):
        if not frontier:
            break
        t = time.perf_counter()
        generated, nxt = 0, []
        for pkey, world, view in frontier:
            actions = world.enabled_actions()  # reads the world, changes nothing
            last = len(actions) - 1
            for i, action in enumerate(actions):
                generated += 1
                # each action on its own copy; the last on the world itself (done with it)
                child = world if i == last else world.snapshot()
                try:
                    child.apply(action)
                except Exception as e:  # noqa: BLE001 -- a raising step is a finding
                    found = (STEP_RAISED, f"{action.describe(scenario)}: "
                                          f"{type(e).__name__}: {e}")
                    return _violation(result, found, parents, pkey, i, st, d, len(frontier),
                                      generated, len(nxt), t, on_level, t0)
                cview = view_of(child)
                found = check_edge(view, cview)
                key = child.key()
                if found is None and key not in parents:
                    parents[key] = (pkey, i)
                    nxt.append((key, child, cview))
                    found = check_state(cview)
                if found is not None:
                    return _violation(result, found, parents, pkey, i, st, d, len(frontier),
                                      generated, len(nxt), t, on_level, t0)
                if len(parents) >= limit:
                    result.bounded_by = "max-states"
                    _level(result, d, len(frontier), generated, len(nxt), t, on_level)
                    return _finish(result, t0)
        _level(result, d, len(frontier), generated, len(nxt), t, on_level)
        frontier = nxt
    else:
        if frontier:
            result.bounded_by = "depth"
    return _finish(result, t0)


def path_to(parents: dict[int, tuple[int, int]], key: int) -> tuple[int, ...]:
    out: list[int] = []
    while True:
        parent, index = parents[key]
        if index == ROOT:
            return tuple(reversed(out))
        out.append(index)
        key = parent


def replay(scenario: KRaftScenario, path: tuple[int, ...]) -> list[tuple[KAction, KRaftWorld]]:
    """The worlds along ``path`` (action indices after the setup), for a trace."""
    w = KRaftWorld.restore(start(scenario).snapshot)
    out = []
    for i in path:
        action = w.enabled_actions()[i]
        w.apply(action)
        out.append((action, KRaftWorld.restore(w.snapshot())))
    return out


def _violation(result: Result, found: tuple[str, str], parents: dict[int, tuple[int, int]],
               pkey: int, index: int, st: KStart, depth: int, frontier: int, generated: int,
               new: int, t: float, on_level: Callable[[Level], None] | None,
               t0: float) -> Result:
    result.violation = Violation(found[0], found[1], path_to(parents, pkey) + (index,),
                                 st.setup)  # type: ignore[arg-type]
    _level(result, depth, frontier, generated, new, t, on_level)
    return _finish(result, t0)


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


def _finish(result: Result, t0: float) -> Result:
    result.seconds = time.perf_counter() - t0
    if result.violation is not None:
        result.verdict = "violation"
    return result
