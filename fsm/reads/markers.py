"""The watch markers: which znode watch queues which "re-read X" marker -- the one table.

A watch on a controller's ZooKeeper session does not carry data: when it fires, the adapter
queues a ``Marker`` on the controller's event queue, and the event thread reads what the event
needs when it gets to it (``fsm.reads.materialize``), re-registering the watch -- Kafka's
``ControllerEvent``s for watches. The live service (kazoo watchers) and the checker's world
(the in-memory ZooKeeper's notifications) both take the kinds, the watched paths, which
notifications count and which markers a resigning controller drops from ``MARKERS`` below.

Notifications are named as ZooKeeper's ``Watcher.Event.EventType`` names them (the world's
ZooKeeper uses these names; the live adapter maps kazoo's ``EventType`` onto them). A client
that loses its connection calls every watcher at once (kazoo's ``NONE`` event): each queues
its marker whatever the table says, so everything watched is read again after reconnecting.
"""

from __future__ import annotations

from typing import NamedTuple

from fsm import zk_paths as P

# ---------------------------------------------------------------- notification kinds

CREATED = "NodeCreated"
DELETED = "NodeDeleted"
CHANGED = "NodeDataChanged"
CHILDREN = "NodeChildrenChanged"
ANY = frozenset({CREATED, DELETED, CHANGED, CHILDREN})

# ---------------------------------------------------------------- watch kinds

EXISTS = "exists"
"""A data watch set with ``exists``/``getData``: fires on creation, deletion and data change,
also when the znode was absent when it was set."""
GET_CHILDREN = "children"
"""A child watch (``getChildren``): fires when a child is created or deleted (and when the
znode itself is deleted); none is set on an absent znode."""
NO_WATCH = ""

# ---------------------------------------------------------------- marker kinds

CONTROLLER = "controller"
BROKERS = "brokers"
TOPICS = "topics"
TOPIC = "topic"
DELETE_TOPICS = "delete-topics"
REASSIGN = "reassign"
PREFERRED = "preferred"
ISR_CHANGE = "isr-change"
LOAD = "load"

ARG = "{}"
"""In a watched path: the marker's argument (a topic name)."""


class MarkerKind(NamedTuple):
    """One row of ``MARKERS``."""

    kind: str
    paths: tuple[str, ...]
    """The znodes whose watch queues this marker (``ARG``: the marker's argument)."""
    watch: str
    """How the read sets the watch: ``EXISTS``, ``GET_CHILDREN`` or ``NO_WATCH``."""
    queued_on: frozenset[str]
    """The notifications that queue the marker; the others are ignored."""
    controller_only: bool
    """Read only while the candidate is the active controller (skipped otherwise), and
    dropped from the queue when it resigns (kept: the ``/controller`` marker)."""
    reads_topics: bool
    """The read needs the topics the controller knows (``materialize``'s ``known_topics``)."""
    event: str
    """What the marker becomes (``fsm.reads.materialize``)."""


MARKERS: dict[str, MarkerKind] = {row.kind: row for row in (
    MarkerKind(CONTROLLER, (P.CONTROLLER, P.CONTROLLER_EPOCH), EXISTS, ANY, False, False,
               "ControllerChange (/controller_epoch is watched only while its data is "
               "malformed: its repair brings the election)"),
    MarkerKind(BROKERS, (P.BROKER_IDS,), GET_CHILDREN, ANY, True, False, "BrokerChange"),
    MarkerKind(TOPICS, (P.TOPICS,), GET_CHILDREN, ANY, True, True, "TopicChange"),
    MarkerKind(TOPIC, (P.topic(ARG),), EXISTS, frozenset({CHANGED}), True, True,
               "PartitionModification (Kafka's handler reacts to data changes only; a topic "
               "the controller does not know -- skipped as malformed -- is a TopicChange)"),
    MarkerKind(DELETE_TOPICS, (P.DELETE_TOPICS,), GET_CHILDREN, ANY, True, False,
               "TopicDeletionRequest"),
    MarkerKind(REASSIGN, (P.REASSIGN_PARTITIONS,), EXISTS, ANY, True, False,
               "ReassignmentRequest (none while the znode is absent)"),
    MarkerKind(PREFERRED, (P.PREFERRED_REPLICA_ELECTION,), EXISTS, ANY, True, False,
               "PreferredElectionRequest (none while the znode is absent)"),
    MarkerKind(ISR_CHANGE, (P.ISR_CHANGE_NOTIFICATION,), GET_CHILDREN, ANY, True, False,
               "IsrChangeNotification"),
    MarkerKind(LOAD, (), NO_WATCH, frozenset(), True, False,
               "ClusterLoaded (queued by the adapter for LoadCluster, not by a watch)"),
)}
"""Marker kind -> its row: the one table of watches and markers."""

CONTROLLER_ONLY = frozenset(k for k, row in MARKERS.items() if row.controller_only)


class Marker(NamedTuple):
    """A queued "re-read X": the event thread reads the data when it processes it."""

    kind: str
    arg: str = ""

    def describe(self) -> str:
        return f"{self.kind}({self.arg})" if self.arg else self.kind


LOAD_MARKER = Marker(LOAD)
CONTROLLER_MARKER = Marker(CONTROLLER)

_EXACT: dict[str, str] = {}
_PREFIXES: list[tuple[str, str]] = []  # (prefix, kind) of the paths with an argument
for _row in MARKERS.values():
    for _path in _row.paths:
        if _path.endswith(ARG):
            _PREFIXES.append((_path[:-len(ARG)], _row.kind))
        else:
            _EXACT[_path] = _row.kind
del _row, _path


def marker_for(path: str) -> Marker | None:
    """The marker a watch on ``path`` queues (None: no marker watches it); one object per
    path (memoised: values shared by many worlds encode once)."""
    hit = _BY_PATH.get(path, False)
    if hit is False:
        hit = _marker_for(path)
        if len(_BY_PATH) >= 10_000:
            _BY_PATH.clear()
        _BY_PATH[path] = hit
    return hit  # type: ignore[return-value]


_BY_PATH: dict[str, Marker | None] = {}


def _marker_for(path: str) -> Marker | None:
    kind = _EXACT.get(path)
    if kind is not None:
        return CONTROLLER_MARKER if kind == CONTROLLER else Marker(kind)
    for prefix, kind in _PREFIXES:
        if path.startswith(prefix) and path != prefix and "/" not in path[len(prefix):]:
            return Marker(kind, path[len(prefix):])
    return None


def queues(kind: str, notification: str) -> bool:
    """Whether a ``notification`` of a watch set for a ``kind`` marker queues it."""
    return notification in MARKERS[kind].queued_on


def notified(path: str, notification: str) -> Marker | None:
    """The marker a fired watch on ``path`` queues, given the ``notification`` kind (None:
    nothing is queued)."""
    marker = marker_for(path)
    if marker is None or notification not in MARKERS[marker.kind].queued_on:
        return None
    return marker


def survives_resignation(marker: Marker) -> bool:
    """Whether a resigning controller keeps ``marker`` queued."""
    return not MARKERS[marker.kind].controller_only
