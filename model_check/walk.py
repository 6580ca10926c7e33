"""Seeded random walks: deeper than the exhaustive bound, with the same checks.

``walks(scenario, checks, steps, seed, walk_depth)`` spends ``steps`` steps on walks from
the start state; each walk picks among the enabled actions with one ``random.Random(seed)``
(the engine's, never the core's) and ends after ``walk_depth`` steps, when nothing is
enabled, or when it comes back to a state it already visited (a cycle -- a periodic timer
firing in a settled cluster -- has nothing new to show; the steps go to a new walk). A fault
(crash, restart, session expiry, disconnect, drop, ISR change) is picked with a quarter of
the weight of any other action (``FAULT_WEIGHT``): picked uniformly, a walk would nearly
always begin with a crash, and the protocol's longer paths -- a reassignment that runs to its
end -- would hardly ever be seen. Every path keeps a chance. A violation ends the run with
that walk's path (not a shortest one). Same seed, same scenario: same walks, same result.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from model_check.checks import STEP_RAISED, Checks, Found
from model_check.coverage import Coverage
from model_check.memo import Memos
from model_check.scenario import Scenario
from model_check.search import Level, Result, Violation
from model_check.start import Start, start
from model_check.world import World, fingerprint
from model_check.world.actions import FAULTS

FAULT_WEIGHT = 0.25
"""A fault's weight against 1 for every other action (module docstring)."""


def walks(scenario: Scenario, checks: Checks, steps: int, seed: int,
          walk_depth: int | None = None, on_walk: Callable[[Level], None] | None = None,
          coverage: Coverage | None = None) -> Result:
    """``coverage``: count there what the setup and the walks reached (every step's state
    is counted, not only the distinct ones)."""
    t0 = time.perf_counter()
    depth_bound = walk_depth or scenario.random_depth
    memos = Memos(scenario.world_config(), coverage)
    st = start(scenario, checks, memos)
    result = Result(scenario.name, "random", "pass", 0, 1, 0, 0.0, setup_steps=len(st.setup),
                    bounded_by="steps", checks=checks.name, coverage=coverage)
    rng = random.Random(seed)
    seen = {fingerprint(st.snapshot, memos.digests)}
    _walks(st, checks, steps, depth_bound, rng, seen, result, on_walk, memos)
    result.distinct_states = len(seen)
    result.seconds = time.perf_counter() - t0
    if result.violation is not None:
        result.verdict = "violation"
    return result


def _walks(st: Start, checks: Checks, steps: int, depth_bound: int, rng: random.Random,
           seen: set[int], result: Result, on_walk: Callable[[Level], None] | None,
           memos: Memos) -> None:
    walk = 0
    cov = memos.coverage
    while result.states_generated < steps and result.violation is None:
        walk += 1
        t = time.perf_counter()
        world = World.restore(st.snapshot, st.config, memos)
        view = checks.view(world)
        path: list[int] = []
        before = len(seen)
        visited = {fingerprint(st.snapshot, memos.digests)}
        while len(path) < depth_bound and result.states_generated < steps:
            actions = world.enabled_actions()
            if not actions:
                break
            i = _pick(rng, actions)
            path.append(i)
            result.states_generated += 1
            found: Found | None
            try:
                world.apply(actions[i], describe=False)
            except Exception as e:  # noqa: BLE001 -- a raising step is a finding
                found = Found(STEP_RAISED, f"{actions[i].describe()}: {type(e).__name__}: {e}")
            else:
                after = checks.view(world)
                found = checks.on_edge(view, after, cov=cov) or checks.on_state(after)
                if cov is not None:
                    cov.state(checks.state_mask(after))
                view = after
                fp = fingerprint(world.snapshot(), memos.digests)
                seen.add(fp)
            if found is not None:
                result.violation = Violation(found.invariant, found.detail, tuple(path),
                                             st.setup)
                break
            if fp in visited:
                break  # a cycle: nothing new down this walk
            visited.add(fp)
        result.depth = max(result.depth, len(path))
        level = Level(walk, 1, len(path), len(seen) - before, len(path) - (len(seen) - before),
                      time.perf_counter() - t)
        result.levels.append(level)
        if on_walk is not None:
            on_walk(level)


def _pick(rng: random.Random, actions: list) -> int:
    """An index into ``actions``: faults weigh ``FAULT_WEIGHT``, the rest 1."""
    weights = [FAULT_WEIGHT if a.kind in FAULTS else 1.0 for a in actions]
    x = rng.random() * sum(weights)
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    return len(actions) - 1
