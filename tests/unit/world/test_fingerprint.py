"""Canonical fingerprints (builtins-only snapshots, no pickle memo) and the world's
per-component snapshot caches / copy-on-write restore."""

from __future__ import annotations

import pickle
import random
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from model_check.memo.digests import Digests
from model_check.world import CreateTopic, World, WorldConfig, fingerprint
from model_check.world import actions as A
from model_check.world.channels import REQUEST
from model_check.world.codec import decode, encode, is_builtin
from model_check.world.fingerprint import encode as fp_encode
from model_check.world.runner import Runner
from model_check.world.world import ZOOKEEPER_AT
from model_check.world.zookeeper import ZOOKEEPER

CONFIG = WorldConfig.with_faults(
    3, admin=(CreateTopic("t", ((0, (1, 2, 3)), (1, (2, 3, 1)))),), crash=1, drop=1,
    expire_controller=1, expire_broker=1, isr_change=1, restart=1)

scalars = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=12), st.booleans(),
                    st.none(), st.binary(max_size=8))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5).map(tuple),
                      max_leaves=40)


def fresh(x: object) -> object:
    """An equal value sharing nothing with ``x``: new tuples, new (non-interned) strings,
    new big ints and bytes."""
    if type(x) is tuple:
        return tuple([fresh(y) for y in x])
    if type(x) is str:
        return "".join(list("\x01" + x))[1:]
    if type(x) is int and not isinstance(x, bool):
        return int(str(x))
    if type(x) is bytes:
        return bytes(bytearray(x))
    return x


def shared(x: object, pool: dict) -> object:
    """An equal value where equal sub-values are one object (interned strings, one tuple)."""
    if type(x) is tuple:
        x = tuple([shared(y, pool) for y in x])
    elif type(x) is str:
        x = sys.intern(x)
    key = (type(x), repr(x))  # repr: 0 and False are equal but not the same value
    return pool.setdefault(key, x)


@settings(max_examples=200, deadline=None)
@given(values)
def test_equal_values_with_any_sharing_have_equal_fingerprints(v: object) -> None:
    a = fresh(v)
    b = shared(v, {})
    both = (a, b, a)  # the same object twice next to an equal one
    again = (fresh(v), fresh(v), fresh(v))
    assert a == b and both == again
    assert fp_encode(a) == fp_encode(b)
    assert fp_encode(both) == fp_encode(again)
    digests = Digests()
    f1 = fingerprint(both, digests)
    assert fingerprint(again, digests) == f1  # first one memoised, second digested afresh
    assert fingerprint(again) == f1 == fingerprint(both)  # without a memo
    assert fingerprint(again, Digests()) == f1


@settings(max_examples=100, deadline=None)
@given(st.lists(values, min_size=1, max_size=80), st.data())
def test_a_fingerprint_updated_from_the_parents_equals_the_fingerprint(
        parent: list, data: st.DataObject) -> None:
    """``Near`` (a parent's words and fingerprint) and ``fingerprint_near`` (a child's,
    from the parent's terms) give ``fingerprint``'s value -- also past the 64 positions
    whose weights are made up front."""
    from model_check.world.fingerprint import Near, fingerprint_near

    snap = tuple(parent)
    near = Near(snap)
    assert near.fp == fingerprint(snap)
    changed = data.draw(st.sets(st.integers(0, len(snap) - 1), max_size=3))
    child = tuple(data.draw(values) if i in changed else p for i, p in enumerate(snap))
    assert fingerprint_near(child, near) == fingerprint(child)
    remembered = Near(snap, Digests())
    assert remembered.fp == near.fp
    assert fingerprint_near(child, remembered) == fingerprint(child)


def test_a_memoising_pickle_would_not_be_canonical() -> None:
    s = "partition-state"
    same, equal = (s, s), (s, "".join(list(s)))
    assert same == equal
    assert pickle.dumps(same, 5) != pickle.dumps(equal, 5)  # the bug fixed here
    assert fp_encode(same) == fp_encode(equal)
    assert fingerprint(same) == fingerprint(equal)


