"""Level-synchronous breadth-first search of an object world on Spark, state for state the
local engine's (``objects.search``).

Level ``d``'s **input** is one dataset partitioned by state key (``tasks.Job.home``):
partition ``i`` holds its visited store and the candidates for level ``d`` that the tasks of
level ``d - 1`` sent it. Level ``d`` is one Spark job, one Python task per partition
(``tasks.level_partition``): the candidates the store has not seen (smallest path each) are
the level's new states and join the store; the level's sums and first violation go to the
driver through an accumulator; unless the level is the depth bound or holds a violation, the
new states are expanded at once (``tasks._expand``: the local engine's steps and checks) and
their successors, keyed by partition, and the store are shuffled into the next level's input
-- persisted, ``localCheckpoint``-ed and materialised by a count on the JVM side, as the
ZooKeeper-mode engine does (``model_check.spark.engine``). Level 0's input holds the start
world as a seed; the job that expands it counts to level 1.

Every key is computed on the executors (``tasks`` docstring: the driver's hash seed may
differ from the workers'), so every level, the first ones included, is a Spark job: unlike
the ZooKeeper-mode engine, no level runs in the driver.

**Order.** A candidate carries its path (``codec``): the smallest path that reaches a state
is the one the local engine records, so the first violation -- the smallest path among a
level's findings -- and its counterexample are the local engine's, whatever the
partitioning. At the first level that holds a violation, or whose new states fill
``max_states``, the run stops where the local engine stops: two small jobs over that level's
input (still persisted) find the new states ordered before the cut and the steps taken up
to it (``tasks.new_paths``, ``tasks.steps_through``), so the level's counts are the local
engine's too. The trace is replayed from the path in the driver (``objects.search.replay``).

**Coverage** (``reached``): each task counts what its steps reached and hands it to the
driver with its sums; the driver adds it to the setup's. The same states are expanded as
locally, so the sets are equal -- except at a cut level, whose tasks expanded every state the
local engine would have reached after the cut.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model_check.objects.kind import Reached, WorldKind
from model_check.objects.search import finish, new_result, record_level
from model_check.objects.spark import tasks as T
from model_check.objects.spark.codec import dumps, path_indices
from model_check.search import Level, Result, Violation
from model_check.spark.patches import ExecutorPatch
from model_check.spark.session import (
    SparkSettings,
    default_partitions,
    settings,
    spark_context,
)


@dataclass(frozen=True)
class ObjectSparkOptions:
    master: str | None = None  # None: the running context's, spark-submit's, or local[*]
    partitions: int | None = None  # None: session.default_partitions
    patch: ExecutorPatch | None = None  # applied around every executor task (mutants)


@dataclass
class ObjectSparkRun:
    """A Spark check: the engine-neutral ``Result`` and where it ran."""

    result: Result
    settings: SparkSettings
    jobs: int = 0  # level jobs (the cut's small jobs not counted)


@dataclass(frozen=True)
class KindPatch:
    """Mutant ``name`` of world kind ``kind``, applied on an executor (``ExecutorPatch``)."""

    kind: str
    name: str

    def apply(self) -> Callable[[], None]:
        from model_check.objects.kind import kind_named

        cm = kind_named(self.kind).patched(self.name)
        cm.__enter__()
        return lambda: cm.__exit__(None, None, None)


def spark_bfs(kind: WorldKind, scenario: Any, depth: int | None = None,
              max_states: int | None = None, spark: ObjectSparkOptions | None = None,
              on_level: Callable[[Level], None] | None = None, sc: Any = None,
              reached: Reached | None = None) -> ObjectSparkRun:
    """The Spark engine. ``sc``: a running ``SparkContext`` (else ``spark_context``). The
    driver runs the setup itself: a mutant must be applied by the caller in this process
    too; ``spark.patch`` carries it to the executors. ``reached``: fill it as the local
    engine does (module docstring)."""
    t0 = time.perf_counter()
    spark = spark or ObjectSparkOptions()
    sc = sc if sc is not None else spark_context(spark.master)
    partitions = spark.partitions or default_partitions(sc)
    bound = scenario.depth if depth is None else depth
    limit = scenario.max_states if max_states is None else max_states
    if limit < 2:
        raise ValueError(f"max_states must be at least 2 (the start state and one more), "
                         f"not {limit}")
    st = kind.start(scenario, reached)
    run = ObjectSparkRun(new_result(kind, scenario, "spark", st),
                         settings(sc, partitions, "local", "key"))
    if st.found is not None:
        run.result.violation = Violation(*st.found, (), st.setup)
    else:
        job = T.Job(kind.name, scenario, partitions, spark.patch, reached is not None)
        _Search(sc, job, run, on_level, reached, st.setup).run(
            dumps(st.snapshot, scenario), bound, limit)
    finish(run.result, t0)
    return run


class _Search:
    """The levels of one run, each a Spark job."""

    def __init__(self, sc: Any, job: T.Job, run: ObjectSparkRun,
                 on_level: Callable[[Level], None] | None, reached: Reached | None,
                 setup: tuple[Any, ...]) -> None:
        self.sc, self.job, self.run_, self.on_level = sc, job, run, on_level
        self.reached, self.setup, self.n = reached, setup, job.partitions

    def _level(self, inp: Any, expand_new: bool, send_snapshots: bool) -> tuple[Any, list]:
        """One level: its input -> (the next level's input, each partition's (generated,
        new, finding))."""
        metas = self.sc.accumulator({}, T.Metas())
        nxt = inp.mapPartitionsWithIndex(functools.partial(
            T.level_partition, self.job, metas, expand_new, send_snapshots)
        ).partitionBy(self.n, T.partition_key)
        nxt.persist()
        nxt.localCheckpoint()
        nxt._jrdd.count()  # materialise on the JVM side: no record read back through Python
        self.run_.jobs += 1
        got = metas.value
        sums = {k: v for k, v in got.items() if isinstance(k, int)}
        assert sorted(sums) == list(range(self.n)), f"level sums from {sorted(sums)}"
        if self.reached is not None:
            for k, v in got.items():
                if not isinstance(k, int):
                    self.reached.update(v)
        return nxt, [sums[i] for i in range(self.n)]

    def run(self, start_blob: bytes, bound: int, limit: int) -> None:
        result = self.run_.result
        if bound < 1:  # the start state alone, as the local engine: bounded by depth
            result.bounded_by = "depth"
            return
        t = time.perf_counter()
        records = [(i, (T.STORE, b"")) for i in range(self.n)] + [(0, (T.SEED, start_blob))]
        seed = self.sc.parallelize(records, self.n).partitionBy(self.n, T.partition_key)
        inp, _ = self._level(seed, True, bound > 1)  # level 1's input
        frontier = 1
        for d in range(1, bound + 1):
            nxt, sums = self._level(inp, d < bound, d + 1 < bound)
            generated = sum(s[0] for s in sums)
            new = sum(s[1] for s in sums)
            finding = None
            for s in sums:
                finding = T.first(finding, s[2])
            room = limit - result.distinct_states  # the start state counted in both
            if finding is not None or new >= room:
                self._cut(d, inp, frontier, finding, room if new >= room else None, t)
                return
            record_level(result, Level(d, frontier, generated, new, generated - new,
                                       time.perf_counter() - t), self.on_level)
            t = time.perf_counter()
            inp.unpersist()
            inp, frontier = nxt, new
            if not new:
                return
        result.bounded_by = "depth"

    def _cut(self, d: int, inp: Any, frontier: int, finding: T.Finding | None,
             room: int | None, t: float) -> None:
        """The level where the local engine stops: at the first violation in its order, or
        at the new state that fills ``max_states``, whichever comes first."""
        result = self.run_.result
        paths = inp.mapPartitionsWithIndex(T.new_paths).persist()
        cut_at_limit = paths.takeOrdered(room)[-1] if room is not None else None
        if finding is not None and (cut_at_limit is None or finding.path <= cut_at_limit):
            cut, cut_is_new = finding.path, finding.kind == "state"
        else:
            assert cut_at_limit is not None
            finding, cut, cut_is_new = None, cut_at_limit, True
            result.bounded_by = "max-states"
        new = paths.filter(functools.partial(_before, cut)).count() + int(cut_is_new)
        paths.unpersist()
        generated = inp.mapPartitionsWithIndex(functools.partial(T.steps_through, cut)).sum()
        record_level(result, Level(d, frontier, generated, new, generated - new,
                                   time.perf_counter() - t), self.on_level)
        if finding is not None:
            result.violation = Violation(finding.invariant, finding.detail,
                                         path_indices(finding.path), self.setup)


def _before(cut: bytes, path: bytes) -> bool:
    return path < cut
