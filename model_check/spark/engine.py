"""Level-synchronous breadth-first search on Spark, state for state the local engine's.

Level ``d``'s **input** is one dataset, partitioned by state (``tasks.Job.partition_of``: by
the state's ZooKeeper component, or by its key): partition ``i`` holds the visited store of
its states (each with its parent pointer) and the candidates for level ``d`` of that
partition, which the tasks of level ``d - 1`` sent it
(``tasks``). Level ``d`` is one Spark job, and one Python task per partition
(``tasks.level_partition``):

1. **dedupe**: the candidates the store has not seen (smallest path each) are the level's
   new states of the partition; they join the store; the level's sums and its first
   violation (a new state's state invariants, checked where it was generated, or a step's
   transition invariants) go to the driver through an accumulator;
2. **expand** (unless the level is the depth bound, or the partition holds a violation: the
   run stops there): the new states are expanded at once with ``search.expand`` -- the local
   engine's unit: the same world, controller and broker code, the same edge checks; each
   successor's state invariants are checked there too; duplicates inside a task are
   combined (smallest path kept); successors for the depth bound are sent without their
   snapshots (that level only deduplicates);
3. the successors, keyed by partition, and the store are **shuffled** into the next level's
   input, which is persisted, ``localCheckpoint``-ed (or ``checkpoint``-ed to
   ``spark.kcontrol.checkpointDir`` when the Spark conf names one, for clusters that may
   lose an executor) and materialised by a count on the JVM side.

**Small levels in the driver.** While a level's input holds fewer than
``SparkOptions.driver_level_limit`` successors (the first few levels), its input stays in the
driver, a list per partition, and the level is ``tasks.level_partition`` called there once per
partition -- the same code, records and sums as the Spark tasks -- routed as the shuffle
routes. A Spark job costs more than such a level's work. Meanwhile a trivial job
(``_Warmup``) starts the Python workers. The first larger input becomes a dataset, and every
later level is a Spark job.

A new state is unpacked once, in the task that expands it; no level's states are packed
again, cached or read back (an earlier version wrote each level's new states out as a
dataset of its own and read them back in a second stage). Level 0's input holds the start
state as a seed (expanded without dedupe) in a job of its own; its time counts to level 1.

Order and parents: a state's key is the smallest action-index path that reaches it
(``encoding``), the order in which the local engine meets it, so the recorded parent, the
first violation and the counterexample are the local engine's whatever the partitioning.
The first level holding a violation stops the run; that level's counts are cut where the
local engine stops (small jobs that deduplicate the level's input, and the input of the
level before, again: ``tasks.level_states``), and the trace is rebuilt by walking parent
pointers back through the visited store (one single-partition lookup per step) -- checked
against the path -- then replayed by ``counterexample.rebuild`` in the driver. The same cut
applies to ``max_states``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from model_check.checks import Checks
from model_check.coverage import Coverage
from model_check.memo import Memos
from model_check.scenario import Scenario
from model_check.search import ROOT, Level, Options, Result, Violation
from model_check.spark import tasks as T
from model_check.spark.encoding import (
    ROOT_PARTITION,
    VisitedStore,
    last_index,
    pack_bundle,
    path_indices,
)
from model_check.spark.patches import ExecutorPatch
from model_check.spark.session import (
    DRIVER_LEVEL_LIMIT,
    SparkSettings,
    default_partitions,
    settings,
    spark_context,
)
from model_check.start import Start, start
from model_check.symmetry import canonicalizer
from model_check.world import fingerprint

CHECKPOINT_DIR_CONF = "spark.kcontrol.checkpointDir"


@dataclass(frozen=True)
class SparkOptions:
    master: str | None = None  # None: the running context's, spark-submit's, or local[*]
    partitions: int | None = None  # None: session.default_partitions
    patch: ExecutorPatch | None = None  # applied around every executor task (mutants)
    partition_by: str = T.ROUTE_ZOOKEEPER  # which partition holds a state (tasks docstring)
    driver_level_limit: int = DRIVER_LEVEL_LIMIT  # 0: every level is a Spark job


@dataclass
class SparkRun:
    """A Spark check: the engine-neutral ``Result`` and where it ran."""

    result: Result
    settings: SparkSettings
    trace_lookups: int = 0  # single-partition jobs that walked the parent pointers
    driver_levels: int = 0  # levels 1, 2, ... run in the driver (small ones; ``_Search``)


def spark_bfs(scenario: Scenario, checks: Checks, options: Options | None = None,
              spark: SparkOptions | None = None,
              on_level: Callable[[Level], None] | None = None, sc=None,  # noqa: ANN001
              coverage: Coverage | None = None) -> SparkRun:
    """The Spark engine. ``sc``: a running ``SparkContext`` (else ``spark_context``). The
    driver runs the setup (``start``) itself: a patch that must hold there (a mutant) is the
    caller's to apply in this process; ``spark.patch`` carries it to the executors.
    ``coverage``: count there what the setup and every task reached (merged across the
    partitions and levels; ``tasks`` docstring)."""
    t0 = time.perf_counter()
    options = options or Options()
    spark = spark or SparkOptions()
    sc = sc if sc is not None else spark_context(spark.master)
    partitions = spark.partitions or default_partitions(sc)
    checkpoint_dir = sc.getConf().get(CHECKPOINT_DIR_CONF, None)
    if checkpoint_dir:
        sc.setCheckpointDir(checkpoint_dir)
    symmetric = scenario.symmetry if options.symmetry is None else options.symmetry
    if spark.partition_by not in T.ROUTES:
        raise ValueError(f"partition_by must be one of {', '.join(T.ROUTES)}, "
                         f"not {spark.partition_by!r}")
    route = T.ROUTE_KEY if symmetric else spark.partition_by
    run = SparkRun(_result(scenario, checks, symmetric),
                   settings(sc, partitions, checkpoint_dir or "local", route))
    run.result.coverage = coverage
    # the Python workers start (~1.3 s, and ~0.3 s for the first shuffle) while the driver
    # runs the setup and the first levels
    warm = _Warmup(sc, partitions) if spark.driver_level_limit > 0 else None
    try:
        st = start(scenario, checks, Memos(scenario.world_config(), coverage))
        run.result.setup_steps = len(st.setup)
        if st.found is not None:
            run.result.violation = Violation(st.found.invariant, st.found.detail, (), st.setup)
        else:
            job = T.Job(st.config, checks, partitions, symmetric, spark.patch,
                        run=uuid.uuid4().hex, route=route, coverage=coverage is not None)
            try:
                _Search(sc, checkpoint_dir, st, job, run, on_level, spark.driver_level_limit,
                        warm).run(
                    scenario.depth if options.depth is None else options.depth,
                    scenario.max_states if options.max_states is None else options.max_states)
            finally:
                T.forget_run(job.run)  # the memos of the levels the driver ran
    finally:
        if warm is not None:
            warm.join()
    run.result.seconds = time.perf_counter() - t0
    if run.result.violation is not None:
        run.result.verdict = "violation"
    return run


class _Warmup:
    """A trivial job with a shuffle, one task per partition, run in a thread of its own: it
    starts the Python workers (which import the task code) and warms the JVM's job and
    shuffle path while the driver runs the setup and the first levels. Joined before the
    first level's job; a failure here is left to that job to report."""

    def __init__(self, sc, partitions: int) -> None:  # noqa: ANN001
        self._thread = threading.Thread(target=self._run, args=(sc, partitions),
                                        name="kcontrol-spark-warmup", daemon=True)
        self._thread.start()

    @staticmethod
    def _run(sc, partitions: int) -> None:  # noqa: ANN001
        with contextlib.suppress(Exception):  # the first real job reports the cause
            sc.parallelize(range(partitions), partitions).mapPartitionsWithIndex(
                T.warm).partitionBy(partitions, T.partition_key).count()

    def join(self) -> None:
        self._thread.join()


