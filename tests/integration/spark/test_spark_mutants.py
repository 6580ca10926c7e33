"""Every historic-bug mutant, on its scenario up to its expected counterexample depth: the
Spark engine, with the mutant applied on its executors, agrees with the local engine."""

from __future__ import annotations

import pytest
from spark_parity import PARTITIONS, assert_same

from model_check import counterexample as cx
from model_check import mutants
from model_check.checks import default_checks
from model_check.scenario import load
from model_check.search import Options, bfs
from model_check.spark.engine import SparkOptions, spark_bfs
from model_check.spark.patches import MutantPatch

pytestmark = [pytest.mark.spark, pytest.mark.integration]


SLOW_DEPTH = 10
"""Mutants whose counterexample is this deep take 10-20 s on Spark here (a level costs
~0.3-1 s of scheduling): marked ``slow``."""


@pytest.mark.parametrize("name", [
    pytest.param(m.name, marks=[pytest.mark.slow] if m.depth >= SLOW_DEPTH else [])
    for m in mutants.MUTANTS])
def test_mutant_found_alike(sc, name: str) -> None:  # noqa: ANN001
    m = mutants.get(name)
    scenario, checks, options = load(m.scenario), default_checks(), Options(depth=m.depth)
    with mutants.patched(name):
        local = bfs(scenario, checks, options)
        run = spark_bfs(scenario, checks, options,
                        SparkOptions(partitions=PARTITIONS, patch=MutantPatch(name),
                                     driver_level_limit=0), sc=sc)
    assert_same(local, run.result)
    v = run.result.violation
    assert v is not None and v.depth == m.depth
    with mutants.patched(name):
        trace = cx.rebuild(scenario, v.setup, v.path, v.invariant, v.detail)
        again = cx.replay(cx.replay_doc(trace, "spark"), checks, out=lambda _line: None)
    assert again.reproduced and again.steps == len(trace.steps)


def test_the_mutant_does_not_outlive_its_run(sc) -> None:  # noqa: ANN001
    """Python workers are reused: a clean run after a mutant's must see the clean core."""
    m = mutants.get("broker-ignores-broker-epoch")
    scenario, checks, options = load(m.scenario), default_checks(), Options(depth=m.depth)
    clean = spark_bfs(scenario, checks, options,
                      SparkOptions(partitions=PARTITIONS, driver_level_limit=0), sc=sc)
    assert clean.result.verdict == "pass"
    assert_same(bfs(scenario, checks, options), clean.result)
