"""The executors' task functions run as plain Python (no Spark context): their bookkeeping."""

from __future__ import annotations

import gc

from model_check.checks import default_checks
from model_check.scenario import load
from model_check.search import ROOT
from model_check.spark import tasks as T
from model_check.spark.encoding import VisitedStore, pack_bundle, step, unpack_bundle
from model_check.start import start
from model_check.world import World, fingerprint


class Sums:
    """Stands in for the accumulator a dedupe task adds its sums to."""

    def __init__(self) -> None:
        self.value: dict = {}

    def add(self, entry: dict) -> None:
        self.value.update(entry)


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


def test_dedupe_takes_the_smaller_path_but_keeps_the_world_first_seen() -> None:
    _, children = _siblings()
    fps = [fingerprint(c) for c in children]
    long_path = step(7) + step(7)
    short_path = step(1) + step(0)
    # the worlds by the longer path (bundle A), then every other one again by the shorter (B)
    bundle_a = pack_bundle([(fp, long_path, c, None, 111, fp) for fp, c in zip(fps, children,
                                                                             strict=True)])
    again = [(fp, short_path, c, None, 222, fp) for fp, c in zip(fps, children, strict=True)]
    bundle_b = pack_bundle(again[::2])
    store = VisitedStore()
    store.add([5], [0], [ROOT])
    records = [(0, (T.VISITED, *store.to_bytes())), (0, (T.CAND, bundle_a)),
               (0, (T.CAND, bundle_b)), (0, (T.GENERATED, len(fps) + len(again[::2])))]
    sums = Sums()
    out = list(T.dedupe_partition(sums, 0, records))
    frontier = [x for _, v in out if v[0] == T.FRONTIER for x in unpack_bundle(v[1])]
    assert [(k, p) for k, p, _, _ in frontier] == \
        [(fp, short_path if i % 2 == 0 else long_path) for i, fp in enumerate(fps)]
    assert [s for _, _, s, _ in frontier] == children
    (visited,) = [v for _, v in out if v[0] == T.VISITED]
    store = VisitedStore(*visited[1:])
    assert [store.parent_of(fp) for fp in fps] == \
        [(222, 0) if i % 2 == 0 else (111, 7) for i in range(len(fps))]  # each path's parent
    assert sums.value == {0: (len(fps) + len(again[::2]), len(fps), None)}
    # the states kept are bundle A's objects, which share their components: packed again
    # they take no more room than bundle A did (mixed with B's objects they would not share)
    packed = sum(len(v[1]) for _, v in out if v[0] == T.FRONTIER)
    assert packed <= len(bundle_a)


def test_dedupe_takes_the_other_world_of_a_class_by_a_smaller_path() -> None:
    """With symmetry a key names a class: a smaller path to *another* world of the class
    brings its own world (the local engine keeps the first world found in its order)."""
    _, children = _siblings()
    a, b = children[0], children[1]
    key = 42
    long_path, short_path = step(3), step(2)
    records = [(0, (T.VISITED, *VisitedStore().to_bytes())),
               (0, (T.CAND, pack_bundle([(key, long_path, a, None, 1, fingerprint(a))]))),
               (0, (T.CAND, pack_bundle([(key, short_path, b, None, 2, fingerprint(b))])))]
    out = list(T.dedupe_partition(Sums(), 0, records))
    frontier = [x for _, v in out if v[0] == T.FRONTIER for x in unpack_bundle(v[1])]
    assert frontier == [(key, short_path, b, fingerprint(b))]
