"""One reader: ZooKeeper data -> the cores' events, for the live service and the checker's world.

* ``markers`` -- the one table of watches and markers (``MARKERS``): which watch queues which
  "re-read X" marker, on which notifications, and what it becomes;
* ``port`` -- ``ReadPort``, the few reads the reader needs (get, children, bulk get; with or
  without a watch), and ``Malformed``, the port's value for data that does not decode;
* ``reader`` -- ``materialize`` (a queued marker -> its event) and the reads it is made of.

The live service reads through ``adapters.zookeeper.reads.KazooReadPort`` (kazoo, the znode
codecs), the world through ``model_check.world.reads.WorldReadPort`` (the in-memory ZooKeeper).
"""

from fsm.reads.markers import (
    CONTROLLER_MARKER,
    CONTROLLER_ONLY,
    LOAD_MARKER,
    MARKERS,
    Marker,
    MarkerKind,
    marker_for,
    notified,
    queues,
    survives_resignation,
)
from fsm.reads.port import Malformed, Node, ReadPort
from fsm.reads.reader import (
    UNKNOWN_CONTROLLER,
    Read,
    broker_metadata,
    cluster_snapshot,
    controller_change,
    live_brokers,
    materialize,
)

__all__ = [
    "CONTROLLER_MARKER", "CONTROLLER_ONLY", "LOAD_MARKER", "MARKERS", "UNKNOWN_CONTROLLER",
    "Malformed", "Marker", "MarkerKind", "Node", "Read", "ReadPort", "broker_metadata",
    "cluster_snapshot", "controller_change", "live_brokers", "marker_for", "materialize",
    "notified", "queues", "survives_resignation",
]
