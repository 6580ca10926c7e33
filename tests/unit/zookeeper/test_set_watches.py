"""``setWatches`` (``adapters/zookeeper/set_watches.py``): the request bytes, the cutting under
the size bound, and the watchers registered in kazoo's table when the request is serialized.
No server: the behaviour on a real ensemble is ``tests/integration/zookeeper/test_set_watches_ensemble.py``."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from adapters.zookeeper import set_watches
from adapters.zookeeper.set_watches import REQUEST_OVERHEAD, SetDataWatches, cut, encode

paths_st = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1,
                            max_size=40).map(lambda s: "/" + s), max_size=60)


def reference_encode(zxid: int, paths: list[str]) -> bytes:
    """ZooKeeper's ``SetWatches`` record written field by field: ``long relativeZxid``,
    ``vector<ustring> dataWatches``, then empty ``existWatches`` and ``childWatches``."""
    out = bytearray(struct.pack("!q", zxid))
    out += struct.pack("!i", len(paths))
    for p in paths:
        raw = p.encode("utf-8")
        out += struct.pack("!i", len(raw)) + raw
    out += struct.pack("!i", 0) + struct.pack("!i", 0)
    return bytes(out)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**63 - 1), paths_st)
def test_encode_is_the_record_field_by_field(zxid: int, paths: list[str]) -> None:
    assert encode(zxid, paths) == reference_encode(zxid, paths)


def framed(paths: list[str]) -> int:
    """kazoo's framed packet: length prefix, xid, opcode, then the body."""
    return 12 + len(reference_encode(1, paths))


@settings(max_examples=200, deadline=None)
@given(paths_st, st.integers(REQUEST_OVERHEAD + 4 + 164, 2000))
def test_cut_covers_every_path_in_requests_under_the_bound_greedily(paths: list[str],
                                                                   bound: int) -> None:
    ranges = cut(paths, bound)
    assert [i for a, b in ranges for i in range(a, b)] == list(range(len(paths)))
    for a, b in ranges:
        assert b > a
        assert framed(paths[a:b]) <= bound
    for (a, b), _ in zip(ranges, ranges[1:], strict=False):
        assert framed(paths[a:b + 1]) > bound, "a request was cut shorter than it could be"


def test_cut_refuses_a_path_no_request_can_hold() -> None:
    with pytest.raises(ValueError, match="alone exceeds"):
        cut(["/ok", "/" + "x" * 300], 200)
    assert cut([], 200) == []


def test_serialize_registers_each_watcher_under_its_chrooted_path() -> None:
    client = KazooClient(hosts="127.0.0.1:1")  # never connected: the tables exist
    w1, w2 = (lambda ev: None), (lambda ev: None)
    req = SetDataWatches(client, 0x1234, ["/c/a", "/c/b"], [w1, w2])
    client._data_watchers["/c/a"].add(w2)  # one already set stays
    assert req.serialize() == reference_encode(0x1234, ["/c/a", "/c/b"])
    assert client._data_watchers["/c/a"] == {w1, w2}
    assert client._data_watchers["/c/b"] == {w2}
    assert not client._child_watchers
    assert SetDataWatches.deserialize(b"", 0) is True
    assert SetDataWatches.type == 101
    with pytest.raises(ValueError):
        SetDataWatches(client, 1, ["/a"], [])


def test_set_data_watches_queues_one_request_per_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    queued: list[list[SetDataWatches]] = []
    monkeypatch.setattr(set_watches, "call_many", lambda c, reqs: queued.append(reqs) or reqs)
    client = KazooClient(hosts="127.0.0.1:1")
    paths = [f"/c/topic-{i:05d}" for i in range(100)]
    watchers = [lambda ev: None for _ in paths]
    reqs = set_watches.set_data_watches(client, 7, paths, watchers, max_request_bytes=500)
    assert [len(r.paths) for r in reqs] == [len(paths[a:b]) for a, b in cut(paths, 500)]
    assert len(reqs) > 1 and all(r.zxid == 7 for r in reqs)
    assert [p for r in reqs for p in r.paths] == paths
    assert [w for r in reqs for w in r.watchers] == watchers