def _result(scenario: Scenario, checks: Checks, symmetric: bool) -> Result:
    # the same fields the local engine fills (search.bfs), engine "spark"
    return Result(scenario.name, "spark", "pass", 0, 1, 0, 0.0,
                  symmetry="on" if symmetric else "off", checks=checks.name)


class _Search:
    """The levels of one run: as Spark jobs, or -- the small ones (module docstring) -- in
    the driver, where a level's input is a list of records per partition. A cut among the
    driver's levels turns their inputs into datasets for its small jobs."""

    def __init__(self, sc, checkpoint_dir: str | None, st: Start, job: T.Job,  # noqa: ANN001
                 run: SparkRun, on_level: Callable[[Level], None] | None,
                 driver_limit: int = DRIVER_LEVEL_LIMIT, warm: _Warmup | None = None
                 ) -> None:
        self.sc, self.n, self.checkpoint_dir = sc, job.partitions, checkpoint_dir
        self.st, self.job, self.spark_run, self.on_level = st, job, run, on_level
        self.driver_limit, self.warm = driver_limit, warm
        # in the driver the caller has applied the patch already (spark_bfs)
        self.driver_job = dataclasses.replace(job, patch=None)

    def _initial(self):  # noqa: ANN202
        """Level 0's input: every partition's visited store, the start state alone, and the
        start state as a seed."""
        snap = self.st.snapshot
        real = fingerprint(snap)
        key = canonicalizer(self.st.config)(snap) if self.job.symmetric else real
        home = self.job.partition_of(key, snap)
        records = []
        for i in range(self.n):
            store = VisitedStore()
            if i == home:
                store.add([key], [0], [ROOT], [ROOT_PARTITION])
            records.append((i, (T.VISITED, *store.to_bytes())))
        records.append((home, (T.SEED, pack_bundle([(key, b"", snap, real)]))))
        return self._in_driver(records)

    def _in_driver(self, records: list[tuple[int, tuple]]) -> list[list[tuple[int, tuple]]]:
        """A level's input kept in the driver: the records of each partition, routed as
        ``partitionBy`` routes them."""
        parts: list[list[tuple[int, tuple]]] = [[] for _ in range(self.n)]
        for record in records:
            parts[T.partition_key(record[0]) % self.n].append(record)
        return parts

    def _dataset(self, inp):  # noqa: ANN001, ANN202
        """A level's input as a dataset (it may be kept in the driver)."""
        if not isinstance(inp, list):
            return inp
        if self.warm is not None:
            self.warm.join()
        records = [r for part in inp for r in part]
        return self.sc.parallelize(records, self.n).partitionBy(self.n, T.partition_key)

    def _small(self, inp) -> bool:  # noqa: ANN001
        """Whether a level runs in the driver: its input is there, and the successors it
        holds (as the tasks that sent them counted them; the start state as one) are fewer
        than the limit."""
        if not isinstance(inp, list):
            return False
        size = sum(v[1] if v[0] == T.GENERATED else 1 if v[0] == T.SEED else 0
                   for part in inp for _, v in part)
        return size < self.driver_limit

    def _level_in_driver(self, inp: list, expand_new: bool, send_snapshots: bool
                         ) -> tuple[list, list[tuple]]:
        """``_level`` in this process: each partition's task, one after the other."""
        metas = T.LocalSums()
        out: list[tuple[int, tuple]] = []
        try:
            for i, records in enumerate(inp):
                out.extend(T.level_partition(self.driver_job, metas, expand_new,
                                             send_snapshots, i, records))
        finally:
            gc.unfreeze()  # the task froze the driver's heap, as it must a worker's
        return self._in_driver(out), self._sums(metas.value)

    def _level(self, inp, expand_new: bool, send_snapshots: bool):  # noqa: ANN001, ANN202
        """One level: its input -> (the next level's input, each partition's (generated,
        new, finding) at this level). ``send_snapshots``: whether the next level expands
        (``tasks.level_partition``)."""
        if self._small(inp):
            return self._level_in_driver(inp, expand_new, send_snapshots)
        inp = self._dataset(inp)
        metas = self.sc.accumulator({}, T.PartitionMetas())
        nxt = inp.mapPartitionsWithIndex(
            functools.partial(T.level_partition, self.job, metas, expand_new, send_snapshots)
        ).partitionBy(self.n, T.partition_key)
        nxt.persist()
        if self.checkpoint_dir:
            nxt.checkpoint()
        else:
            nxt.localCheckpoint()
        # materialise the level with a count on the JVM side: a Python action would read
        # every record of the next level through a Python worker for nothing
        nxt._jrdd.count()
        return nxt, self._sums(metas.value)

    def _sums(self, got: dict) -> list[tuple]:
        """Each partition's ``(generated, new, finding)`` at a level; the tasks' coverage is
        added to the run's."""
        sums = {k: v for k, v in got.items() if isinstance(k, int)}
        assert sorted(sums) == list(range(self.n)), f"level sums from partitions {sorted(sums)}"
        cov = self.spark_run.result.coverage
        if cov is not None:
            for k, v in sorted(got.items(), key=lambda kv: repr(kv[0])):
                if not isinstance(k, int):
                    cov.merge(v)
        return [sums[i] for i in range(self.n)]

    # ------------------------------------------------------------ the loop

    def run(self, depth_bound: int, max_states: int) -> None:
        result = self.spark_run.result
        if depth_bound < 1:  # the start state alone, as the local engine: bounded by depth
            result.bounded_by = "depth"
            return
        t = time.perf_counter()
        before = self._initial()  # level 0's input
        # the start state expanded: level 1's input
        inp, _ = self._level(before, True, depth_bound > 1)
        frontier_size = 1
        for depth in range(1, depth_bound + 1):
            if frontier_size == 0:
                return
            if self._small(inp):
                self.spark_run.driver_levels += 1
            nxt, metas = self._level(inp, depth < depth_bound, depth + 1 < depth_bound)
            generated = sum(m[0] for m in metas)
            new = sum(m[1] for m in metas)
            finding = None
            for m in metas:
                finding = T.first(finding, m[2])
            room = max(max_states - result.distinct_states, 1)
            if finding is not None or new >= room:
                self._cut(depth, before, inp, nxt, frontier_size, finding,
                          room if new >= room else None, t)
                return
            self._record(Level(depth, frontier_size, generated, new, generated - new,
                               time.perf_counter() - t))
            t = time.perf_counter()
            # kept: this level's input (its states, should the next level be cut) and the
            # next level's
            if not isinstance(before, list):
                before.unpersist()
            before, inp = inp, nxt
            frontier_size = new
        if frontier_size:
            result.bounded_by = "depth"

    def _record(self, level: Level) -> None:
        result = self.spark_run.result
        result.levels.append(level)
        result.states_generated += level.generated
        result.distinct_states += level.new
        if level.new:
            result.depth = level.depth
        if self.on_level is not None:
            self.on_level(level)

    def _cut(self, depth: int, before, inp, nxt, frontier_size: int,  # noqa: ANN001
             finding: T.Finding | None, room: int | None, t: float) -> None:
        """The level where the local engine stops early: at the first violation in its
        order, or at the state that fills ``max_states``, whichever comes first. ``before``
        and ``inp``: the inputs of the level before and of this one (their states are
        deduplicated again); ``nxt``: this level's output (the store with its states)."""
        result = self.spark_run.result
        before, inp, nxt = self._dataset(before), self._dataset(inp), self._dataset(nxt)
        paths = inp.mapPartitionsWithIndex(T.level_paths).persist()
        limit = None
        if room is not None:  # the path of the room-th new state, in the local order
            limit = paths.takeOrdered(room)[-1]
        if finding is not None and (limit is None or finding.path <= limit):
            cut, cut_is_new = finding.path, finding.kind == "state"
        else:
            finding, cut, cut_is_new = None, limit, True
            result.bounded_by = "max-states"
        new = paths.filter(functools.partial(_before, cut)).count() + (1 if cut_is_new else 0)
        paths.unpersist()
        generated = before.mapPartitionsWithIndex(functools.partial(
            T.count_edges_before, self.job, cut[:-2], last_index(cut))).sum()
        self._record(Level(depth, frontier_size, generated, new, generated - new,
                           time.perf_counter() - t))
        if finding is not None:
            path = self._walk_back(nxt, finding)
            assert path == path_indices(finding.path), \
                f"parent pointers give {path}, the discovery order {path_indices(finding.path)}"
            result.violation = Violation(finding.invariant, finding.detail, path, self.st.setup)

    def _walk_back(self, visited, finding: T.Finding) -> tuple[int, ...]:  # noqa: ANN001
        """Action indices from the start to the finding, following parent pointers: one
        lookup in one partition of the store per step (each pointer names the partition
        holding the parent)."""
        out: list[int] = []
        if finding.kind == "edge":
            out.append(last_index(finding.path))
            fp = finding.parent
        else:
            fp = finding.fp
        part = finding.lookup
        while True:
            hits = self.sc.runJob(visited, functools.partial(T.parent_in, fp), [part])
            self.spark_run.trace_lookups += 1
            assert len(hits) == 1, f"state {fp:#x}: {len(hits)} parent records in partition " \
                f"{part}"
            parent, index, parent_part = hits[0]
            if index == ROOT:
                return tuple(reversed(out))
            out.append(index)
            fp, part = parent, parent_part


def _before(cut: bytes, path: bytes) -> bool:
    return path < cut
