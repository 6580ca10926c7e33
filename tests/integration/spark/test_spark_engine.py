"""The Spark engine (local[2]) agrees with the local engine state for state: counts per
level, depth, bound, verdict, and the very same shortest counterexample. (``smoke`` to
exhaustion is compared through the command line, in ``test_spark_cli``.)"""

from __future__ import annotations

import pytest
from spark_parity import PARTITIONS, assert_same, epoch_below, epoch_steady_after, levels

from model_check import counterexample as cx
from model_check.checks import Checks, default_checks
from model_check.scenario import Scenario, load
from model_check.search import Options, Result, bfs
from model_check.spark.engine import SparkOptions, SparkRun, spark_bfs
from model_check.spark.session import DRIVER_LEVEL_LIMIT

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def both(sc, scenario: Scenario, checks: Checks, options: Options = Options(),  # noqa: ANN001, B008
         partitions: int = PARTITIONS, driver_limit: int = 0) -> tuple[Result, SparkRun]:
    """Both engines; Spark with three partitions (one task each per level), so that
    duplicates meet across tasks (the command-line test runs the default), and every level
    a Spark job unless ``driver_limit`` says otherwise."""
    local = bfs(scenario, checks, options)
    run = spark_bfs(scenario, checks, options,
                    SparkOptions(partitions=partitions, driver_level_limit=driver_limit), sc=sc)
    if not driver_limit:
        assert run.driver_levels == 0
    assert run.settings.partitions == partitions and run.settings.master == "local[2]"
    return local, run


def test_standard_to_a_depth_bound_agrees(sc) -> None:  # noqa: ANN001
    local, run = both(sc, load("standard"), default_checks(), Options(depth=4))
    assert_same(local, run.result)
    assert run.result.bounded_by == "depth" and run.result.depth == 4
    assert run.settings.partition_by == "zookeeper"


def test_depth_zero_is_the_start_state_alone_bounded_by_depth(sc) -> None:  # noqa: ANN001
    local, run = both(sc, load("smoke"), default_checks(), Options(depth=0))
    assert_same(local, run.result)
    assert run.result.distinct_states == 1 and run.result.bounded_by == "depth"


def test_states_placed_by_key_agree_and_give_the_same_trace(sc) -> None:  # noqa: ANN001
    sc_ = load("standard")
    checks = epoch_below(2)
    local = bfs(sc_, checks)
    run = spark_bfs(sc_, checks, spark=SparkOptions(partitions=PARTITIONS, partition_by="key",
                                           driver_level_limit=0),
                    sc=sc)
    assert run.settings.partition_by == "key"
    assert_same(local, run.result)
    assert run.trace_lookups == local.violation.depth + 1
    with pytest.raises(ValueError, match="partition_by"):
        spark_bfs(sc_, checks, spark=SparkOptions(partition_by="bogus"), sc=sc)


def test_a_state_violation_gives_the_local_counterexample_whatever_the_partitions(sc) -> None:  # noqa: ANN001
    sc_ = load("standard")
    checks = epoch_below(2)
    local = bfs(sc_, checks)
    assert local.verdict == "violation"
    for partitions in (1, 4):
        run = spark_bfs(sc_, checks, spark=SparkOptions(partitions=partitions,
                                                         driver_level_limit=0), sc=sc)
        assert_same(local, run.result)
        # the trace came from walking parent pointers, one lookup per step
        assert run.trace_lookups == local.violation.depth + 1
    v = run.result.violation
    trace = cx.rebuild(sc_, v.setup, v.path, v.invariant, v.detail)
    lv = local.violation
    local_trace = cx.rebuild(sc_, lv.setup, lv.path, lv.invariant, lv.detail)
    assert cx.text(trace) == cx.text(local_trace)
    assert cx.mermaid(trace) == cx.mermaid(local_trace)
    doc = cx.replay_doc(trace, "spark")
    assert {k: w for k, w in doc.items() if k != "engine"} == \
        {k: w for k, w in cx.replay_doc(local_trace).items() if k != "engine"}
    again = cx.replay(doc, checks, out=lambda _line: None)
    assert again.reproduced and again.found.invariant == "epoch-below"


def test_a_step_violation_cuts_the_level_where_the_local_engine_stops(sc) -> None:  # noqa: ANN001
    sc_ = load("standard")
    local, run = both(sc, sc_, epoch_steady_after(1))
    assert local.verdict == "violation" and local.violation.invariant == "epoch-steady"
    assert_same(local, run.result)
    # the violating step's target is not a new state: the last level counts one fewer
    assert levels(run.result)[-1][3] < levels(run.result)[-1][2]


