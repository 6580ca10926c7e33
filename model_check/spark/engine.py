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
   combined (smallest path kept);
3. the successors, keyed by partition, and the store are **shuffled** into the next level's
   input, which is persisted, ``localCheckpoint``-ed (or ``checkpoint``-ed to
   ``spark.kcontrol.checkpointDir`` when the Spark conf names one, for clusters that may
   lose an executor) and materialised by a count on the JVM side.

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

import functools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from model_check.checks import Checks
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


@dataclass
class SparkRun:
    """A Spark check: the engine-neutral ``Result`` and where it ran."""

    result: Result
    settings: SparkSettings
    trace_lookups: int = 0  # single-partition jobs that walked the parent pointers


def spark_bfs(scenario: Scenario, checks: Checks, options: Options | None = None,
              spark: SparkOptions | None = None,
              on_level: Callable[[Level], None] | None = None, sc=None) -> SparkRun:  # noqa: ANN001
    """The Spark engine. ``sc``: a running ``SparkContext`` (else ``spark_context``). The
    driver runs the setup (``start``) itself: a patch that must hold there (a mutant) is the
    caller's to apply in this process; ``spark.patch`` carries it to the executors."""
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
    st = start(scenario, checks)
    run.result.setup_steps = len(st.setup)
    if st.found is not None:
        run.result.violation = Violation(st.found.invariant, st.found.detail, (), st.setup)
    else:
        job = T.Job(st.config, checks, partitions, symmetric, spark.patch, run=uuid.uuid4().hex,
                    route=route)
        _Search(sc, checkpoint_dir, st, job, run, on_level).run(
            scenario.depth if options.depth is None else options.depth,
            scenario.max_states if options.max_states is None else options.max_states)
    run.result.seconds = time.perf_counter() - t0
    if run.result.violation is not None:
        run.result.verdict = "violation"
    return run


def _result(scenario: Scenario, checks: Checks, symmetric: bool) -> Result:
    # the same fields the local engine fills (search.bfs), engine "spark"
    return Result(scenario.name, "spark", "pass", 0, 1, 0, 0.0,
                  symmetry="on" if symmetric else "off", checks=checks.name)


class _Search:
    def __init__(self, sc, checkpoint_dir: str | None, st: Start, job: T.Job,  # noqa: ANN001
                 run: SparkRun, on_level: Callable[[Level], None] | None) -> None:
        self.sc, self.n, self.checkpoint_dir = sc, job.partitions, checkpoint_dir
        self.st, self.job, self.spark_run, self.on_level = st, job, run, on_level

    # ------------------------------------------------------------ datasets

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
        return self.sc.parallelize(records, self.n).partitionBy(self.n, T.partition_key)

    def _level(self, inp, expand_new: bool):  # noqa: ANN001, ANN202
        """One level: its input -> (the next level's input, each partition's (generated,
        new, finding) at this level)."""
        metas = self.sc.accumulator({}, T.PartitionMetas())
        nxt = inp.mapPartitionsWithIndex(
            functools.partial(T.level_partition, self.job, metas, expand_new)
        ).partitionBy(self.n, T.partition_key)
        nxt.persist()
        if self.checkpoint_dir:
            nxt.checkpoint()
        else:
            nxt.localCheckpoint()
        # materialise the level with a count on the JVM side: a Python action would read
        # every record of the next level through a Python worker for nothing
        nxt._jrdd.count()
        got = metas.value
        assert sorted(got) == list(range(self.n)), f"level sums from partitions {sorted(got)}"
        return nxt, [got[i] for i in range(self.n)]

    # ------------------------------------------------------------ the loop

    def run(self, depth_bound: int, max_states: int) -> None:
        result = self.spark_run.result
        if depth_bound < 1:  # the start state alone, as the local engine: bounded by depth
            result.bounded_by = "depth"
            return
        t = time.perf_counter()
        before = self._initial()  # level 0's input
        inp, _ = self._level(before, True)  # the start state expanded: level 1's input
        frontier_size = 1
        for depth in range(1, depth_bound + 1):
            if frontier_size == 0:
                return
            nxt, metas = self._level(inp, depth < depth_bound)
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
