"""The executors' task functions run as plain Python (no Spark context): their bookkeeping."""

from __future__ import annotations

import gc

import pytest

from model_check.checks import default_checks
from model_check.scenario import load
from model_check.search import ROOT
from model_check.spark import tasks as T
from model_check.spark.encoding import (
    ROOT_PARTITION,
    VisitedStore,
    pack_bundle,
    step,
    unpack_bundle,
)
from model_check.start import start
from model_check.world import World, fingerprint

Sums = T.LocalSums  # stands in for the accumulator a task adds its sums to


def test_a_task_runs_without_the_collector_and_freezes_what_it_leaves_alive() -> None:
    gc.unfreeze()
    was = gc.isenabled()
    kept: list[tuple] = []
    try:
        with T._task(None):
            assert not gc.isenabled()
            kept.extend((i, str(i)) for i in range(10_000))
        # PySpark's daemon runs gc.collect() after every task: it must not traverse what the
        # task left alive (the run's memos), so that is frozen
        assert gc.get_freeze_count() >= 10_000
        assert gc.isenabled() == was
    finally:
        gc.unfreeze()


def _siblings() -> tuple[object, list[tuple]]:
    s = start(load("smoke"), default_checks())
    out = []
    for action in World.restore(s.snapshot, s.config).enabled_actions():
        child = World.restore(s.snapshot, s.config)
        child.apply(action)
        out.append(child.snapshot())
    assert len(out) >= 3
    return s, out


def _shares_equal_components(states: list[tuple]) -> bool:
    """Whether equal components of different states are one object."""
    return all(x is y for a in states for b in states for x, y in zip(a, b, strict=True)
               if x == y)


def test_dedupe_takes_the_smaller_path_but_keeps_the_world_first_seen() -> None:
    _, children = _siblings()
    fps = [fingerprint(c) for c in children]
    long_path = step(7) + step(7)
    short_path = step(1) + step(0)
    # the worlds by the longer path (bundle A), then every other one again by the shorter (B)
    bundle_a = pack_bundle([(fp, long_path, c, None, 111, fp, 0, 0)
                            for fp, c in zip(fps, children, strict=True)])
    again = [(fp, short_path, c, None, 222, fp, 1, 0) for fp, c in zip(fps, children, strict=True)]
    bundle_b = pack_bundle(again[::2])
    store = VisitedStore()
    store.add([5], [0], [ROOT], [ROOT_PARTITION])
    records = [(0, (T.VISITED, *store.to_bytes())), (0, (T.CAND, bundle_a)),
               (0, (T.CAND, bundle_b)), (0, (T.GENERATED, len(fps) + len(again[::2])))]
    d = T.dedupe(0, records)
    assert [(c[0], c[1]) for c in d.new] == \
        [(fp, short_path if i % 2 == 0 else long_path) for i, fp in enumerate(fps)]
    assert [c[2] for c in d.new] == children
    assert [d.store.parent_of(fp) for fp in fps] == \
        [(222, 0, 1) if i % 2 == 0 else (111, 7, 0) for i in range(len(fps))]  # each path's
    assert d.store.parent_of(5) == (0, ROOT, ROOT_PARTITION)
    assert (d.generated, d.finding, d.seeds) == (len(fps) + len(again[::2]), None, [])
    # the worlds kept are bundle A's objects, which share their equal components (mixed
    # with B's they would not: the world's memos keyed by identity would miss)
    assert _shares_equal_components([c[2] for c in d.new])


def test_dedupe_takes_the_other_world_of_a_class_by_a_smaller_path() -> None:
    """With symmetry a key names a class: a smaller path to *another* world of the class
    brings its own world (the local engine keeps the first world found in its order)."""
    _, children = _siblings()
    a, b = children[0], children[1]
    key = 42
    long_path, short_path = step(3), step(2)
    records = [(0, (T.VISITED, *VisitedStore().to_bytes())),
               (0, (T.CAND, pack_bundle([(key, long_path, a, None, 1, fingerprint(a), 0, 0)]))),
               (0, (T.CAND, pack_bundle([(key, short_path, b, None, 2, fingerprint(b), 0, 0)])))]
    d = T.dedupe(0, records)
    assert d.new == [(key, short_path, b, None, 2, fingerprint(b), 0, 0)]


