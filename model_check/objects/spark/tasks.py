"""What the executors run for the object-world Spark engine: one level of one partition --
deduplicate, then expand -- and the small jobs the driver needs at a cut level.

Everything here is a module-level function of plain values (``Job`` is the per-run constant
part), so Spark ships it by reference; the kind travels by name (``kind.KINDS``) and each
executor imports it, so executors run the same world, cores and invariants as the driver.

Records are ``(partition, value)`` pairs (``partition_key`` routes them); ``value[0]`` is a tag:

=========  ==================================================================================
tag        value
=========  ==================================================================================
STORE      ``(STORE, keys)``: the partition's visited store, an ``array("q")`` as bytes
SEEN       ``(SEEN, key)``: a key to add to the store without counting it (the start state)
CAND       ``(CAND, [(key, path, blob, found), ...])``: successors for the partition, the
           smallest path each within the task that sent them; ``blob`` is the pickled world
           (``codec``), None when the next level is the depth bound (it only deduplicates);
           ``found`` the state invariants' finding, checked where the state was generated
EDGE       ``(EDGE, path, invariant, detail)``: a step that raised or broke a transition
           invariant
GENERATED  ``(GENERATED, [(parent path, actions), ...])``: what a task expanded -- the
           level's generated count, and at a cut how many steps the local engine took first
SEED       ``(SEED, blob)``: the start world, expanded as it is (no dedupe)
=========  ==================================================================================

A state's key is the world's ``key()``, computed only on the executors -- never in the driver:
it is Python's ``hash`` of a tuple that holds strings, which differs between processes unless
``PYTHONHASHSEED`` is fixed. PySpark fixes it for every Python worker (the driver's value, or
0 when the driver has none: ``SparkContext.environment``), so the keys of all tasks agree
whatever the driver's own seed; ``probe_hash`` lets a test see that they do.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from pyspark.accumulators import Accumulator, AccumulatorParam

from model_check.objects.kind import WorldKind, kind_named
from model_check.objects.search import raised
from model_check.objects.spark.codec import dumps, last_index, loads, step
from model_check.spark.patches import ExecutorPatch, applied

STORE, SEEN, CAND, EDGE, GENERATED, SEED = range(6)
REACHED = "reached"
"""The accumulator key ``(partition, REACHED)`` of what a task's steps reached."""
BUNDLE = 500
"""Candidates per CAND record."""
FLUSH_AT = 20_000
"""A task sends its combined successors when it holds this many (bounded memory); the next
level merges what two flushes both hold."""


def partition_key(part: int) -> int:
    """The partitioner's function (records are keyed by their partition already). One
    function object for every dataset of a run: PySpark compares partitioners by it."""
    return part


@dataclass(frozen=True)
class Job:
    """What every task of one run needs (shipped with the task)."""

    kind: str  # kind.KINDS
    scenario: Any
    partitions: int
    patch: ExecutorPatch | None = None  # a mutant, applied around each task
    coverage: bool = False  # count what the steps reach (``WorldKind.watch``)

    def home(self, key: int) -> int:
        """The partition that holds the state of key ``key``."""
        return key % self.partitions


class Finding(NamedTuple):
    """A violation at a level, ordered by ``path`` (the local engine's order)."""

    path: bytes
    kind: str  # "edge" (a step raised or broke a transition invariant) | "state"
    invariant: str
    detail: str


def first(a: Finding | None, b: Finding | None) -> Finding | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a.path <= b.path else b


class Metas(AccumulatorParam):
    """Accumulates ``{partition: (generated, new, finding)}`` and ``{(partition, REACHED):
    frozenset}`` from a level's tasks. A task run twice (a lost block recomputed) writes
    the same entry again: idempotent, where summing would not be."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, a: dict, b: dict) -> dict:  # noqa: N802 -- Spark's name
        a.update(b)
        return a


class LocalSums:
    """What a task adds its sums to when called in the driver (a test, a cut)."""

    def __init__(self) -> None:
        self.value: dict = {}

    def add(self, entry: dict) -> None:
        self.value.update(entry)


class Dedupe(NamedTuple):
    """A partition's input deduplicated: the new states ``(key, path, blob, found)`` in path
    order, the start world if the input holds it, the store with the new keys added, the
    level's generated count, what was expanded, and the first violation."""

    new: list[tuple]
    seeds: list[bytes]
    store: array
    generated: int
    expanded: list[tuple[bytes, int]]
    finding: Finding | None


def dedupe(split: int, records: Iterable[tuple[int, tuple]]) -> Dedupe:
    store: array | None = None
    seen_extra: list[int] = []
    cands: dict[int, tuple] = {}
    seeds: list[bytes] = []
    expanded: list[tuple[bytes, int]] = []
    finding: Finding | None = None
    for _part, val in records:
        tag = val[0]
        if tag == CAND:
            for cand in val[1]:
                cur = cands.get(cand[0])
                if cur is None or cand[1] < cur[1]:
                    cands[cand[0]] = cand
        elif tag == STORE:
            assert store is None, f"partition {split}: two visited stores"
            store = array("q", val[1])
        elif tag == SEEN:
            seen_extra.append(val[1])
        elif tag == EDGE:
            finding = first(finding, Finding(val[1], "edge", val[2], val[3]))
        elif tag == GENERATED:
            expanded.extend(val[1])
        elif tag == SEED:
            seeds.append(val[1])
        else:
            raise AssertionError(f"partition {split}: unexpected record tag {tag}")
    assert store is not None, f"partition {split}: no visited store (partitioners differ?)"
    store.extend(seen_extra)
    seen = set(store)
    new = sorted((c for key, c in cands.items() if key not in seen), key=_path)
    for _key, path, _blob, found in new:
        if found is not None:
            finding = first(finding, Finding(path, "state", found[0], found[1]))
    store.extend(c[0] for c in new)
    return Dedupe(new, seeds, store, sum(n for _, n in expanded), expanded, finding)


