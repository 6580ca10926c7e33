"""Seeded random walks over an object world: deeper than the exhaustive bound, the same
checks. Like the ZooKeeper-mode walks (``model_check.walk``): one ``random.Random(seed)`` (the
engine's, never a core's), faults (``WorldKind.is_fault``) weighted a quarter of other
actions, a walk ends after ``walk_depth`` steps, when nothing is enabled, or on a state it
already visited; a violation ends the run with that walk's path. Same seed, same scenario:
same result."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from model_check.objects.kind import Reached, WorldKind
from model_check.objects.search import finish, new_result, raised
from model_check.search import Level, Result, Violation

FAULT_WEIGHT = 0.25
DEFAULT_WALK_DEPTH = 200


def walks(kind: WorldKind, scenario: Any, steps: int, seed: int,
          walk_depth: int | None = None, on_walk: Callable[[Level], None] | None = None,
          reached: Reached | None = None) -> Result:
    t0 = time.perf_counter()
    bound = walk_depth or DEFAULT_WALK_DEPTH
    rng = random.Random(seed)
    st = kind.start(scenario, reached)
    result = new_result(kind, scenario, "random", st)
    result.bounded_by = "steps"
    if st.found is not None:
        result.violation = Violation(*st.found, (), st.setup)
        return finish(result, t0)
    seen: set[int] = set()
    done = 0
    while done < steps:
        t = time.perf_counter()
        world = kind.restore(st.snapshot)
        kind.watch(world, reached)
        view = kind.view_of(world)
        visited = {world.key()}
        path: list[int] = []
        generated = new = 0
        while len(path) < bound and done < steps:
            actions = world.enabled_actions()
            if not actions:
                break
            weights = [FAULT_WEIGHT if kind.is_fault(a) else 1.0 for a in actions]
            i = rng.choices(range(len(actions)), weights)[0]
            path.append(i)
            done += 1
            generated += 1
            try:
                world.apply(actions[i])
            except Exception as e:  # noqa: BLE001 -- a raising step is a finding
                result.violation = Violation(*raised(kind, scenario, actions[i], e),
                                             tuple(path), st.setup)
                return finish(result, t0)
            after = kind.view_of(world)
            found = kind.check_edge(view, after) or kind.check_state(after)
            if found is not None:
                result.violation = Violation(*found, tuple(path), st.setup)
                return finish(result, t0)
            view = after
            key = world.key()
            if key in visited:
                break
            visited.add(key)
            if key not in seen:
                seen.add(key)
                new += 1
        result.states_generated += generated
        result.distinct_states += new
        result.depth = max(result.depth, len(path))
        if on_walk is not None:
            on_walk(Level(len(path), 1, generated, new, generated - new,
                          time.perf_counter() - t))
    return finish(result, t0)
