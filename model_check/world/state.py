"""Small immutable pieces of the world's state."""

from __future__ import annotations

from typing import NamedTuple

from fsm.effects import ZkWrite
from fsm.reads.markers import (  # noqa: F401 -- the world's names for the one table's
    BROKERS,
    CONTROLLER,
    CONTROLLER_MARKER,
    DELETE_TOPICS,
    ISR_CHANGE,
    LOAD,
    LOAD_MARKER,
    PREFERRED,
    REASSIGN,
    TOPIC,
    TOPICS,
    Marker,
)


class Proc(NamedTuple):
    """A broker process: whether it runs, its two ZooKeeper sessions (0 = none), whether
    its broker session expired without the broker core knowing yet (a GC pause), whether
    it stopped because its controlled shutdown was answered "done" (until it starts again),
    whether the ZooKeeper connection of its broker / controller session is lost (the
    session lives on in the ensemble until it reconnects or expires), and the broker's
    deferred ZooKeeper I/O (``broker_io``: "load" or "register", done by a ``broker-io``
    step once connected -- the live broker retries a read or registration that failed on a
    lost connection, and meanwhile handles other events: a SIGTERM, a kill). ``forgotten``:
    the brokers whose channel its controller candidate removed and that its channel manager
    was not told of again since (``adapters.network.channel_manager``: a request to one of
    them is dropped as "unknown broker"), sorted; a new process knows nothing to forget."""

    up: bool = False
    started: bool = False
    broker_session: int = 0
    controller_session: int = 0
    session_lost: bool = False
    shut_down: bool = False
    broker_disconnected: bool = False
    controller_disconnected: bool = False
    broker_io: str = ""
    forgotten: tuple[int, ...] = ()


class PendingWrite(NamedTuple):
    """A controller ``ZkWrite`` decided and not committed yet, with the session it uses."""

    write: ZkWrite
    session: int
