"""What the executors run: one level of one partition -- deduplicate, then expand -- and the
few small lookups the driver needs at the end.

Everything here is a module-level function of plain values (``Job`` is the per-run constant
part), so Spark ships it by reference and the executors import the same world, controller
and invariant code as the driver.

States travel in **bundles** (``encoding.pack_bundle``: one ``marshal`` dump of up to
``BUNDLE`` states), not one record each: sibling states share most of their components, a
bundle writes a shared component once, and the states unpacked from it share it again --
the identity the world's codec and the fingerprint memoise on.

Records are ``(key, value)`` pairs; ``value[0]`` is a tag:

=========  ======================  ============================================================
tag        key                     value
=========  ======================  ============================================================
VISITED    partition number        ``(VISITED, keys, parents, indices, parent partitions)``:
                                   the visited store (``encoding.VisitedStore``)
CAND       partition number        ``(CAND, bundle)`` of ``(key, path, snapshot, found,
                                   parent key, fp, parent partition, coverage mask)``:
                                   successors for that partition, combined per task
                                   (smallest path kept); the snapshot is None when that level
                                   is the depth bound; the mask is the state's invariant
                                   coverage bits (0 unless ``Job.coverage``)
EDGE       child key (0: raised)   ``(EDGE, path, (invariant, detail), parent key, parent
                                   partition)``: a step that violated a transition
                                   invariant or raised
GENERATED  the task's partition    ``(GENERATED, n)``: successors a task generated
SEED       partition number        ``(SEED, bundle)`` of ``(key, path, snapshot, fp)``: states
                                   to expand as they are (the start state)
=========  ======================  ============================================================

A state's *key* is its fingerprint ``fp``, or with symmetry reduction its class key (the
same for all its renamings; the world kept is the first found, as in the local engine).
Every record above is keyed so that ``partition_key(key) % partitions`` is the partition it
belongs to.

**Which partition holds a state** (``Job.partition_of``): by default the one its
**ZooKeeper component** names (``ROUTE_ZOOKEEPER``: the component's content digest modulo
the partitions) -- equal states have equal components, so deduplication is exact, and all
the states that share a ZooKeeper are expanded by one task: the world's memos of ZooKeeper
calls, and of the digests, views and shared copies of that component (the largest), are
then warmed by one Python worker instead of each. On ``standard`` that took 13% off the
CPU of Spark local[2] (a level there holds 8 states per distinct ZooKeeper; the largest
levels of ``standard`` and ``deep`` split within 1-13% of even over 2-8 partitions).
``ROUTE_KEY`` places a state by its key instead: evenly whatever the scenario, for one whose
ZooKeeper hardly changes, and always with symmetry reduction (the worlds of a class differ
in their ZooKeeper: renamed brokers). Since a state's partition is not a function of its key
alone, the store records each state's parent partition, for the walk back.

**One task per partition and level** (``level_partition``): partition ``i`` of a level's
input holds the visited store of partition ``i`` and the candidates every task of the last
level sent it. The task keeps the candidates the store has not seen (smallest path each:
the new states of this level), adds them to the store, reports the level's sums and first
violation for the partition through an accumulator, and -- unless the level is the last --
expands the new states at once: their successors, keyed by partition, and the store are
the next level's input, after one shuffle. Successors for the depth bound travel without
their snapshots: that level only deduplicates them (on ``standard`` it is the largest). The
new states are unpacked once, in the task that expands them; they are never packed again,
cached, or read back.

**Coverage** (``Job.coverage``, ``model_check.coverage``): a task counts what its steps and
checks reached into a ``Coverage`` of its own and hands it to the driver through the same
accumulator, under ``(partition, COVERAGE)``, once the task is done (a task recomputed writes
the same entry again). A new state's invariant coverage is worked out where it was generated,
travels with the candidate, and is counted where the state turns out to be new -- once per
distinct state, as the local engine counts it.

**The order of the states a task expands matters**: they are expanded in the order first
met, so the children of one parent, which share most components, are stepped one after
another -- the memos stay warm, and the successors two of them share are combined before
the flush (``FLUSH_AT``). Expanded in a random order, ``standard``'s level 9 took 47% more
CPU and received 89% more candidates (2026-11-26, ``docs/benchmarks.md``); a set, or a
sort by key, would lose it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from pyspark.accumulators import Accumulator, AccumulatorParam

from model_check.checks import Checks
from model_check.coverage import Coverage
from model_check.memo import Memos
from model_check.search import expand
from model_check.spark.encoding import (
    VisitedStore,
    last_index,
    pack_bundle,
    step,
    unpack_bundle,
)
from model_check.spark.patches import ExecutorPatch, applied
from model_check.symmetry import canonicalizer
from model_check.world import World, WorldConfig
from model_check.world.fingerprint import DigestSource, part_word
from model_check.world.world import ZOOKEEPER_AT

VISITED, CAND, EDGE, GENERATED, SEED = range(5)
COVERAGE = "coverage"
"""The accumulator key ``(partition, COVERAGE)`` of a task's coverage (``Coverage.plain``)."""