def test_a_level_task_stores_the_new_states_and_sends_their_successors() -> None:
    """The start state as a seed, one partition: its successors come out as candidates
    (distinct, each with its smallest path and its parent), with the count of steps."""
    s, children = _siblings()
    root = fingerprint(s.snapshot)
    store = VisitedStore()
    store.add([root], [0], [ROOT], [ROOT_PARTITION])
    records = [(0, (T.VISITED, *store.to_bytes())),
               (0, (T.SEED, pack_bundle([(root, b"", s.snapshot, root)])))]
    job = T.Job(s.config, default_checks(), 1)
    sums = Sums()
    out = list(T.level_partition(job, sums, True, True, 0, records))
    assert sums.value == {0: (0, 0, None)}  # no candidate at level 0: the seed is no new state
    (visited,) = [v for _, v in out if v[0] == T.VISITED]
    assert list(VisitedStore(*visited[1:]).fps) == [root]
    cands = [c for _, v in out if v[0] == T.CAND for c in unpack_bundle(v[1])]
    first_path: dict[int, bytes] = {}
    for i, c in enumerate(children):
        first_path.setdefault(fingerprint(c), step(i))
    assert sorted((c[0], c[1], c[4], c[5], c[6]) for c in cands) == \
        sorted((fp, p, root, fp, 0) for fp, p in first_path.items())
    assert {fingerprint(c[2]) for c in cands} == set(first_path)  # each with its world
    assert [v[1] for _, v in out if v[0] == T.GENERATED] == [len(children)]
    # the last level (or a partition holding a violation) expands nothing
    quiet = list(T.level_partition(job, Sums(), False, True, 0, records))
    assert [v[0] for _, v in quiet] == [T.VISITED]


def test_successors_for_the_depth_bound_travel_without_snapshots_to_the_same_places() -> None:
    """When the next level is the depth bound it only deduplicates: the successors are sent
    without their worlds, and otherwise as they would be -- the same keys, paths, parents,
    findings and partitions (placed by their ZooKeeper before the world is dropped)."""
    s, _ = _siblings()
    root = fingerprint(s.snapshot)
    partitions = 4
    job = T.Job(s.config, default_checks(), partitions)
    home = job.partition_of(root, s.snapshot)

    def sent(send_snapshots: bool) -> list[tuple[int, tuple]]:
        store = VisitedStore()
        store.add([root], [0], [ROOT], [ROOT_PARTITION])
        records = [(home, (T.VISITED, *store.to_bytes())),
                   (home, (T.SEED, pack_bundle([(root, b"", s.snapshot, root)])))]
        out = list(T.level_partition(job, Sums(), True, send_snapshots, home, records))
        return sorted((where, c) for where, v in out if v[0] == T.CAND
                      for c in unpack_bundle(v[1]))

    full, bare = sent(True), sent(False)
    assert len({where for where, _ in full}) > 1  # the test sends to several partitions
    assert all(where == job.partition_of(c[0], c[2]) for where, c in full)
    assert all(c[2] is None for _, c in bare)
    assert [(where, c[:2] + c[3:]) for where, c in bare] == \
        [(where, c[:2] + c[3:]) for where, c in full]


def test_a_state_is_placed_by_its_zookeeper_or_by_its_key() -> None:
    """By ZooKeeper (the default), states with one ZooKeeper share a partition whatever
    their keys; by key, the key decides. Equal states land together either way."""
    s, children = _siblings()
    from model_check.world.fingerprint import part_word

    by_zk = T.Job(s.config, default_checks(), 7)
    by_key = T.Job(s.config, default_checks(), 7, route=T.ROUTE_KEY)
    for c in children:
        fp = fingerprint(c)
        assert by_zk.partition_of(fp, c) == part_word(c[0]) % 7
        assert by_key.partition_of(fp, c) == fp % 7
    same_zk = [c for c in children if c[0] == children[0][0]]
    assert len({by_zk.partition_of(fingerprint(c), c) for c in same_zk}) == 1
    with pytest.raises(AssertionError, match="class key"):
        T.Job(s.config, default_checks(), 7, symmetric=True)
