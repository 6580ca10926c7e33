"""Small immutable pieces of the world's state."""

from __future__ import annotations

from typing import NamedTuple

from fsm import zk_paths as P
from fsm.effects import ZkWrite


class Proc(NamedTuple):
    """A broker process: whether it runs, its two ZooKeeper sessions (0 = none), whether
    its broker session expired without the broker core knowing yet (a GC pause), whether
    it stopped because its controlled shutdown was answered "done" (until it starts again),
    whether the ZooKeeper connection of its broker / controller session is lost (the
    session lives on in the ensemble until it reconnects or expires), and the broker's
    deferred ZooKeeper I/O (``broker_io``: "load" or "register", done by a ``broker-io``
    step once connected -- the live broker retries a read or registration that failed on a
    lost connection, and meanwhile handles other events: a SIGTERM, a kill)."""

    up: bool = False
    started: bool = False
    broker_session: int = 0
    controller_session: int = 0
    session_lost: bool = False
    shut_down: bool = False
    broker_disconnected: bool = False
    controller_disconnected: bool = False
    broker_io: str = ""


class Marker(NamedTuple):
    """A queued controller event whose data the event thread reads when it processes it
    (as Kafka's ``ControllerEvent``s for watches do): ``kind`` is one of ``MARKERS``."""

    kind: str
    arg: str = ""

    def describe(self) -> str:
        return f"{self.kind}({self.arg})" if self.arg else self.kind


class PendingWrite(NamedTuple):
    """A controller ``ZkWrite`` decided and not committed yet, with the session it uses."""

    write: ZkWrite
    session: int


CONTROLLER = "controller"
BROKERS = "brokers"
TOPICS = "topics"
TOPIC = "topic"
DELETE_TOPICS = "delete-topics"
REASSIGN = "reassign"
PREFERRED = "preferred"
ISR_CHANGE = "isr-change"
LOAD = "load"

WATCHED_PATHS = {
    P.CONTROLLER: CONTROLLER,
    P.BROKER_IDS: BROKERS,
    P.TOPICS: TOPICS,
    P.DELETE_TOPICS: DELETE_TOPICS,
    P.REASSIGN_PARTITIONS: REASSIGN,
    P.PREFERRED_REPLICA_ELECTION: PREFERRED,
    P.ISR_CHANGE_NOTIFICATION: ISR_CHANGE,
}


def marker_for(path: str) -> Marker | None:
    """The marker a notification on ``path`` queues; one object per path (memoised: the
    codec's encodings of shared objects are memo hits)."""
    hit = _MARKERS.get(path, False)
    if hit is False:
        hit = _marker_for(path)
        if len(_MARKERS) >= 10_000:
            _MARKERS.clear()
        _MARKERS[path] = hit
    return hit  # type: ignore[return-value]


_MARKERS: dict[str, Marker | None] = {}
LOAD_MARKER = Marker(LOAD)
CONTROLLER_MARKER = Marker(CONTROLLER)


def _marker_for(path: str) -> Marker | None:
    kind = WATCHED_PATHS.get(path)
    if kind is not None:
        return Marker(kind)
    prefix = P.TOPICS + "/"
    if path.startswith(prefix) and "/" not in path[len(prefix):]:
        return Marker(TOPIC, path[len(prefix):])
    return None