ROUTE_ZOOKEEPER = "zookeeper"
ROUTE_KEY = "key"
ROUTES = (ROUTE_ZOOKEEPER, ROUTE_KEY)

BUNDLE = 1000
"""States per bundle."""
FLUSH_AT = 20_000
"""A task emits its combined successors when it holds this many (bounded memory); the next
level's tasks merge what two flushes both hold."""
KNOWN_LIMIT = 200_000
"""Views a worker keeps by fingerprint for a run (a cache: a view is a function of the state;
a new state's view was often built by the same worker as a successor a level before)."""


def partition_key(key: int) -> int:
    """The partitioner's function (Spark takes it modulo the partition count). One function
    object for every dataset of a run: PySpark compares partitioners by it."""
    return key


@dataclass(frozen=True)
class Job:
    """What every task of one run needs (shipped with the task)."""

    config: WorldConfig
    checks: Checks
    partitions: int
    symmetric: bool = False  # dedupe on class keys (``symmetry.canonicalizer``)
    patch: ExecutorPatch | None = None
    run: str = ""
    """Names the run (made by the driver): the tasks of one run on one Python worker share
    one ``Checks`` -- and with it the invariant memos -- and the views already built, instead
    of each starting empty; the next run starts afresh."""
    route: str = ROUTE_ZOOKEEPER
    """Which partition holds a state (module docstring); symmetry takes ``ROUTE_KEY``."""
    coverage: bool = False
    """Count what the tasks reach (module docstring)."""

    def __post_init__(self) -> None:
        assert self.route in ROUTES, f"unknown partitioning {self.route!r}"
        assert not (self.symmetric and self.route != ROUTE_KEY), \
            "with symmetry reduction states are placed by their class key"

    def partition_of(self, key: int, snapshot: tuple,
                     digests: DigestSource | None = None) -> int:
        """The partition that holds the state ``snapshot`` of key ``key`` (``digests``: the
        run's, ``Memos.digests``)."""
        if self.route == ROUTE_KEY:
            return key % self.partitions
        return part_word(snapshot[ZOOKEEPER_AT], digests) % self.partitions


class _Run:
    """What the tasks of one run share in a worker (see ``Job.run``): the ``Checks``, the
    views already built (by the worlds' own fingerprints) and the memos of the worlds."""

    __slots__ = ("checks", "known", "memos")

    def __init__(self, checks: Checks) -> None:
        self.checks = checks
        self.known: dict[int, Any] = {}
        self.memos: Memos | None = None


_RUN: dict[str, _Run] = {}


def _run_state(job: Job) -> _Run:
    """The run's state in this worker (a fresh one for a job of no run)."""
    if not job.run:
        return _Run(job.checks)
    hit = _RUN.get(job.run)
    if hit is None:
        _RUN.clear()  # one run at a time per worker: drop the last one's memos
        hit = _RUN[job.run] = _Run(job.checks)
    return hit


def _memos(job: Job, cov: Coverage | None) -> Memos:
    """The run's memos in this worker, counting into ``cov``; called with the job's patch
    applied: memos made for other code (``Memos.current``) are replaced."""
    run = _run_state(job)
    memos = run.memos
    if memos is None or not memos.current():
        memos = run.memos = Memos(job.config)
    return memos.counting(cov)


def warm(split: int, _records: Iterable[int]) -> Iterator[tuple[int, int]]:
    """The warm-up job's task (``engine._Warmup``): importing this module was the work."""
    yield split, split


def forget_run(run: str) -> None:
    """Drop the memos of run ``run`` in this process (the driver, after the levels it ran)."""
    _RUN.pop(run, None)


class Finding(NamedTuple):
    """A violation at a level, ordered by ``path`` (the local engine's order)."""

    path: bytes
    kind: str  # "edge" (a step: transition invariant or raised) | "state" (a new state)
    invariant: str
    detail: str
    fp: int  # the state (``kind == "state"``) or the step's target (0 if it raised)
    parent: int
    lookup: int  # the partition holding the state (``state``) or the step's parent (``edge``)


def first(a: Finding | None, b: Finding | None) -> Finding | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a.path <= b.path else b


