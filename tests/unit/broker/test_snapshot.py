"""Snapshots are canonical (independent of insertion order) and restore round-trips."""

from __future__ import annotations

import io
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.broker import BrokerCore

from .builders import config, lai, lai_request, running, send, um, um_request
from .strategies import events, lai_partitions


def canonical_bytes(value: object) -> bytes:
    """Pickle without the memo (``fast``): equal values give equal bytes whatever object
    identity they share. A world fingerprint should pickle this way."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(value)
    return buf.getvalue()


@settings(max_examples=200, deadline=None)
@given(st.lists(events, max_size=30))
def test_restore_round_trips_and_is_independent(evs: list) -> None:
    cfg = config(1)
    core = BrokerCore(cfg)
    for ev in evs:
        snap = core.snapshot()
        hash(snap)
        assert pickle.loads(pickle.dumps(snap)) == snap
        copy = BrokerCore.restore(snap, cfg)
        assert copy.snapshot() == snap
        assert copy._encode() == snap  # decoding and encoding again, not the cache
        assert core._encode() == snap
        # the same event gives the same effects and the same next state on both
        assert copy.handle(ev) == core.handle(ev)
        assert copy.snapshot() == core.snapshot()
        # and cores restored from one snapshot share nothing mutable
        before = core._encode()
        BrokerCore.restore(snap, cfg).handle(ev)
        assert core._encode() == before == copy._encode()


@settings(max_examples=100, deadline=None)
@given(st.lists(lai_partitions(), min_size=1, max_size=6, unique_by=lambda p: p.tp),
       st.randoms(use_true_random=False))
def test_snapshot_independent_of_insertion_order(parts: list, rnd) -> None:
    a, b = running(), running()
    shuffled = list(parts)
    rnd.shuffle(shuffled)
    send(a, lai_request(*parts))
    for p in reversed(shuffled):  # one request per partition, another order
        send(b, lai_request(p))
    send(a, um_request(*[um(p.tp) for p in parts], live=(1, 2, 3)))
    send(b, um_request(*[um(p.tp) for p in reversed(shuffled)], live=(3, 1, 2)))
    assert a.snapshot() == b.snapshot()
    assert canonical_bytes(a.snapshot()) == canonical_bytes(b.snapshot())


def test_equal_values_built_apart_pickle_equally_in_fast_mode() -> None:
    a, b = running(), running()
    topic = "".join(["t", "opic"])  # an equal string that is another object
    send(a, lai_request(lai(("topic", 0)), lai(("topic", 1))))
    send(b, lai_request(lai((topic, 0)), lai(("topic", 1))))
    assert a.snapshot() == b.snapshot()
    assert canonical_bytes(a.snapshot()) == canonical_bytes(b.snapshot())


def test_logs_are_not_in_the_snapshot() -> None:
    a = running()
    b = BrokerCore.restore(a.snapshot(), a.config)
    assert a.state_change_log and not b.state_change_log
    send(a, um_request())
    send(b, um_request())
    assert a.snapshot() == b.snapshot()
    assert len(a.applied_log) == 1 and len(b.applied_log) == 1


BUILTINS = (tuple, int, str, bool, type(None))


def _builtins_only(value: object) -> bool:
    if isinstance(value, tuple):
        return type(value) is tuple and all(_builtins_only(v) for v in value)
    return type(value) in BUILTINS


@settings(max_examples=100, deadline=None)
@given(st.lists(events, max_size=30))
def test_snapshot_holds_builtins_only(evs: list) -> None:
    """No dataclass or enum: pickling stays in C (the fingerprint's hot path)."""
    core = BrokerCore(config(1))
    for ev in evs:
        core.handle(ev)
        assert _builtins_only(core.snapshot())


def test_restored_cores_share_no_mutable_state() -> None:
    a = running()
    send(a, um_request(um(("t", 0)), live=(1, 2)))
    snap = a.snapshot()
    b, c = BrokerCore.restore(snap, a.config), BrokerCore.restore(snap, a.config)
    send(b, um_request(um(("t", 0), leader=-2), um(("u", 0)), live=(3,)))
    send(b, lai_request(lai(("u", 0))))
    assert c._encode() == snap and a._encode() == snap
    assert [x.broker_id for x in c.metadata_cache.live_brokers] == [1, 2]
