"""Whole topics' state znodes in bulk (``state_reads``) give what reading their paths gives.

The requests and batches are held to ``MultiReadNodes`` over the paths ``zk_paths`` builds
(with the chroot in front, ``full_paths``) and to ``cut_batches``; the decoded columns to
``decode_nodes``; the paths it will not build to ``None`` (the port then reads path by path).
The whole read against a real ensemble is in ``tests/integration/zookeeper/test_bulk_states_ensemble.py``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.exceptions import NoAuthError, NoNodeError

from adapters.zookeeper import multi_read
from adapters.zookeeper.codec.encoders import encode_partition_state
from adapters.zookeeper.reads import ZkNode, ZnodeDecoder, decode_nodes
from adapters.zookeeper.state_reads import Plan, _columns, plain_paths
from fsm import zk_paths
from fsm.values import LeaderAndIsr

NAMES = ["t", "topic-00001", "a.b_c", "é", ".hidden", "x" * 200]
PARTITIONS = st.lists(st.one_of(st.integers(0, 12), st.integers(0, 2**31 - 1)), unique=True,
                      max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), PARTITIONS), max_size=6),
       st.sampled_from(["", "/c", "/bench-million-1795779625", "/a/b"]),
       st.integers(1, 60), st.integers(600, 6000))
def test_requests_and_batches_are_those_of_the_paths(topics, chroot, max_paths, max_bytes) -> None:
    plain = plain_paths(chroot, topics)
    assert plain is not None
    full = multi_read.full_paths(chroot, [zk_paths.partition_state(t, p)
                                          for t, ps in topics for p in ps])
    plan = Plan(plain, max_bytes, max_paths)
    assert plan.batches == multi_read.cut_batches(full, max_bytes, max_paths)
    for start, end in plan.batches:
        assert plan.body(start, end) == multi_read.MultiReadNodes(full[start:end]).serialize()
        pieces = list(plan.pieces(start, end))
        assert [(topics[k][0], p) for k, lo, hi in pieces for p in topics[k][1][lo:hi]] == \
            [(t, p) for t, ps in topics for p in ps][start:end]


def test_a_path_too_long_for_any_batch_is_refused_as_the_cut_refuses_it() -> None:
    plain = plain_paths("", [("t", [1, 2]), ("x" * 300, [0])])
    assert plain is not None
    with pytest.raises(ValueError, match="alone exceeds"):
        Plan(plain, 300, 10)
    with pytest.raises(ValueError, match="alone exceeds"):
        multi_read.cut_batches([zk_paths.partition_state("x" * 300, 0)], 300, 10)


@pytest.mark.parametrize(("chroot", "topics"), [
    ("", [("a/b", [0])]),  # a name with a slash: not a state path of the reader's
    ("/c/", [("t", [0])]),  # a chroot kazoo normalises
    ("c", [("t", [0])]),
    ("", [("t", [True])]),  # ids that are not ints
    ("", [("t", [1.0])]),
    ("", [("t", [0]), ("..", [0])]),  # kazoo refuses the path: the plain read says so
    ("", [("\udc80", [0])]),  # not UTF-8-encodable
])
def test_paths_without_the_plain_form_are_left_to_the_plain_read(chroot, topics) -> None:
    assert plain_paths(chroot, topics) is None


def _state(rng: random.Random) -> bytes:
    li = LeaderAndIsr(rng.randrange(-1, 4), rng.randrange(3), tuple(rng.sample(range(5), 2)),
                      rng.randrange(2))
    raw = encode_partition_state("/p", li)
    return rng.choice([raw, raw, raw, b"{" + raw, raw.replace(b"1", b"1.0", 1)])


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_columns_are_what_decode_nodes_gives(rng: random.Random) -> None:
    """Known and new state bytes, malformed ones, absent and unreadable znodes: the columns
    hold ``decode_nodes``' data and version (None and -1 where it leaves None)."""
    pool = [_state(rng) for _ in range(5)]
    ps = rng.sample(range(1000), rng.randrange(1, 30))
    plain = plain_paths("/c", [("t", ps)])
    assert plain is not None
    lo = rng.randrange(len(ps))
    replies: list[object] = []
    for i in range(lo, len(ps)):
        how = rng.randrange(8)
        if how == 0:
            replies.append(rng.choice([NoNodeError(), NoAuthError()]))
        else:
            replies.append(multi_read.Node(rng.choice(pool), rng.randrange(4), i))
    fast, plain_decoder = ZnodeDecoder(), ZnodeDecoder()
    for raw in pool[:rng.randrange(len(pool) + 1)]:  # some bytes known already, to both
        fast(zk_paths.partition_state("t", 0), raw)
        plain_decoder(zk_paths.partition_state("t", 0), raw)
    paths = [zk_paths.partition_state("t", p) for p in ps]
    want: list[ZkNode | None] = [None] * len(ps)
    decode_nodes(plain_decoder, paths, lo, replies, want)
    got = _columns(fast, plain[0], lo, replies)  # type: ignore[arg-type]
    assert list(got.datas) == [None if n is None else n.data for n in want[lo:]]
    assert list(got.versions) == [-1 if n is None else n.version for n in want[lo:]]
    # equal bytes give the very same value (the reader shares states by it)
    for i, a in enumerate(got.datas):
        for j, b in enumerate(got.datas):
            ra, rb = replies[i], replies[j]
            if type(ra) is type(rb) is multi_read.Node and ra.data == rb.data \
                    and isinstance(a, LeaderAndIsr):
                assert a is b