@contextmanager
def _task(patch: ExecutorPatch | None) -> Iterator[None]:
    """A task's surroundings: the patch (mutant) applied and the cyclic collector off;
    undone after, since the Python worker is reused.

    **The collector.** A task allocates tuples by the million, nearly all of them kept until
    it ends, and the run's memos (``_Run.memos``, the codec's, the views) outlive it; the
    world makes no reference cycles (``search._no_cyclic_gc``). So the collector is off for
    the task, and at its end everything alive is frozen (``gc.freeze``: moved to a
    generation the collector never scans). PySpark's daemon runs a full ``gc.collect()``
    after every task of a reused worker: unfrozen, that traversed the whole memo heap -- 5 s
    after each of ``standard``'s largest expand tasks, with the worker busy meanwhile, so
    PySpark forked extra workers that warmed memos of their own. Frozen, it scans what the
    task left unfrozen: nothing. Memory is still freed by reference counting."""
    was = gc.isenabled()
    gc.disable()
    try:
        with applied(patch):
            yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


# ---------------------------------------------------------------- one level of a partition


class Dedupe(NamedTuple):
    """What deduplicating a partition's input gives: the new states in the order first met
    (``(key, path, snapshot, found, parent key, fp, parent partition, mask)``), the states to
    expand as they are
    (``SEED``), the store with the new states added, and the level's sums."""

    new: list[tuple]
    seeds: list[tuple]
    store: VisitedStore
    generated: int
    finding: Finding | None


def dedupe(split: int, records: Iterable[tuple[int, tuple]]) -> Dedupe:
    """Partition ``split`` of a level's input: keep the candidates the store has not seen
    (smallest path each), add them to the store; the first violation among them and among
    the level's steps (``EDGE``)."""
    store: VisitedStore | None = None
    cands: dict[int, tuple] = {}
    seeds: list[tuple] = []
    finding: Finding | None = None
    generated = 0
    for key, val in records:
        tag = val[0]
        if tag == CAND:
            for cand in unpack_bundle(val[1]):
                cur = cands.get(cand[0])
                if cur is None:
                    cands[cand[0]] = cand
                elif cand[1] < cur[1]:
                    # the same world (same fingerprint) by a smaller path: keep the snapshot
                    # first seen, so that the new states stay grouped by the bundle they came
                    # in (their components shared); another world of the class: take it
                    cands[cand[0]] = cand if cand[5] != cur[5] else \
                        (cur[0], cand[1], cur[2], cur[3], cand[4], cur[5], cand[6], cur[7])
        elif tag == VISITED:
            assert store is None, f"partition {split}: two visited stores"
            store = VisitedStore(*val[1:])
        elif tag == EDGE:
            _, path, (invariant, detail), parent, parent_part = val
            finding = first(finding, Finding(path, "edge", invariant, detail, key, parent,
                                             parent_part))
        elif tag == GENERATED:
            generated += val[1]
        elif tag == SEED:
            seeds.extend(unpack_bundle(val[1]))
        else:
            raise AssertionError(f"partition {split}: unexpected record tag {tag}")
    assert store is not None, f"partition {split}: no visited store (partitioners differ?)"
    seen = set(store.fps)
    new = [c for key, c in cands.items() if key not in seen]
    for key, path, _snap, found, parent, _real, _part, _mask in new:
        if found is not None:
            finding = first(finding, Finding(path, "state", found[0], found[1], key, parent,
                                             split))
    store.add([c[0] for c in new], [c[4] for c in new], [last_index(c[1]) for c in new],
              [c[6] for c in new])
    return Dedupe(new, seeds, store, generated, finding)


def level_partition(job: Job, metas: Accumulator, expand_new: bool, send_snapshots: bool,
                    split: int, records: Iterable[tuple[int, tuple]]
                    ) -> Iterator[tuple[int, tuple]]:
    """One level of partition ``split`` (module docstring): the store, then -- when
    ``expand_new`` and the partition holds no violation (the run stops at this level) --
    the successors of the new states and of the seeds. ``send_snapshots``: whether the
    next level expands its states; when it does not (it is the depth bound), the
    successors travel without their snapshots -- the next level only deduplicates them,
    and the largest level is usually the last."""
    cov = Coverage() if job.coverage else None
    with _task(job.patch):
        memos = _memos(job, cov)
        d = dedupe(split, records)
        metas.add({split: (d.generated, len(d.new), d.finding)})
        if cov is not None:
            for c in d.new:
                cov.state(c[7])
        yield split, (VISITED, *d.store.to_bytes())
        if expand_new and d.finding is None:
            states = [(c[0], c[1], c[2], c[5]) for c in d.new] + d.seeds
            del d
            yield from _expand(job, split, states, memos, send_snapshots)
        if cov is not None:
            metas.add({(split, COVERAGE): cov.plain()})


