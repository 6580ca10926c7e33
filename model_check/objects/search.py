"""Breadth-first search over every interleaving of an object world, up to the scenario's
depth: the shape of the ZooKeeper-mode search (``model_check.search``: level-synchronous,
parent pointers for a shortest counterexample, ``Result`` and ``Level`` the same records, so
``kcontrol check`` prints both alike), over any world kind (``kind.WorldKind``).

A state is a world object (the frontier keeps them; each action is applied to a copy of its
own, the last to the world itself); its key the world's ``key()``. Checked: every step must
not raise; every edge the kind's transition invariants (duplicates included: an edge into a
known state is still a step); every new state the kind's state invariants. The first
violation met in this order -- levels in turn, a level's parents in discovery order, each
parent's actions in ``enabled_actions()`` order -- is the one with the smallest action-index
path; the Spark engine (``objects.spark``) finds the same one."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from model_check.objects.kind import Found, Reached, Start, WorldKind
from model_check.search import Level, Result, Violation

STEP_RAISED = "step-raised"
ROOT = -1
"""The action index of the start state (it has no parent)."""


def bfs(kind: WorldKind, scenario: Any, depth: int | None = None,
        max_states: int | None = None, on_level: Callable[[Level], None] | None = None,
        reached: Reached | None = None) -> Result:
    """The search; ``depth`` and ``max_states`` default to the scenario's. ``reached``: fill
    it with what the run reached (the kind's coverage items)."""
    t0 = time.perf_counter()
    bound = scenario.depth if depth is None else depth
    limit = scenario.max_states if max_states is None else max_states
    st = kind.start(scenario, reached)
    result = new_result(kind, scenario, "local", st)
    if st.found is not None:
        result.violation = Violation(*st.found, (), st.setup)
        return finish(result, t0)
    root_world = kind.restore(st.snapshot)
    kind.watch(root_world, reached)
    root = root_world.key()
    parents: dict[int, tuple[int, int]] = {root: (0, ROOT)}
    frontier = [(root, root_world, kind.view_of(root_world))]
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
                    found = raised(kind, scenario, action, e)
                    return _violation(result, found, parents, pkey, i, st, d, len(frontier),
                                      generated, len(nxt), t, on_level, t0)
                cview = kind.view_of(child)
                found = kind.check_edge(view, cview)
                key = child.key()
                if found is None and key not in parents:
                    parents[key] = (pkey, i)
                    nxt.append((key, child, cview))
                    found = kind.check_state(cview)
                if found is not None:
                    return _violation(result, found, parents, pkey, i, st, d, len(frontier),
                                      generated, len(nxt), t, on_level, t0)
                if len(parents) >= limit:
                    result.bounded_by = "max-states"
                    record_level(result, Level(d, len(frontier), generated, len(nxt),
                                               generated - len(nxt),
                                               time.perf_counter() - t), on_level)
                    return finish(result, t0)
        record_level(result, Level(d, len(frontier), generated, len(nxt), generated - len(nxt),
                                   time.perf_counter() - t), on_level)
        frontier = nxt
    else:
        if frontier:
            result.bounded_by = "depth"
    return finish(result, t0)


def raised(kind: WorldKind, scenario: Any, action: Any, e: Exception) -> Found:
    """The finding of a step that raised."""
    return STEP_RAISED, f"{kind.describe(action, scenario)}: {type(e).__name__}: {e}"


def new_result(kind: WorldKind, scenario: Any, engine: str, st: Start) -> Result:
    """A run's result before its first level: the start state counted."""
    return Result(scenario.name, engine, "pass", 0, 1, 0, 0.0, setup_steps=len(st.setup),
                  checks=kind.name)


def path_to(parents: dict[int, tuple[int, int]], key: int) -> tuple[int, ...]:
    out: list[int] = []
    while True:
        parent, index = parents[key]
        if index == ROOT:
            return tuple(reversed(out))
        out.append(index)
        key = parent


def replay(kind: WorldKind, scenario: Any, path: tuple[int, ...]) -> list[tuple[Any, Any]]:
    """``(action, world after it)`` along ``path`` (action indices after the setup), for a
    trace."""
    w = kind.restore(kind.start(scenario, None).snapshot)
    out = []
    for i in path:
        action = w.enabled_actions()[i]
        w.apply(action)
        out.append((action, kind.restore(w.snapshot())))
    return out


def trace_lines(kind: WorldKind, scenario: Any, path: tuple[int, ...]) -> list[str]:
    """The steps of a counterexample, one line each."""
    return [kind.describe(a, scenario) for a, _ in replay(kind, scenario, path)]


def _violation(result: Result, found: Found, parents: dict[int, tuple[int, int]],
               pkey: int, index: int, st: Start, depth: int, frontier: int, generated: int,
               new: int, t: float, on_level: Callable[[Level], None] | None,
               t0: float) -> Result:
    result.violation = Violation(found[0], found[1], path_to(parents, pkey) + (index,),
                                 st.setup)
    record_level(result, Level(depth, frontier, generated, new, generated - new,
                               time.perf_counter() - t), on_level)
    return finish(result, t0)


def record_level(result: Result, level: Level,
                 on_level: Callable[[Level], None] | None) -> None:
    result.levels.append(level)
    result.states_generated += level.generated
    result.distinct_states += level.new
    if level.new:
        result.depth = level.depth
    if on_level is not None:
        on_level(level)


def finish(result: Result, t0: float) -> Result:
    result.seconds = time.perf_counter() - t0
    if result.violation is not None:
        result.verdict = "violation"
    return result
