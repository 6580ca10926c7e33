"""The object-world Spark engine (local[2]) agrees with the local engine state for state:
counts per level, depth, bound, verdict, the very same first violation and its trace, and
what the run reached -- on KRaft, and on Raft once its kind is registered."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from invariants.kraft import CATALOGUE
from model_check.kraft.kind import KRAFT
from model_check.objects.kind import KINDS, WorldKind, kind_named
from model_check.objects.search import bfs, replay
from model_check.search import Result

pytestmark = [pytest.mark.spark, pytest.mark.integration]

PARTITIONS = 3
"""Three partitions on two cores: duplicates meet across tasks."""
SMOKE_DEPTH = 6
RAFT_SMOKE_DEPTH = 6


def levels(r: Result) -> list[tuple[int, int, int, int, int]]:
    return [(lv.depth, lv.frontier, lv.generated, lv.new, lv.duplicates) for lv in r.levels]


def assert_same(local: Result, spark: Result) -> None:
    """Everything but the engine name and the timings."""
    assert spark.engine == "spark" and local.engine == "local"
    assert levels(spark) == levels(local)
    assert (spark.verdict, spark.distinct_states, spark.states_generated, spark.depth,
            spark.bounded_by, spark.setup_steps, spark.checks) == \
        (local.verdict, local.distinct_states, local.states_generated, local.depth,
         local.bounded_by, local.setup_steps, local.checks)
    assert spark.violation == local.violation


def both(sc, kind: WorldKind, name: str, depth: int | None = None,  # noqa: ANN001
         max_states: int | None = None, mutant: str | None = None,
         coverage: bool = False) -> tuple[Result, Result, set, set]:
    from model_check.objects.spark.engine import KindPatch, ObjectSparkOptions, spark_bfs

    scenario = kind.load(name)
    local_reached: set = set()
    spark_reached: set = set()
    patch = KindPatch(kind.name, mutant) if mutant else None
    with kind.patched(mutant):
        local = bfs(kind, scenario, depth, max_states,
                    reached=local_reached if coverage else None)
        run = spark_bfs(kind, scenario, depth, max_states,
                        ObjectSparkOptions(partitions=PARTITIONS, patch=patch), sc=sc,
                        reached=spark_reached if coverage else None)
    assert run.settings.partitions == PARTITIONS
    return local, run.result, local_reached, spark_reached


def test_kraft_smoke_agrees_level_for_level_and_reaches_the_same(sc) -> None:  # noqa: ANN001
    local, spark, local_reached, spark_reached = both(sc, KRAFT, "kraft-smoke", SMOKE_DEPTH,
                                                      coverage=True)
    assert_same(local, spark)
    assert spark.bounded_by == "depth" and spark.distinct_states > 1000
    assert spark_reached == local_reached and len(local_reached) > 10


@pytest.mark.parametrize(("mutant", "depth", "where"), [
    ("kraft-uncommitted-visible", 6, "state"),  # a new state breaks a state invariant
    ("kraft-isr-change-bumps-leader-epoch", 5, "transition"),  # a step breaks one
])
def test_a_kraft_mutant_gives_the_same_violation_and_trace(sc, mutant: str, depth: int,  # noqa: ANN001
                                                           where: str) -> None:
    local, spark, _, _ = both(sc, KRAFT, "kraft-smoke", depth, mutant=mutant)
    assert spark.violation is not None
    assert_same(local, spark)  # the same path: the smallest, as the local engine meets it
    assert spark.violation.depth == depth and len(spark.levels) == depth
    scenario = KRAFT.load("kraft-smoke")
    with KRAFT.patched(mutant):
        assert len(replay(KRAFT, scenario, spark.violation.path)) == depth
    invariants = {i.name: i.kind for i in CATALOGUE}
    assert invariants[spark.violation.invariant] == where


def test_max_states_stops_where_the_local_engine_stops(sc) -> None:  # noqa: ANN001
    local, spark, _, _ = both(sc, KRAFT, "kraft-smoke", SMOKE_DEPTH, max_states=200)
    assert_same(local, spark)
    assert spark.bounded_by == "max-states" and spark.distinct_states == 200


def test_the_workers_hash_strings_alike_and_as_pythonhashseed_says(sc) -> None:  # noqa: ANN001
    """The premise of computing keys on the executors only: every Python worker hashes a
    string the same way, the way a process started with the context's PYTHONHASHSEED does."""
    from model_check.objects.spark.tasks import probe_hash

    hashes = sc.parallelize(range(4), 4).mapPartitionsWithIndex(probe_hash).collect()
    assert len(set(hashes)) == 1
    seed = sc.environment["PYTHONHASHSEED"]
    fresh = subprocess.run(
        [sys.executable, "-c", "print(hash('kcontrol-object-world-key'))"],
        env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True)
    assert int(fresh.stdout) == hashes[0]


@pytest.mark.skipif("raft" not in KINDS, reason="the Raft world kind is not registered yet")
def test_raft_smoke_agrees_level_for_level(sc) -> None:  # noqa: ANN001
    kind = kind_named("raft")
    local, spark, _, _ = both(sc, kind, "raft-smoke", RAFT_SMOKE_DEPTH)
    assert_same(local, spark)


def test_the_command_on_spark_reports_what_the_local_engine_reports(sc, tmp_path) -> None:  # noqa: ANN001
    """``kcontrol check kraft-smoke --engine spark``: the same JSON report but for the engine,
    the timings and Spark's settings, and the same trace file for a mutant."""
    import json

    from click.testing import CliRunner

    from adapters.cli import main

    def check(*args: str) -> tuple[int, dict, str]:
        out = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
        r = CliRunner().invoke(main, ["check", "kraft-smoke", "--depth", "5", "--json",
                                      str(out), "--trace-out", str(tmp_path / "traces"),
                                      *args])
        doc = json.loads(out.read_text())
        for lv in doc["levels"]:
            del lv["seconds"]
        return r.exit_code, doc, r.output

    spark_args = ("--engine", "spark", "--master", "local[2]", "--partitions", "3")
    for mutant in ((), ("--mutant", "kraft-isr-change-bumps-leader-epoch")):
        code, local, _ = check(*mutant)
        local_trace = {p.name: p.read_text() for p in (tmp_path / "traces").glob("*")} \
            if mutant else {}
        code_spark, spark, output = check(*spark_args, *mutant)
        assert (code_spark, code) == ((1, 1) if mutant else (0, 0)), output
        assert "master=local[2] partitions=3 by key" in output
        settings = spark.pop("spark")
        assert settings["partitions"] == 3 and settings["jobs"] >= 5
        assert spark.pop("engine") == "spark" and local.pop("engine") == "local"
        del spark["seconds"], local["seconds"]
        assert spark == local
        if mutant:
            assert {p.name: p.read_text() for p in (tmp_path / "traces").glob("*")} == \
                local_trace
    r = CliRunner().invoke(main, ["check", "kraft-smoke", *spark_args, "--driver-limit", "0"])
    assert r.exit_code == 2 and "--driver-limit" in r.output
