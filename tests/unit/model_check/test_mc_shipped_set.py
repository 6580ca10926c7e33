"""The shipped scenarios as a set (issue 20): each passes -- exhaustively where it is small,
by seeded random walks where it is not -- and together they reach every transition of every
table, every handler of both cores, every decision kind, leader selector and protocol path,
and the premise of every invariant. A change that makes any of them unreachable fails here:
a green checker must mean something.

``scripts/walk_all.py`` runs the walks of every scenario with seeds 1-20 (minutes); this
test runs a few seeds of each, in about a minute.
"""

from __future__ import annotations

import pytest

from model_check.checks import default_checks
from model_check.coverage import Coverage, never
from model_check.scenario import load, shipped_names
from model_check.search import Options, bfs
from model_check.walk import walks

WALK_SEEDS = (1, 2, 3)

PLAN: dict[str, tuple] = {
    # name: ("bfs", depth or None for the scenario's) | ("walk", steps per seed)
    "smoke": ("bfs", None),
    "mutants-deletion": ("bfs", None),
    "mutants-failover": ("bfs", None),
    "mutants-isr": ("bfs", None),
    "mutants-restart": ("bfs", None),
    "mutants-shutdown": ("bfs", None),
    "standard": ("walk", 20_000),
    "symmetric": ("walk", 20_000),
    "deep": ("walk", 40_000),
    "deletion": ("walk", 20_000),
    "preferred": ("walk", 20_000),
    "reassign-expand": ("walk", 20_000),
    "unclean": ("bfs", None),
    "unclean-paused": ("walk", 20_000),
    "bad-version-twice": ("bfs", 11),  # its walks seldom meet the two failed writes
    "broker-lifecycle": ("bfs", 7),
    "unclean-offline": ("walk", 20_000),
    # depth 9 takes every move of the zookeeper-session table (0.3 s); the scenario's own
    # depth 15 takes ~15 s (`kcontrol check zookeeper-disconnect`)
    "zookeeper-disconnect": ("bfs", 9),
}


class Run:
    def __init__(self) -> None:
        self.verdicts: dict[str, list[str]] = {}
        self.coverage: dict[str, Coverage] = {}


@pytest.fixture(scope="module")
def shipped() -> Run:
    run = Run()
    for name in shipped_names():
        kind, arg = PLAN.get(name, ("bfs", None))
        sc = load(name)
        cov = Coverage()
        if kind == "bfs":
            r = bfs(sc, default_checks(), Options(depth=arg), coverage=cov)
            run.verdicts[name] = [f"bfs: {r.verdict} {r.violation or ''}"]
        else:
            run.verdicts[name] = []
            for seed in WALK_SEEDS:
                r = walks(sc, default_checks(), arg, seed, coverage=cov)
                run.verdicts[name].append(f"seed {seed}: {r.verdict} {r.violation or ''}")
        run.coverage[name] = cov
    return run


def test_every_shipped_scenario_has_a_plan() -> None:
    assert set(PLAN) == set(shipped_names()), "add the new scenario to PLAN"


def test_every_shipped_scenario_passes(shipped: Run) -> None:
    bad = {n: v for n, vs in shipped.verdicts.items() for v in vs if "pass" not in v}
    assert not bad, bad


def test_the_shipped_set_leaves_nothing_unreached(shipped: Run) -> None:
    total = Coverage()
    for cov in shipped.coverage.values():
        total.merge(cov)
    gaps = never(total.report())
    assert not gaps, "unreached by every shipped scenario:\n  " + "\n  ".join(gaps)
