"""The Raft world on the Spark engine (local[2], three partitions) agrees with the local
engine state for state: raft-smoke's counts per level, and a mutant's shortest
counterexample (the mutant applied on the executors too)."""

from __future__ import annotations

import pytest
from spark_parity import PARTITIONS, assert_same

from model_check.objects.search import bfs
from model_check.objects.spark.engine import KindPatch, ObjectSparkOptions, spark_bfs
from model_check.raft.kind import RAFT
from model_check.raft.mutants import patched
from model_check.raft.scenario import load_raft

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def test_raft_smoke_agrees(sc) -> None:  # noqa: ANN001
    scenario = load_raft("raft-smoke")
    local = bfs(RAFT, scenario, depth=9)
    run = spark_bfs(RAFT, scenario, depth=9, spark=ObjectSparkOptions(partitions=PARTITIONS),
                    sc=sc)
    assert_same(local, run.result)
    assert local.distinct_states > 1000 and local.violation is None


def test_a_raft_mutant_has_the_same_counterexample(sc) -> None:  # noqa: ANN001
    scenario = load_raft("raft-smoke")
    name = "raft-ack-before-fsync"
    with patched(name):
        local = bfs(RAFT, scenario)
        run = spark_bfs(RAFT, scenario, spark=ObjectSparkOptions(
            partitions=PARTITIONS, patch=KindPatch("raft", name)), sc=sc)
    assert local.violation is not None
    assert_same(local, run.result)
