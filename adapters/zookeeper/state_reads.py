"""Whole topics' partition state znodes in bulk: ``KazooReadPort.get_states`` (issue 26).

A failover reads every partition's state znode: 1,000,000 of them at 1,000,000 partitions.
Through ``get_many`` each one costs a path string built by the reader, a copy with the chroot in
front, its UTF-8 bytes twice (for the batch cut, then for the request, on kazoo's connection
thread) and a ``ZkNode`` the reader takes apart again: Python steps per partition. Here:

* **requests** are built per topic from its path prefix (``<chroot>/brokers/topics/<t>/
  partitions/``, encoded once) and each partition's tail (``b"12/state"``, built once per
  partition id and read): a run of tails of one length shares the bytes before each tail
  (header, path length, prefix), so the run is one ``join`` with those as the separator; cut into the batches ``cut_batches`` would cut
  from the paths (greedy, at most ``max_batch_paths`` paths and ``max_batch_bytes`` request
  bytes each), computed per topic;
* **replies** (``MultiReadNodes``' parse) are decoded a topic at a time: the data looked up in
  the partition-state memo all at once (``map``), the decoder called only for bytes it has not
  seen; handed as ``StateZnodes`` columns, a topic as soon as its last batch is in.

The same answer as ``states_by_get_many`` (``get_many`` of ``zk_paths.partition_state(t, p)``
for every partition, decoded by ``decode_nodes``), held to it by tests. Used when every path
has the plain form -- a topic name without ``/`` whose path the chroot handling leaves as it
is (``full_path``), partition ids of type ``int`` -- and the server answers ``multiRead``;
otherwise the port reads through ``states_by_get_many``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, groupby, repeat
from operator import add
from typing import TYPE_CHECKING, NamedTuple

from kazoo.client import KazooClient
from kazoo.protocol.serialization import int_struct, multiheader_struct

from adapters.zookeeper.multi_read import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_BATCH_PATHS,
    DEFAULT_MAX_IN_FLIGHT,
    FRAME_OVERHEAD,
    GET_DATA,
    HEADER_BYTES,
    REQUEST_PATH_OVERHEAD,
    Node,
    NodeResult,
    full_path,
    read_prepared,
)
from fsm import zk_paths as P
from fsm.reads.port import StateZnodes

if TYPE_CHECKING:
    from adapters.zookeeper.reads import ZnodeDecoder

_HEAD = multiheader_struct.pack(GET_DATA, False, -1)
_CLOSE = multiheader_struct.pack(-1, True, -1)
_SUFFIX = "0/state"
"""The end of partition 0's state path: what ``partition_state`` puts after the prefix."""
_NODE_ONLY = {Node}
_INT_ONLY = {int}


class TopicPaths(NamedTuple):
    """One topic's state paths as request pieces: ``prefix + tails[i]`` is partition
    ``partitions[i]``'s path (chroot included) followed by the watch flag (``b"\\0"``)."""

    name: str
    partitions: Sequence[int]
    prefix: bytes
    tails: list[bytes]

    def cost(self, lo: int, hi: int) -> int:
        """Request bytes of paths ``[lo, hi)``: header, length, path, watch flag each."""
        fixed = HEADER_BYTES + 4 + len(self.prefix)
        return (hi - lo) * fixed + sum(map(len, self.tails[lo:hi]))

    def body(self, lo: int, hi: int) -> bytes:
        """The requests of paths ``[lo, hi)`` (``MultiReadNodes.serialize`` without the closing
        header). Paths whose tails are as long have the same header, length and prefix before
        the tail: one ``join`` over each run of them (partition ids of as many digits)."""
        prefix = self.prefix
        parts: list[bytes] = []
        for size, run in groupby(self.tails[lo:hi], len):
            lead = _HEAD + int_struct.pack(len(prefix) + size - 1) + prefix
            parts += (lead, lead.join(run))
        return b"".join(parts)


def plain_paths(chroot: str | None, topics: Sequence[tuple[str, Sequence[int]]]
                ) -> list[TopicPaths] | None:
    """Every topic's ``TopicPaths``, or None if some path does not have the plain form."""
    root = chroot or ""
    tails: dict[int, bytes] = {}
    out = []
    for t, ps in topics:
        first = P.partition_state(t, 0)
        if "/" in t or not first.endswith(_SUFFIX) or not set(map(type, ps)) <= _INT_ONLY:
            return None
        try:
            if full_path(chroot, first) != root + first:
                return None
            prefix = (root + first[:-len(_SUFFIX)]).encode("utf-8")
        except (ValueError, UnicodeError):  # the plain read says what is wrong
            return None
        got = list(map(tails.get, ps))
        if not all(got):  # a tail is never empty: None is an id not seen yet
            for i, tail in enumerate(got):
                if tail is None:
                    got[i] = tails[ps[i]] = b"%d/state\0" % ps[i]
        out.append(TopicPaths(t, ps, prefix, got))
    return out


