"""The read port: what ``fsm.reads`` needs of a ZooKeeper client, and nothing more.

Two implementations: ``adapters.zookeeper.reads.KazooReadPort`` (a real ensemble through kazoo,
the data decoded by Kafka's znode codecs) and ``model_check.world.reads.WorldReadPort`` (the
checker's in-memory ZooKeeper, whose znodes hold the values themselves).

**Decoding is the port's.** A node's ``data`` is the decoded value (``fsm.values`` /
``fsm.znodes``), or ``Malformed(reason)`` when the bytes are not what Kafka writes there: the
codec runs where the bytes are, and the reader sees values only. The reader checks every
value's type and skips -- with a reason -- anything that is not the value the path holds, so
bad data gives a clear rejection and nothing raises.

**Watches.** ``watch=True`` sets the watch of the path's row in ``fsm.reads.markers.MARKERS``
(the port finds the marker with ``marker_for(path)``): ``get`` an exists watch (it fires on
creation too), ``children`` a child watch (none on an absent znode, as ZooKeeper's
``getChildren`` fails there), ``get_many`` an exists watch on each path, set before the reads.

**Partition states in bulk.** ``get_states`` reads the state znodes of whole topics (a failover
reads every partition's: 1,000,000 at 1,000,000 partitions) and hands them as columns, one
``StateZnodes`` per topic -- what ``get_many`` of their paths gives, in a shape the reader and
a port can handle without a Python step per partition. ``states_by_get_many`` is that method
for a port with nothing better (the world's).

A port raises only what its client raises on a lost connection or session (the adapter holds
the marker and reads again later); an absent znode is None / no children, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from fsm import zk_paths as P


@dataclass(frozen=True, slots=True)
class Malformed:
    """A znode's data that does not decode: ``reason`` names the path and the fault."""

    reason: str


class Node(Protocol):
    """A znode as read: its decoded data, data version and creation zxid."""

    @property
    def data(self) -> object: ...

    @property
    def version(self) -> int: ...

    @property
    def czxid(self) -> int: ...


class ReadPort(Protocol):
    def get(self, path: str, watch: bool = False) -> Node | None:
        """``getData`` (None: absent); ``watch``: an exists watch, set first."""
        ...

    def children(self, path: str, watch: bool = False) -> Sequence[str]:
        """``getChildren``, in any order (empty: absent); ``watch``: a child watch."""
        ...

    def get_many(self, paths: Sequence[str], watch: bool = False) -> Sequence[Node | None]:
        """``get`` of every path (a bulk read), in the order of ``paths``."""
        ...

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterable[StateZnodes]:
        """For each ``(topic, partitions)`` in order, the state znodes of those partitions
        (``zk_paths.partition_state``): ``get_many`` of their paths, as columns. No watches."""
        ...


class StateZnodes(NamedTuple):
    """The state znodes of one topic's partitions, in the order asked: each one's decoded
    data (None: the znode is absent) and data version (meaningless where the data is None)."""

    datas: Sequence[object]
    versions: Sequence[int]


def states_by_get_many(port: ReadPort, topics: Sequence[tuple[str, Sequence[int]]]
                       ) -> Iterator[StateZnodes]:
    """``ReadPort.get_states`` by one ``get_many`` of every path."""
    paths = [P.partition_state(t, p) for t, ps in topics for p in ps]
    nodes = port.get_many(paths)
    if len(nodes) != len(paths):
        raise ValueError(f"get_many answered {len(nodes)} znodes for {len(paths)} paths")
    start = 0
    for _t, ps in topics:
        chunk = nodes[start:start + len(ps)]
        start += len(ps)
        yield StateZnodes([None if n is None else n.data for n in chunk],
                          [-1 if n is None else n.version for n in chunk])
