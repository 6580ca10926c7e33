"""The BFS: the clean core passes smoke, results are deterministic, traces are shortest."""

from __future__ import annotations

import time

from mc_support import MUTANT_DEPTH, MUTANT_TOML, epoch_below

from model_check.checks import Checks, default_checks
from model_check.counterexample import rebuild, replay, replay_doc
from model_check.scenario import load, loads
from model_check.search import Options, bfs
from model_check.start import start
from model_check.walk import walks
from model_check.world import World


def test_smoke_passes_on_the_clean_core_in_under_a_minute() -> None:
    t = time.perf_counter()
    r = bfs(load("smoke"), default_checks())
    assert r.verdict == "pass", r.violation
    assert r.distinct_states > 50 and r.depth > 5
    assert time.perf_counter() - t < 60


def test_two_runs_give_identical_stats() -> None:
    a = bfs(load("smoke"), default_checks())
    b = bfs(load("smoke"), default_checks())
    strip = [(lv.depth, lv.frontier, lv.generated, lv.new, lv.duplicates) for lv in a.levels]
    assert strip == [(lv.depth, lv.frontier, lv.generated, lv.new, lv.duplicates)
                     for lv in b.levels]
    assert (a.states_generated, a.distinct_states, a.depth) == \
        (b.states_generated, b.distinct_states, b.depth)


def test_bounds_are_reported() -> None:
    sc = load("smoke")
    r = bfs(sc, default_checks(), Options(depth=3))
    assert r.bounded_by == "depth" and r.depth == 3 and len(r.levels) == 3
    r = bfs(sc, default_checks(), Options(max_states=20))
    assert r.bounded_by == "max-states" and r.distinct_states <= 20


def _min_depth(checks: Checks, sc, limit: int) -> int | None:  # noqa: ANN001
    """Iterative-deepening DFS, independent of the BFS: the true minimal violation depth."""
    st = start(sc)

    def dfs(snap: tuple, d: int) -> bool:
        w = World.restore(snap, st.config)
        if checks.on_state(checks.view(w)) is not None:
            return True
        if d == 0:
            return False
        for a in w.enabled_actions():
            c = World.restore(snap, st.config)
            c.apply(a)
            if dfs(c.snapshot(), d - 1):
                return True
        return False

    for d in range(limit + 1):
        if dfs(st.snapshot, d):
            return d
    return None


def test_bfs_finds_a_shortest_trace() -> None:
    sc = load("smoke")
    checks = epoch_below(2)  # a second controller epoch needs the controller to fail over
    r = bfs(sc, checks)
    assert r.verdict == "violation" and r.violation.invariant == "epoch-below"
    assert r.violation.depth == _min_depth(checks, sc, 8)
    assert r.violation.depth >= 2
    trace = rebuild(sc, r.violation.setup, r.violation.path, "epoch-below", "")
    assert len(trace.explored()) == r.violation.depth


def test_broker_epoch_bug_is_found_with_a_shortest_trace_that_replays(broker_epoch_bug) -> None:
    sc = loads(MUTANT_TOML, name="mutant")
    checks = default_checks()
    r = bfs(sc, checks)
    v = r.violation
    assert r.verdict == "violation" and v is not None
    assert v.invariant in ("newly_applied_request_is_current", "no_request_applied_across_epochs")
    assert v.depth == MUTANT_DEPTH
    trace = rebuild(sc, v.setup, v.path, v.invariant, v.detail)
    assert any(s.describe() == "crash 2" for s in trace.explored())
    again = replay(replay_doc(trace), checks, out=lambda _line: None)
    assert again.reproduced and again.steps == len(trace.steps)


def test_clean_core_passes_the_mutant_scenario() -> None:
    r = bfs(loads(MUTANT_TOML, name="mutant"), default_checks())
    assert r.verdict == "pass"


def test_random_walks_are_seeded(broker_epoch_bug) -> None:
    sc = loads(MUTANT_TOML, name="mutant")
    a = walks(sc, default_checks(), steps=3000, seed=7, walk_depth=30)
    b = walks(sc, default_checks(), steps=3000, seed=7, walk_depth=30)
    assert (a.verdict, a.states_generated, a.distinct_states) == \
        (b.verdict, b.states_generated, b.distinct_states)
    assert a.verdict == "violation"
    trace = rebuild(sc, a.violation.setup, a.violation.path, a.violation.invariant, "")
    assert replay(replay_doc(trace), default_checks(), out=lambda _line: None).reproduced


def test_the_search_makes_no_reference_cycles() -> None:
    """The search runs with the cyclic collector off and never sweeps (``_no_cyclic_gc``):
    that is only safe while the world, the cores and the checks free everything by
    reference counting. A full collection after searches of a clean and of a violating
    scenario (a counterexample, a raising step's exception) finds nothing to free."""
    import gc

    scenarios = [load("smoke"), load("mutants-restart")]
    checks = default_checks()
    gc.collect()
    for sc in scenarios:
        bfs(sc, checks, Options(depth=6))
    assert gc.collect() == 0