def _expand(job: Job, split: int, states: list[tuple], memos: Memos,
            send_snapshots: bool = True) -> Iterator[tuple[int, tuple]]:
    """Expand every state with ``search.expand`` (the local engine's unit), check the new
    states' invariants here, combine duplicates: per key, the successor with the smallest
    path (with symmetry, the world kept for a class is that one, as in the local engine).
    Without ``send_snapshots`` a successor's snapshot is dropped at once (None)."""
    config = job.config
    run = _run_state(job)
    checks, known = run.checks, run.known  # known: views by the worlds' own fingerprints
    canon = canonicalizer(config, memo=memos.renames) if job.symmetric else None
    out: dict[int, list] = {}  # key -> [path, snapshot, found, parent key, fingerprint,
    #                                    partition, coverage mask]
    cover = job.coverage
    where = job.partition_of
    digests = memos.digests
    generated = 0
    for key, path, snap, real in states:
        snap = World.canonical(snap, memos)
        view = known.get(real)
        if view is None:
            view = checks.view(World.restore(snap, config, memos))
        if len(known) >= KNOWN_LIMIT:
            known.clear()
        for s in expand(snap, config, checks, view, known, canon, memos):
            generated += 1
            child_path = path + step(s.index)
            if s.found is not None:
                yield s.fp, (EDGE, child_path, tuple(s.found), key, split)
                continue
            child_real = s.fp if s.real_fp is None else s.real_fp
            known.setdefault(child_real, s.view)
            cur = out.get(s.fp)
            if cur is None or (child_path < cur[0] and child_real != cur[4]):
                found = checks.on_state(s.view)
                out[s.fp] = [child_path, s.snapshot if send_snapshots else None,
                             None if found is None else tuple(found), key, child_real,
                             where(s.fp, s.snapshot, digests), checks.state_mask(s.view) if cover else 0]
            elif child_path < cur[0]:  # the same world by a smaller path
                cur[0], cur[3] = child_path, key
        if len(out) >= FLUSH_AT:
            yield from _candidates(out, job, split)
            out.clear()
    yield from _candidates(out, job, split)
    yield split, (GENERATED, generated)


def _candidates(out: dict[int, list], job: Job, split: int) -> Iterator[tuple[int, tuple]]:
    by_partition: dict[int, list[tuple]] = {}
    for key, (path, snap, found, parent, real, part, mask) in out.items():
        by_partition.setdefault(part, []).append((key, path, snap, found, parent, real, split,
                                                  mask))
    for i, states in sorted(by_partition.items()):
        for k in range(0, len(states), BUNDLE):
            yield i, (CAND, pack_bundle(states[k:k + BUNDLE]))


class LocalSums:
    """What a level's tasks add their sums to when the driver runs them (the accumulator's
    ``add``, in one process)."""

    def __init__(self) -> None:
        self.value: dict = {}

    def add(self, entry: dict) -> None:
        self.value.update(entry)


class PartitionMetas(AccumulatorParam):
    """Accumulates ``{partition: (generated, new, finding)}`` -- and ``{(partition, COVERAGE):
    coverage}`` -- from a level's tasks. A task
    run twice (a lost block recomputed) writes the same entry again: idempotent, where
    summing counts would not be."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, a: dict, b: dict) -> dict:  # noqa: N802 -- Spark's name
        a.update(b)
        return a


# ---------------------------------------------------------------- the cut level


def level_states(split: int, records: Iterable[tuple[int, tuple]]
                 ) -> Iterator[tuple[int, bytes, tuple, int]]:
    """``(key, path, snapshot, fingerprint)`` of the states a partition of a level's input
    holds at that level: its new states (deduplicated again: the same ones as the level's
    task found) and its seeds."""
    d = dedupe(split, records)
    for key, path, snap, _found, _parent, real, _part, _mask in d.new:
        yield key, path, snap, real
    for key, path, snap, real in d.seeds:
        yield key, path, snap, real


def level_paths(split: int, records: Iterable[tuple[int, tuple]]) -> Iterator[bytes]:
    for _key, path, _snap, _real in level_states(split, records):
        yield path


def count_edges_before(job: Job, parent_path: bytes, last: int, split: int,
                       records: Iterable[tuple[int, tuple]]) -> Iterator[int]:
    """Successors the local engine generates before stopping at the step
    ``parent_path + last``, over the states of the level before (a partition of that level's
    input): all of every state ordered before ``parent_path``, ``last + 1`` of that state."""
    n = 0
    with _task(job.patch):
        for _key, path, snap, _real in level_states(split, records):
            if path < parent_path:
                n += len(World.restore(snap, job.config).enabled_actions())
            elif path == parent_path:
                n += last + 1
    yield n


def parent_in(fp: int, records: Iterable[tuple[int, tuple]]
              ) -> Iterator[tuple[int, int, int]]:
    """``(parent key, action index, parent's partition)`` of ``fp`` from a partition of a
    level's input (its visited store)."""
    for _key, val in records:
        if val[0] == VISITED:
            hit = VisitedStore(*val[1:]).parent_of(fp)
            if hit is not None:
                yield hit
