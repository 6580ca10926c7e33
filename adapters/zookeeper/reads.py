"""The live read port: ``fsm.reads`` over kazoo, the znode data decoded by Kafka's codecs.

What ZooKeeper data becomes which event -- which reads a marker needs, order, absent znodes,
malformed data -- is ``fsm.reads`` (``materialize``), the very code the checker's world runs
over its in-memory ZooKeeper. This module only binds it to a real ensemble:

* ``KazooReadPort`` -- ``fsm.reads.ReadPort``: ``get`` (an exists watch first when asked, so it
  fires on creation as well), ``children``, ``get_many`` (bulk reads through ``multi_read``:
  ZooKeeper 3.6+ ``multiRead``, size-bounded batches, several in flight; pipelined
  ``get_async`` on older servers). The watches of a bulk read are queued before its reads:
  data watches by ``setWatches`` relative to the client's last zxid (``set_watches``: a
  few requests for 10,000 topics, every change after that zxid notified, at once if it came
  before the request; the module's docstring has the argument), or, for a marker that a
  creation queues (a ``setWatches`` data watch does not watch an absent znode), one
  ``exists`` each, queued at once with ``call_many``. Data is decoded here: a znode the
  codecs refuse comes out as ``Malformed(reason)`` (the reason names the path), which the
  reader skips and reports (``ZnodeDecoder``). Partition state bytes decode through a small memo
  (``PartitionStateDecoder``): the same bytes recur across thousands of partitions, decoding is
  a pure function of them, and equal bytes give one value (the reader then shares one
  ``PartitionStateZk`` among the partitions that also share the version).
* ``ZkReader`` -- the reads by name for the event thread, the broker process and the tools,
  each malformed znode logged as one ERROR line naming the path and the reason.

Watches: ``watch(kind, arg)`` gives the kazoo watcher for a marker (``fsm.reads.markers``), or
None for no watch; the port asks it for the marker of the path's row (``marker_for``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from itertools import repeat
from typing import Any, NamedTuple

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.serialization import Exists

from adapters.zookeeper import codec
from adapters.zookeeper.codec import ZnodeDecodeError
from adapters.zookeeper.codec import paths as codec_paths
from adapters.zookeeper.codec.decoders import decode_partition_state
from adapters.zookeeper.multi_read import (
    DEFAULT_MAX_IN_FLIGHT,
    Node,
    call_many,
    full_path,
    full_paths,
    probe_multi_read,
    read_nodes,
)
from adapters.zookeeper.set_watches import set_data_watches
from adapters.zookeeper.state_reads import plain_paths, read_states
from fsm import reads
from fsm.events import BrokerMetadataLoaded, ControllerChange
from fsm.reads import Malformed, Marker, marker_for
from fsm.reads.markers import CREATED, MARKERS
from fsm.reads.port import StateZnodes, states_by_get_many
from fsm.values import BrokerInfo, ClusterSnapshot, LeaderAndIsr

log = logging.getLogger("kcontrol.zk.reads")

Watch = Callable[[str, str], Callable[[Any], None] | None]
"""``watch(kind, arg)`` -> the kazoo watcher to register, or None."""

UNKNOWN_CONTROLLER = reads.UNKNOWN_CONTROLLER


def no_watch(kind: str, arg: str = "") -> None:
    return None


class ZkNode(NamedTuple):
    """A znode as the port hands it: decoded data, data version, creation zxid."""

    data: object
    version: int
    czxid: int


_EXPECTED_BYTES = {codec_paths.TOPIC: 4096}
"""A bulk read's expected znode size by kind (batches sized for it; others: the default)."""