def cut(topics: Sequence[TopicPaths], max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        max_batch_paths: int = DEFAULT_MAX_BATCH_PATHS) -> list[tuple[int, int]]:
    """``cut_batches`` of all the topics' paths in order (``[start, end)`` over them all),
    topic by topic: a topic that fits the batch is taken whole, else as many of its paths as
    fit. A single path too long for any batch raises ValueError."""
    if max_batch_paths < 1:
        raise ValueError(f"max_batch_paths must be at least 1, not {max_batch_paths}")
    base = FRAME_OVERHEAD + HEADER_BYTES
    batches: list[tuple[int, int]] = []
    start = done = count = 0  # the open batch's first path; paths placed; paths in it
    size = base
    for topic in topics:
        n = len(topic.partitions)
        pos = 0
        while pos < n:
            rest = topic.cost(pos, n)
            if count + n - pos <= max_batch_paths and size + rest <= max_batch_bytes:
                count, size, done, pos = count + n - pos, size + rest, done + n - pos, n
                continue
            fixed = REQUEST_PATH_OVERHEAD - 1 + len(topic.prefix)  # the tail holds the flag
            room = min(n - pos, max_batch_paths - count)
            sums = list(accumulate(map(add, repeat(fixed), map(len, topic.tails[pos:pos + room]))))
            take = bisect_right(sums, max_batch_bytes - size)
            if take == 0 and count == 0:
                path = topic.prefix + topic.tails[pos][:-1]
                raise ValueError(f"path {path[:80]!r}... alone exceeds {max_batch_bytes} bytes")
            done, pos = done + take, pos + take
            batches.append((start, done))
            start, count, size = done, 0, base
    if count:
        batches.append((start, done))
    return batches


class Plan:
    """The reads of ``topics``' state paths, numbered in order across the topics: the batches
    (``[start, end)``, ``cut``), and for each the request body and the topics' pieces."""

    def __init__(self, topics: Sequence[TopicPaths],
                 max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                 max_batch_paths: int = DEFAULT_MAX_BATCH_PATHS) -> None:
        self.topics = topics
        self.offsets = list(accumulate((len(t.partitions) for t in topics), initial=0))
        """``offsets[k]``: the number of topic ``k``'s first path."""
        self.batches = cut(topics, max_batch_bytes, max_batch_paths)

    def pieces(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """``(topic index, lo, hi)`` for the paths ``[start, end)``: topic ``k``'s partitions
        ``[lo, hi)``, in order."""
        offsets = self.offsets
        k = bisect_right(offsets, start) - 1
        while k < len(self.topics) and offsets[k] < end:
            lo, hi = max(start, offsets[k]), min(end, offsets[k + 1])
            if lo < hi:
                yield k, lo - offsets[k], hi - offsets[k]
            k += 1

    def body(self, start: int, end: int) -> bytes:
        """The request body reading paths ``[start, end)``."""
        return b"".join(chain([self.topics[k].body(lo, hi) for k, lo, hi in
                               self.pieces(start, end)], (_CLOSE,)))


def read_states(client: KazooClient, decode: ZnodeDecoder, topics: Sequence[TopicPaths], *,
                max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                max_batch_paths: int | None = None,
                max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                timeout: float | None = None) -> Iterator[StateZnodes]:
    """One ``StateZnodes`` per topic, in order, each as soon as its last batch is answered
    (the next batches in flight meanwhile). The client's server answers ``multiRead``."""
    plan = Plan(topics, max_batch_bytes, max_batch_paths or DEFAULT_MAX_BATCH_PATHS)
    ready = 0  # topics handed so far
    datas: list[object] = []
    versions: list[int] = []
    for start, end, replies in read_prepared(client, plan.batches, plan.body,
                                              max_in_flight=max_in_flight, timeout=timeout):
        for k, lo, hi in plan.pieces(start, end):
            while ready < k:  # topics without partitions, in their place
                yield StateZnodes([], [])
                ready += 1
            topic = topics[k]
            first = plan.offsets[k] + lo - start
            got = _columns(decode, topic, lo, replies[first:first + hi - lo])
            if lo == 0 and hi == len(topic.partitions):
                yield got
                ready += 1
                continue
            datas.extend(got.datas)
            versions.extend(got.versions)
            if hi == len(topic.partitions):
                yield StateZnodes(datas, versions)
                ready += 1
                datas, versions = [], []
    while ready < len(topics):
        yield StateZnodes([], [])
        ready += 1


def _columns(decode: ZnodeDecoder, topic: TopicPaths, lo: int,
             replies: Sequence[NodeResult]) -> StateZnodes:
    """The replies for ``topic``'s partitions from ``lo`` on, decoded: what ``decode_nodes``
    gives (a known state's bytes are its memoised value; anything else through the decoder at
    its path), as columns; an absent or unreadable znode is None."""
    memo = decode.decode_state.memo
    if set(map(type, replies)) <= _NODE_ONLY:
        raw, versions, _czxids = zip(*replies, strict=True) if replies else ((), (), ())
        datas: list[object] = list(map(memo.get, raw))
        if not all(datas):  # values are always true: a None is bytes not seen yet
            for i, value in enumerate(datas):
                if value is None:
                    datas[i] = decode(P.partition_state(topic.name, topic.partitions[lo + i]),
                                      raw[i])
        return StateZnodes(datas, versions)
    datas, version_list = [], []
    for i, r in enumerate(replies, lo):
        if type(r) is Node:
            value = memo.get(r.data)
            if value is None:
                value = decode(P.partition_state(topic.name, topic.partitions[i]), r.data)
            datas.append(value)
            version_list.append(r.version)
        else:
            datas.append(None)
            version_list.append(-1)
    return StateZnodes(datas, version_list)
