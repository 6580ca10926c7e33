"""What the Spark engine's order and bookkeeping rest on (pure: no Spark context)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from model_check.checks import default_checks
from model_check.scenario import load
from model_check.search import ROOT
from model_check.spark.encoding import (
    MAX_ACTIONS,
    ROOT_PARTITION,
    VisitedStore,
    last_index,
    pack_bundle,
    path_indices,
    step,
    unpack_bundle,
)
from model_check.start import start
from model_check.world import World, fingerprint

paths = st.lists(st.integers(0, MAX_ACTIONS - 1), min_size=1, max_size=12)


def encode(indices: list[int]) -> bytes:
    return b"".join(step(i) for i in indices)


@given(paths, paths)
def test_byte_order_of_paths_is_the_order_of_their_indices(a: list[int], b: list[int]) -> None:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]  # the engine compares paths of one level: one length
    assert (encode(a) < encode(b)) == (a < b)
    assert path_indices(encode(a)) == tuple(a) and last_index(encode(a)) == a[-1]


def test_the_visited_store_keeps_parent_pointers_through_bytes() -> None:
    store = VisitedStore()
    store.add([11], [0], [ROOT], [ROOT_PARTITION])
    store.add([2**64 - 1, 7], [11, 11], [3, 0], [5, 0])
    again = VisitedStore(*store.to_bytes())
    assert len(again) == 3 and set(again.fps) == {11, 7, 2**64 - 1}
    assert again.parent_of(2**64 - 1) == (11, 3, 5)  # the parent, the step, where it is
    assert again.parent_of(11) == (0, ROOT, ROOT_PARTITION)
    assert again.parent_of(5) is None


def test_a_bundle_keeps_states_equal_and_shares_what_siblings_share() -> None:
    s = start(load("smoke"), default_checks())
    world = World.restore(s.snapshot, s.config)
    children = []
    for action in world.enabled_actions():
        child = World.restore(s.snapshot, s.config)
        child.apply(action)
        children.append(child.snapshot())
    assert len(children) > 1
    items = [(fingerprint(c), b"", c) for c in children]
    loaded = unpack_bundle(pack_bundle(items))
    assert [(fp, fingerprint(c)) for fp, _, c in loaded] == [(fp, fp) for fp, _, _ in items]
    one_by_one = sum(len(pack_bundle([i])) for i in items)
    assert len(pack_bundle(items)) < one_by_one * 0.8  # shared components written once
    # the components siblings share come back as one object
    a, b = loaded[0][2], loaded[1][2]
    assert any(x is y for x, y in zip(a, b, strict=True))