def running() -> World:
    w = World(CONFIG)
    r = Runner(w, out=lambda _line: None)
    r.start_all()
    r.run()
    r.do(A.Action(A.ADMIN, 0, 0))
    r.run()
    return w


def test_snapshot_is_builtins_only_and_decodes_back() -> None:
    w = running()
    snap = w.snapshot()
    assert is_builtin(snap)
    zk_nodes = snap[ZOOKEEPER_AT][ZOOKEEPER.nodes]
    assert {p for p, _ in zk_nodes} == set(w.zk.nodes)
    assert all(decode(r) == w.zk.nodes[p] for p, r in zk_nodes)
    assert encode(decode(zk_nodes)) == zk_nodes


def _independent_deliveries(w: World) -> tuple[A.Action, A.Action]:
    """Crash broker 3: the controller sends requests to brokers 1 and 2."""
    r = Runner(w, out=lambda _line: None)
    r.do(A.Action(A.CRASH, 3))
    for _ in range(50):
        ds = [a for a in w.enabled_actions() if a.kind == A.DELIVER and a.arg.kind == REQUEST]
        dsts = {a.arg.dst for a in ds}
        if len(dsts) >= 2:
            a, b = (next(x for x in ds if x.arg.dst == d) for d in sorted(dsts)[:2])
            return a, b
        nxt = next((a for a in w.enabled_actions() if a.kind in A.PROGRESS), None)
        assert nxt is not None
        r.do(nxt)
    raise AssertionError("no two independent deliveries")


def test_two_orders_of_independent_deliveries_give_one_fingerprint() -> None:
    w = running()
    a, b = _independent_deliveries(w)
    snap = w.snapshot()
    one = World.restore(snap, CONFIG)  # copy-on-write restore
    one.apply(a)
    one.apply(b)
    two = World.restore(snap, CONFIG)
    for c in CONFIG.broker_ids:  # fully materialised: other objects, other sharing
        two.controllers[c], two.brokers[c]  # noqa: B018
    two.zk, two.channels  # noqa: B018
    two.apply(b)
    two.apply(a)
    s1, s2 = one.snapshot(), two.snapshot()
    assert s1 == s2 and s1 != snap
    digests = Digests()
    assert fingerprint(s1, digests) == fingerprint(s2, digests) == fingerprint(s1)
    assert fingerprint(fresh(s1)) == fingerprint(s2)  # type: ignore[arg-type]


def _uncached_snapshot(w: World) -> tuple:
    """Every component materialised and every snapshot cache dropped."""
    for b in w.config.broker_ids:
        w.brokers[b]._snap = None  # type: ignore[attr-defined]
        w.controllers[b]  # noqa: B018
    w._csnap.clear()
    w.zk._snap = None
    w.channels._snap = None
    return w.snapshot()


def test_cached_and_copy_on_write_worlds_behave_as_fresh_ones() -> None:
    """Random walks: a lazily restored world and a fully materialised one offer the same
    actions, print the same lines and reach the same snapshot; cached snapshots equal
    recomputed ones."""
    rng = random.Random(7)
    for _walk in range(6):
        w = World(CONFIG)
        for _step in range(60):
            snap = w.snapshot()
            lazy = World.restore(snap, CONFIG)
            eager = World.restore(snap, CONFIG)
            assert _uncached_snapshot(eager) == snap
            actions = lazy.enabled_actions()
            assert actions == eager.enabled_actions() == w.enabled_actions()
            assert lazy.is_quiescent() == eager.is_quiescent()
            if not actions:
                break
            a = rng.choice(actions)
            lines = w.apply(a)
            assert lazy.apply(a) == lines == eager.apply(a)
            s = w.snapshot()
            assert lazy.snapshot() == s == eager.snapshot()
            assert fingerprint(lazy.snapshot()) == fingerprint(s)
            assert is_builtin(s)
            assert World.restore(s, CONFIG).snapshot() is not None
        assert _uncached_snapshot(w) == w.snapshot()