class PartitionStateDecoder:
    """``decode`` of partition state bytes, memoised by the bytes (bounded): equal bytes give
    the very same value."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self._memo: dict[bytes, LeaderAndIsr] = {}
        self._max = max_entries

    @property
    def memo(self) -> dict[bytes, LeaderAndIsr]:
        """Bytes -> the value ``__call__`` gave for them (read it, never write it)."""
        return self._memo

    def __call__(self, path: str, data: bytes) -> LeaderAndIsr:
        li = self._memo.get(data)
        if li is None:
            li = decode_partition_state(path, data)
            if len(self._memo) >= self._max:
                self._memo.clear()
            self._memo[data] = li
        return li


class ZnodeDecoder:
    """A znode's bytes -> its value (``codec.decode``), or ``Malformed`` with the codec's
    reason: what the port hands the reader."""

    def __init__(self) -> None:
        self.decode_state = PartitionStateDecoder()

    def __call__(self, path: str, data: bytes | None) -> object:
        try:
            if data is not None and _is_partition_state(path):
                # paths built by ``zk_paths.partition_state`` for topics whose znode decoded
                # (legal names): the codec itself, without classifying the path
                return self.decode_state(path, data)
            return codec.decode(path, data)
        except ZnodeDecodeError as exc:
            return Malformed(str(exc))


def _is_partition_state(path: str) -> bool:
    """``/brokers/topics/<t>/partitions/<p>/state`` (the reader builds no other path ending
    so: a topic name holds no ``/``)."""
    return path.endswith("/state") and path.count("/") == 6


def decode_nodes(decode: ZnodeDecoder, paths: Sequence[str], start: int,
                 replies: Sequence[object], out: list[ZkNode | None]) -> None:
    """``out[i] = ZkNode(decode(paths[i], data), version, czxid)`` for each reply ``Node`` at
    ``i = start, start + 1, ...``; anything else (absent, unreadable) leaves None.

    What ``decode`` gives, with shortcuts for the bulk of a failover (1,000,000 partition
    states at 1,000,000 partitions): bytes the partition state memo already holds, at a
    partition state path, are its value -- no call, no path classification. A batch of such
    znodes only (every reply a ``Node``, every path a partition state path, every data in the
    memo: checked with C-level calls over the batch) is built without a Python step per znode;
    else znode by znode, one dict lookup each."""
    memo = decode.decode_state.memo
    new = tuple.__new__
    n = len(replies)
    if n and _all_nodes(replies) and _all_state_paths(paths[start:start + n]):
        datas, versions, czxids = zip(*replies, strict=True)
        values = list(map(memo.get, datas))
        if all(values):  # no None: the memo's values are LeaderAndIsr (always true)
            out[start:start + n] = map(new, repeat(ZkNode), zip(values, versions, czxids,
                                                                strict=True))
            return
    for i, r in enumerate(replies, start):
        if type(r) is Node:
            data = r[0]
            path = paths[i]
            value = memo.get(data)
            if value is None or path[-6:] != "/state" or path.count("/") != 6:
                value = decode(path, data)
            out[i] = new(ZkNode, (value, r[1], r[2]))


_NODE_ONLY = {Node}


def _all_nodes(replies: Sequence[object]) -> bool:
    return set(map(type, replies)) == _NODE_ONLY


def _all_state_paths(paths: Sequence[str]) -> bool:
    """Every path ``_is_partition_state`` (C-level calls over all of them)."""
    return all(map(str.endswith, paths, repeat("/state"))) \
        and set(map(str.count, paths, repeat("/"))) == {6}


class KazooReadPort:
    """``fsm.reads.ReadPort`` over a kazoo client; ``watcher`` gives the watch callbacks."""

    set_watches = True
    """Bulk data watches by ``setWatches`` where they apply (False: one ``exists`` each; the
    benchmarks compare the two)."""

    def __init__(self, client: KazooClient, timeout: float | None = None,
                 watcher: Watch = no_watch, decode: ZnodeDecoder | None = None) -> None:
        self.client = client
        self.timeout = timeout
        self.watcher = watcher
        self.decode = decode if decode is not None else ZnodeDecoder()
        self.max_in_flight = DEFAULT_MAX_IN_FLIGHT
        """``multiRead`` batches in flight at once."""
        self.max_batch_paths: int | None = None
        """Paths per ``multiRead`` batch (None: ``multi_read``'s default, sized by kind)."""
        """Bulk data watches by ``setWatches`` where they apply (False: one ``exists`` each)."""

    def _watch_for(self, path: str) -> Callable[[Any], None] | None:
        marker = marker_for(path)
        if marker is None:
            raise ValueError(f"{path}: no marker watches it (fsm.reads.markers.MARKERS)")
        return self.watcher(marker.kind, marker.arg)

    def get(self, path: str, watch: bool = False) -> ZkNode | None:
        c = self.client
        w = self._watch_for(path) if watch else None
        try:
            if w is not None and c.exists(path, watch=w) is None:
                return None
            data, stat = c.get(path)
        except NoNodeError:
            return None
        return ZkNode(self.decode(path, data), stat.version, stat.czxid)

    def children(self, path: str, watch: bool = False) -> list[str]:
        try:
            return self.client.get_children(path, watch=self._watch_for(path) if watch
                                            else None)
        except NoNodeError:
            return []

    def get_many(self, paths: Sequence[str], watch: bool = False) -> list[ZkNode | None]:
        """The znodes, decoded batch by batch as the answers arrive (the next batches are in
        flight meanwhile). With ``watch``: the watches are queued first (requests on a session
        are served in order, so every read sees its znode with the watch set; a change between
        the two fires it: re-read, never lost) -- data watches in a few ``setWatches``
        requests (``set_watches``) when the markers ignore creation, else an ``exists`` per
        path."""
        paths = list(paths)
        pending = self._watch_many(paths) if watch else []
        out: list[ZkNode | None] = [None] * len(paths)
        if paths:
            expected = _EXPECTED_BYTES.get(codec_paths.classify(paths[0]) or "")
            for start, _end, replies in read_nodes(
                    self.client, paths, max_batch_paths=self.max_batch_paths,
                    timeout=self.timeout, expected_znode_bytes=expected,
                    max_in_flight=self.max_in_flight):
                decode_nodes(self.decode, paths, start, replies, out)
        for r in pending:
            r.get(timeout=self.timeout)
        return out

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterator[StateZnodes]:
        """The state znodes of whole topics (``state_reads``: requests built per topic, the
        answers handed as columns), or by ``get_many`` of their paths where those do not have
        the plain form or the server has no ``multiRead``."""
        if not topics:
            return iter(())
        plain = plain_paths(self.client.chroot, topics)
        if plain is None or not probe_multi_read(self.client, self.timeout):
            return states_by_get_many(self, topics)
        return read_states(self.client, self.decode, plain, max_batch_paths=self.max_batch_paths,
                           max_in_flight=self.max_in_flight, timeout=self.timeout)

    def _watch_many(self, paths: list[str]) -> list[Any]:
        chroot = self.client.chroot
        watched: list[str] = []
        watchers: list[Callable[[Any], None]] = []
        creation = False  # a marker that a creation queues: setWatches would not watch it
        for p in paths:
            marker = marker_for(p)
            if marker is None:
                raise ValueError(f"{p}: no marker watches it (fsm.reads.markers.MARKERS)")
            w = self.watcher(marker.kind, marker.arg)
            if w is not None:
                watched.append(p)
                watchers.append(w)
                creation = creation or CREATED in MARKERS[marker.kind].queued_on
        zxid = self.client.last_zxid
        if watched and not creation and zxid > 0 and self.set_watches:
            return set_data_watches(self.client, zxid, full_paths(chroot, watched), watchers)
        return call_many(self.client, [Exists(full_path(chroot, p), w)
                                       for p, w in zip(watched, watchers, strict=True)])

class ZkReader:
    """The reads of one kazoo client (``fsm.reads`` over a ``KazooReadPort``): every malformed
    znode skipped is logged as one ERROR line."""

    def __init__(self, client: KazooClient, timeout: float | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.client = client
        self.timeout = timeout
        self.log = logger or log
        self.decode = ZnodeDecoder()

    def port(self, watch: Watch = no_watch) -> KazooReadPort:
        return KazooReadPort(self.client, self.timeout, watch, self.decode)

    def _logged(self, read: reads.Read) -> Any:
        for reason in read.bad:
            self.log.error("malformed znode: %s", reason)
        return read.value

    def materialize(self, marker: Marker, *, active: bool,
                    known_topics: Collection[str] = frozenset(),
                    watch: Watch = no_watch) -> object | None:
        """The event ``marker`` stands for (``fsm.reads.materialize``), None: nothing to hand."""
        return self._logged(reads.materialize(self.port(watch), marker, active=active,
                                              known_topics=known_topics))

    def controller_change(self, watch: Watch = no_watch) -> ControllerChange:
        return self._logged(reads.controller_change(self.port(watch), watch is not no_watch))

    def live_brokers(self) -> tuple[BrokerInfo, ...]:
        return self._logged(reads.live_brokers(self.port()))  # type: ignore[no-any-return]

    def cluster_snapshot(self, watch: Watch = no_watch) -> ClusterSnapshot:
        return self._logged(reads.cluster_snapshot(self.port(watch), watch is not no_watch))

    def broker_metadata(self) -> BrokerMetadataLoaded:
        return self._logged(reads.broker_metadata(self.port()))  # type: ignore[no-any-return]


__all__ = [
    "UNKNOWN_CONTROLLER", "KazooReadPort", "decode_nodes", "PartitionStateDecoder", "Watch", "ZkNode",
    "ZkReader", "ZnodeDecoder", "no_watch",
]
