"""Data watches on many znodes in one request: ZooKeeper's ``setWatches`` (opcode 101).

A failover reads 10,000 topic znodes and must watch every one of them for data changes (the
``topic`` marker: ``fsm.reads.markers``). One ``exists`` request per topic costs kazoo a Python
round of work per request and per reply on its connection thread (~100 us each, 1-2 s of a
1,000,000-partition load). ``setWatches`` sets them all with a few requests: it is what a
ZooKeeper client sends after reconnecting to re-arm its watches, and servers accept it at any
time in a session (kazoo itself never sends it).

Semantics (the server's ``DataTree.setWatches``): with a *relative zxid* ``R``, for each path
in the request's data-watch list the server

* fires ``NodeDataChanged`` at once if the znode's last modification is newer than ``R``
  (``mzxid > R``), and sets no watch;
* fires ``NodeDeleted`` at once if the znode does not exist, and sets no watch;
* else sets a data watch, which fires on the next change or deletion.

So the watch behaves as if it had been set at zxid ``R``: every change with a zxid above ``R``
is notified, either at once or when it happens.

**Why no change is lost** (``set_data_watches`` then the reads, as ``KazooReadPort.get_many``
does). Two arguments, each enough on its own:

1. *Order.* The ``setWatches`` requests are queued before the reads on the same session, and a
   server answers a session's requests in order: every watch is set (or has fired) before its
   znode is read -- as with an ``exists`` before a read. A change the read does not see is
   applied after it, so after the watch was set: it fires.
2. *Relative zxid.* ``R`` is the client's ``last_zxid`` when the requests are queued: the zxid
   in the header of the last reply it received, when the serving server had applied every
   transaction up to ``R``. The reads come later on the same session, served by that server
   (which applies transactions in zxid order) or, after a reconnection, by one at least as far
   (ZooKeeper refuses a client a server that is behind it); so they see every change up to
   ``R``, and a change they do not see has a zxid above ``R``: fired at once if the znode
   changed before the ``setWatches`` arrived (``mzxid > R``), else when it happens. This holds
   whatever the order of watches and reads.

A change the reads did see may fire too (a zxid above ``R``, before the read): one redundant
re-read, as with an ``exists`` watch set before a read. A connection lost meanwhile fails the
pending requests (the load is read again) and makes kazoo call every watcher with a ``NONE``
event. ``tests/integration/zookeeper/test_set_watches_ensemble.py`` and
``tests/integration/runtime/test_runtime_topics.py`` hold both on the real ensemble.

**Where kazoo learns the watchers.** kazoo delivers a notification to the callables in its
``_data_watchers[path]`` (chrooted path) and pops them. They are added by the request's
``serialize``, which kazoo's connection thread calls right before sending it: a notification
can only follow the request, and it is read by that same thread, so no notification can come
before its watcher is known (nor race a connection reset, which runs on that thread too).

Difference from an ``exists`` watch: a znode absent when ``setWatches`` arrives gets no watch
(an ``exists`` watch would fire on its creation). Callers use it only for watches whose marker
ignores ``NodeCreated`` (``KazooReadPort.get_many`` checks the marker's row).

Size: a request is bounded like a ``multiRead`` (under the server's ``jute.maxbuffer``):
the paths are cut into several requests when needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, repeat
from operator import add
from typing import Any

from kazoo.client import KazooClient
from kazoo.protocol.serialization import int_struct, long_struct

from adapters.zookeeper.multi_read import DEFAULT_MAX_BATCH_BYTES, FRAME_OVERHEAD, call_many

OPCODE = 101
REQUEST_OVERHEAD = FRAME_OVERHEAD + 8 + 3 * 4  # frame, relative zxid, three vector lengths
PATH_OVERHEAD = 4  # a path's length prefix

Watcher = Callable[[Any], None]


class SetDataWatches:
    """One ``setWatches`` request: data watches on ``paths`` (chrooted) relative to ``zxid``,
    each path's watcher registered in kazoo's table when the request is serialized."""

    type = OPCODE
    __slots__ = ("client", "paths", "watchers", "zxid")

    def __init__(self, client: KazooClient, zxid: int, paths: Sequence[str],
                 watchers: Sequence[Watcher]) -> None:
        if len(paths) != len(watchers):
            raise ValueError(f"{len(paths)} paths but {len(watchers)} watchers")
        self.client = client
        self.zxid = zxid
        self.paths = paths
        self.watchers = watchers

    def serialize(self) -> bytes:
        table = self.client._data_watchers  # the connection thread's: see the module docstring
        for path, w in zip(self.paths, self.watchers, strict=True):
            table[path].add(w)
        return encode(self.zxid, self.paths)

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> bool:
        return True  # the reply is a header only

    def __repr__(self) -> str:
        return f"SetDataWatches(zxid={self.zxid:#x}, {len(self.paths)} paths)"


def encode(zxid: int, data_paths: Sequence[str]) -> bytes:
    """The request body: ``relativeZxid``, the data watches, empty exist and child watch
    lists. Joined at C level (no Python step per path)."""
    encoded = list(map(str.encode, data_paths))
    lengths = map(int_struct.pack, map(len, encoded))
    return b"".join(chain((long_struct.pack(zxid), int_struct.pack(len(encoded))),
                          chain.from_iterable(zip(lengths, encoded, strict=True)),
                          (int_struct.pack(0), int_struct.pack(0))))


def cut(full_paths: Sequence[str], max_request_bytes: int = DEFAULT_MAX_BATCH_BYTES
        ) -> list[tuple[int, int]]:
    """``[start, end)`` ranges, each a request of at most ``max_request_bytes`` framed bytes;
    a path too long for any request raises ValueError."""
    if not full_paths:
        return []
    costs = list(map(add, map(len, map(str.encode, full_paths)), repeat(PATH_OVERHEAD)))
    room = max_request_bytes - REQUEST_OVERHEAD
    if max(costs) > room:
        path = full_paths[costs.index(max(costs))]
        raise ValueError(f"path {path[:80]!r}... alone exceeds {max_request_bytes} bytes")
    out: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, cost in enumerate(costs):
        if size + cost > room:
            out.append((start, i))
            start, size = i, 0
        size += cost
    out.append((start, len(full_paths)))
    return out


def set_data_watches(client: KazooClient, zxid: int, full_paths: Sequence[str],
                     watchers: Sequence[Watcher],
                     max_request_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> list[Any]:
    """Queue ``setWatches`` requests setting a data watch on every path (chrooted), relative to
    ``zxid``; their async results (each ``True``, or the failure: connection loss...)."""
    requests = [SetDataWatches(client, zxid, full_paths[a:b], watchers[a:b])
                for a, b in cut(full_paths, max_request_bytes)]
    return call_many(client, requests)