def test_max_states_cuts_at_the_same_state(sc) -> None:  # noqa: ANN001
    local, run = both(sc, load("smoke"), default_checks(), Options(max_states=50))
    assert_same(local, run.result)
    assert run.result.bounded_by == "max-states" and run.result.distinct_states == 50


def test_cuts_at_the_depth_bound_agree(sc) -> None:  # noqa: ANN001
    """The level at the depth bound gets its states without their snapshots (it only
    deduplicates): a violation or ``max_states`` met there still cuts it as the local engine
    does, and the trace is the same."""
    sc_ = load("standard")
    checks = epoch_below(2)
    found = bfs(sc_, checks)
    local, run = both(sc, sc_, checks, Options(depth=found.violation.depth))
    assert_same(local, run.result)
    assert run.result.violation.path == found.violation.path
    filled = bfs(load("smoke"), default_checks(), Options(max_states=50))
    local, run = both(sc, load("smoke"), default_checks(),
                      Options(max_states=50, depth=filled.depth))
    assert_same(local, run.result)
    assert run.result.bounded_by == "max-states" and run.result.depth == filled.depth


def test_small_levels_run_in_the_driver_then_on_spark_and_agree(sc) -> None:  # noqa: ANN001
    """With the default limit the first levels of ``standard`` run in the driver, by the same
    task code, and the rest as Spark jobs: every level agrees with the local engine, and
    with the run that made every level a Spark job."""
    sc_, options = load("standard"), Options(depth=7)
    local, run = both(sc, sc_, default_checks(), options, driver_limit=DRIVER_LEVEL_LIMIT)
    assert_same(local, run.result)
    inputs = [1] + [lv.generated for lv in local.levels]  # successors in each level's input
    in_driver = next(i for i, n in enumerate(inputs) if n >= DRIVER_LEVEL_LIMIT)
    assert 2 <= in_driver < len(local.levels)  # some levels of each kind
    assert run.driver_levels == in_driver - 1  # levels 1, 2, ...: level 0 is the seed's
    # every level in the driver: the whole run without a Spark job
    _, tiny = both(sc, sc_, default_checks(), Options(depth=3), driver_limit=10**9)
    assert tiny.driver_levels == 3 and tiny.result.bounded_by == "depth"


def test_a_violation_among_the_driver_levels_is_cut_and_traced_alike(sc) -> None:  # noqa: ANN001
    """A cut level in the driver: its inputs become datasets for the cut's small jobs and the
    walk back, and the counterexample is the local engine's."""
    sc_ = load("standard")
    for checks in (epoch_below(2), epoch_steady_after(1)):
        local, run = both(sc, sc_, checks, driver_limit=10**9)
        assert local.verdict == "violation"
        assert run.driver_levels == len(local.levels)  # the cut level too
        assert_same(local, run.result)
    filled = bfs(load("smoke"), default_checks(), Options(max_states=50))
    local, run = both(sc, load("smoke"), default_checks(), Options(max_states=50),
                      driver_limit=10**9)
    assert_same(local, run.result)
    assert filled.distinct_states == run.result.distinct_states == 50


def test_symmetry_reduction_agrees(sc) -> None:  # noqa: ANN001
    """With symmetry the key is a class key and the world kept for a class the first one
    found: the Spark engine keeps the same one (smallest path), so the trace is the same."""
    sc_ = load("symmetric")
    local, run = both(sc, sc_, epoch_below(2))
    assert local.symmetry == "on" and local.verdict == "violation"
    assert_same(local, run.result)
    assert run.settings.partition_by == "key"  # a class's worlds differ in their ZooKeeper


def test_coverage_is_the_local_engines_merged_across_partitions(sc) -> None:  # noqa: ANN001
    """``--coverage`` on Spark: every task counts what it reached and the driver merges it;
    the figures are the local engine's, item for item, with the first levels in the driver
    and the rest as Spark jobs over three partitions."""
    from model_check.coverage import Coverage

    scenario, checks = load("mutants-deletion"), default_checks()
    local_cov, spark_cov = Coverage(), Coverage()
    local = bfs(scenario, checks, coverage=local_cov)
    run = spark_bfs(scenario, checks, spark=SparkOptions(partitions=PARTITIONS,
                                                         driver_level_limit=DRIVER_LEVEL_LIMIT),
                    sc=sc, coverage=spark_cov)
    assert_same(local, run.result)
    assert 0 < run.driver_levels < len(local.levels)
    assert run.result.coverage is spark_cov
    assert spark_cov.report() == local_cov.report()
    assert local_cov.report()["core_steps"] > 0