def _path(cand: tuple) -> bytes:
    return cand[1]


def level_partition(job: Job, metas: Accumulator | LocalSums, expand_new: bool,
                    send_snapshots: bool, split: int, records: Iterable[tuple[int, tuple]]
                    ) -> Iterator[tuple[int, tuple]]:
    """One level of partition ``split``: the store with the level's new states, then --
    when ``expand_new`` and the partition holds no violation (the run stops at this level)
    -- the successors of the new states and of the start world. ``send_snapshots``: whether
    the next level expands its states (else the successors travel without their worlds)."""
    reached: set[tuple[str, ...]] | None = set() if job.coverage else None
    with applied(job.patch):
        d = dedupe(split, records)
        metas.add({split: (d.generated, len(d.new), d.finding)})
        yield split, (STORE, d.store.tobytes())
        if expand_new and d.finding is None:
            states = [(b"", blob) for blob in d.seeds] + [(c[1], c[2]) for c in d.new]
            del d
            yield from _expand(job, kind_named(job.kind), split, states, send_snapshots,
                               reached)
    if reached is not None:
        metas.add({(split, REACHED): frozenset(reached)})


def _expand(job: Job, kind: WorldKind, split: int, states: list[tuple[bytes, bytes]],
            send_snapshots: bool, reached: set[tuple[str, ...]] | None
            ) -> Iterator[tuple[int, tuple]]:
    """Every state's successors, checked as the local engine checks them; per key the one
    with the smallest path (states come in path order, actions in index order, so the first
    met), its state invariants checked once."""
    scenario = job.scenario
    out: dict[int, list] = {}  # key -> [path, blob, found]
    expanded: list[tuple[bytes, int]] = []
    for path, blob in states:
        world = loads(blob, scenario)
        kind.watch(world, reached)
        if not path:  # the start world: its key joins its partition's store
            yield job.home(world.key()), (SEEN, world.key())
        view = kind.view_of(world)
        actions = world.enabled_actions()
        expanded.append((path, len(actions)))
        last = len(actions) - 1
        for i, action in enumerate(actions):
            child = world if i == last else world.snapshot()
            child_path = path + step(i)
            try:
                child.apply(action)
            except Exception as e:  # noqa: BLE001 -- a raising step is a finding
                yield split, (EDGE, child_path, *raised(kind, scenario, action, e))
                continue
            cview = kind.view_of(child)
            found = kind.check_edge(view, cview)
            if found is not None:
                yield split, (EDGE, child_path, *found)
                continue
            key = child.key()
            cur = out.get(key)
            if cur is None:
                out[key] = [child_path,
                            dumps(child, scenario, reached) if send_snapshots else None,
                            kind.check_state(cview)]
            elif child_path < cur[0]:
                cur[0] = child_path
        if len(out) >= FLUSH_AT:
            yield from _candidates(job, out)
            out.clear()
    yield from _candidates(job, out)
    yield split, (GENERATED, expanded)


def _candidates(job: Job, out: dict[int, list]) -> Iterator[tuple[int, tuple]]:
    by_partition: dict[int, list[tuple]] = {}
    for key, (path, blob, found) in out.items():
        by_partition.setdefault(job.home(key), []).append(
            (key, path, blob, None if found is None else tuple(found)))
    for part, cands in sorted(by_partition.items()):
        for k in range(0, len(cands), BUNDLE):
            yield part, (CAND, cands[k:k + BUNDLE])


# ---------------------------------------------------------------- the cut level


def new_paths(split: int, records: Iterable[tuple[int, tuple]]) -> Iterator[bytes]:
    """The paths of a partition's new states at a level (deduplicated again: the same ones
    the level's task found)."""
    for c in dedupe(split, records).new:
        yield c[1]


def steps_through(cut: bytes, split: int, records: Iterable[tuple[int, tuple]]
                  ) -> Iterator[int]:
    """Steps the local engine takes at a level up to and including the step ``cut``, over
    what a partition's tasks expanded: every action of each parent ordered before the cut's
    parent, and the cut's parent's actions through the cut's index."""
    parent, last = cut[:-2], last_index(cut)
    n = 0
    for path, actions in dedupe(split, records).expanded:
        if path < parent:
            n += actions
        elif path == parent:
            n += last + 1
    yield n


def probe_hash(_split: int, _records: Iterable[Any]) -> Iterator[int]:
    """This process's hash of a fixed string: equal in every Python worker of a context."""
    yield hash("kcontrol-object-world-key")
