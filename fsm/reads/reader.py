"""ZooKeeper data -> controller and broker events, over a ``ReadPort``: written once, run live
and in the checker's world.

``materialize(port, marker, active=..., known_topics=...)`` is the event thread's step for a
queued marker: read what the event needs (re-registering the watch that queued the marker) and
build the event value, or None when there is nothing to hand. The other functions are the reads
it is made of, and the broker's startup read (``broker_metadata``). Each returns a ``Read``: the
value and the reasons of the znodes it skipped (the live adapter logs each as an ERROR line;
``ClusterLoaded`` carries them in ``ClusterSnapshot.bad_input``).

Behaviour, the same live and in the world:

* **Absent znodes.** An absent ``/admin/reassign_partitions`` or
  ``/admin/preferred_replica_election`` is no event at all (the watch fired on its deletion --
  by the controller itself, once it acted on it -- and Kafka's handlers react to creation
  only); an absent ``/controller`` is ``ControllerChange(active=None)``; an absent topic znode
  is no ``PartitionModification``; a broker registration, topic or partition state that
  vanished between the listing and the read is left out (its watch says so next).
* **Order.** Every value is canonical: children are listed sorted, brokers by id, topics by
  name, partition states by topic then partition, reassignment targets sorted, ISR change
  notifications by name -- whatever order the client lists them in.
* **Malformed data** (``Malformed`` from the port, or a value of another type than the path
  holds) is skipped with a reason, never half-applied: a bad topic znode drops the whole topic,
  a bad broker registration that broker, a bad partition state that partition; a bad
  reassignment or preferred-election znode is no event (left for an operator); a bad ISR change
  notification is listed (so the controller deletes it, as Kafka does) but names no partition;
  a bad ``/controller`` is ``UNKNOWN_CONTROLLER`` (somebody holds it: nobody elects); a bad
  ``/controller_epoch`` makes the controller unknown too (an election on a guessed epoch would
  go backwards) and is watched, so its repair brings the election. Child names that are not
  broker ids are skipped.
* **Which partition states.** Those the topics' assignments name (Kafka's
  ``getTopicPartitionStates`` of the context's partitions), not whatever sits under
  ``/partitions``.
* **Failover order** (``cluster_snapshot``): the ISR change notifications are listed before
  the partition states are read. A leader writes its state, then its notification, so every
  notification listed is covered by the states read, and the new controller may delete it;
  listed after, one written meanwhile would be deleted unread while the state read missed its
  change (found by ``kcontrol chaos``; Kafka deletes them before it loads the context).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import groupby, repeat
from operator import itemgetter
from typing import Any, NamedTuple

from fsm import zk_paths as P
from fsm.events import (
    BrokerChange,
    BrokerMetadataLoaded,
    ClusterLoaded,
    ControllerChange,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TopicChange,
    TopicDeletionRequest,
)
from fsm.reads import markers as M
from fsm.reads.port import Malformed, ReadPort
from fsm.values import (
    BrokerInfo,
    ClusterSnapshot,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
    TopicPartition,
)
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)

UNKNOWN_CONTROLLER = -1
"""``ControllerChange.active`` when ``/controller`` exists but cannot be decoded (or
``/controller_epoch`` cannot): somebody holds it (a candidate must not elect), but not a
broker this controller knows."""


class Read(NamedTuple):
    """What a read gives: the value (None: nothing to hand) and the reasons of the znodes
    it skipped as malformed."""

    value: Any
    bad: tuple[str, ...] = ()


class _Reading:
    """One read in progress: the port and the reasons collected."""

    __slots__ = ("bad", "port")

    def __init__(self, port: ReadPort) -> None:
        self.port = port
        self.bad: list[str] = []

    def done(self, value: object) -> Read:
        return Read(value, tuple(self.bad))

    def value(self, path: str, data: object, expected: type, what: str) -> Any:
        """``data`` if it is an ``expected``; else None, its reason recorded."""
        if isinstance(data, expected):
            return data
        if isinstance(data, Malformed):
            reason = data.reason
        else:
            reason = f"{path}: holds {type(data).__name__}, not {expected.__name__}"
        self.skip(reason, what)
        return None

    def skip(self, reason: str, what: str) -> None:
        self.bad.append(f"{reason} ({what} skipped)")

    # ------------------------------------------------------------ controller

    def controller_change(self, watch: bool) -> ControllerChange:
        port = self.port
        node = port.get(P.CONTROLLER, watch)
        ep = port.get(P.CONTROLLER_EPOCH)
        epoch, version, epoch_bad = 0, -1, False
        if ep is not None:
            version = ep.version
            value = self.value(P.CONTROLLER_EPOCH, ep.data, ControllerEpochZnode,
                               "no election until it is repaired")
            if value is None:
                epoch_bad = True
            else:
                epoch = value.epoch
        active: int | None = None
        if node is not None:
            value = self.value(P.CONTROLLER, node.data, ControllerZnode, "controller unknown")
            active = UNKNOWN_CONTROLLER if value is None else value.broker_id
        if epoch_bad:
            active = UNKNOWN_CONTROLLER
            if watch:
                port.get(P.CONTROLLER_EPOCH, True)  # its repair brings the election
        return ControllerChange(active, epoch, version)

    # ------------------------------------------------------------ brokers

    def live_brokers(self, watch: bool) -> tuple[BrokerInfo, ...]:
        ids = []
        for name in self.port.children(P.BROKER_IDS, watch):
            if name.isascii() and name.isdigit() and (name == "0" or name[0] != "0"):
                ids.append(int(name))
            else:
                self.skip(f"{P.BROKER_IDS}/{name}: not a broker id", "broker")
        ids.sort()
        paths = [P.broker(b) for b in ids]
        out = []
        for b, path, node in zip(ids, paths, self.port.get_many(paths), strict=True):
            if node is None:
                continue  # gone meanwhile: the next BrokerChange will say so
            reg = self.value(path, node.data, BrokerRegistration, f"broker {b}")
            if reg is not None:
                out.append(BrokerInfo(b, node.czxid, reg.endpoints, reg.rack))
        return tuple(out)

    # ------------------------------------------------------------ topics

    def topic_assignments(self, topics: Iterable[str], watch: bool
                          ) -> list[tuple[str, TopicAssignment]]:
        """The topic znodes of ``topics``, by name (their data watches set first)."""
        names = sorted(topics)
        paths = [P.topic(t) for t in names]
        out = []
        for t, path, node in zip(names, paths, self.port.get_many(paths, watch), strict=True):
            if node is not None:
                a = self.value(path, node.data, TopicAssignment, f"topic {t!r}")
                if a is not None:
                    out.append((t, a))
        return out

    def topic_change(self, known: Collection[str], watch: bool) -> TopicChange:
        names = frozenset(self.port.children(P.TOPICS, watch))
        return TopicChange(names, tuple(self.topic_assignments(names.difference(known), watch)))

    def partition_modification(self, topic: str, watch: bool) -> PartitionModification | None:
        path = P.topic(topic)
        node = self.port.get(path, watch)
        if node is None:
            return None
        a = self.value(path, node.data, TopicAssignment, f"topic {topic!r}")
        return None if a is None else PartitionModification(topic, a)

    def partition_states(self, tps: Sequence[TopicPartition]
                         ) -> list[tuple[TopicPartition, PartitionStateZk]]:
        """The state znodes of ``tps`` (distinct), in that order; a partition without one (a
        New partition) is left out."""
        return self.topic_states([(t, [p for _, p in group])
                                  for t, group in groupby(tps, key=itemgetter(0))])

    def topic_states(self, topics: Sequence[tuple[str, Sequence[int]]]
                     ) -> list[tuple[TopicPartition, PartitionStateZk]]:
        """``partition_states`` of each ``(topic, partitions)`` in turn (partitions distinct),
        read through the port's bulk ``get_states``.

        Thousands of partitions share their data (same leader, ISR and epochs: a port hands
        one object for equal bytes) and version: one ``PartitionStateZk`` for each such pair.
        A topic whose states are all present and well-formed -- a failover's million
        partitions, nearly always -- is handled with C-level calls over its columns
        (``_shared_states``); any other znode by znode."""
        out: list[tuple[TopicPartition, PartitionStateZk]] = []
        shared: dict[tuple[int, int], PartitionStateZk] = {}
        for (t, ps), (datas, versions) in zip(topics, self.port.get_states(topics),
                                              strict=True):
            if set(map(type, datas)) <= _LEADER_AND_ISR:
                out.extend(zip(zip(repeat(t), ps), _shared_states(datas, versions, shared),
                               strict=True))
                continue
            for p, data, version in zip(ps, datas, versions, strict=True):
                if data is None:
                    continue
                if type(data) is LeaderAndIsr:
                    out.append(((t, p), _shared_state(data, version, shared)))
                elif self.value(P.partition_state(t, p), data, LeaderAndIsr,
                                f"partition {t}-{p}") is not None:
                    out.append(((t, p), PartitionStateZk(data, version)))  # type: ignore[arg-type]
        return out

    # ------------------------------------------------------------ admin

    def deletion_request(self, watch: bool) -> TopicDeletionRequest:
        return TopicDeletionRequest(frozenset(self.port.children(P.DELETE_TOPICS, watch)))

    def reassignment_request(self, watch: bool) -> ReassignmentRequest | None:
        node = self.port.get(P.REASSIGN_PARTITIONS, watch)
        if node is None:
            return None
        value = self.value(P.REASSIGN_PARTITIONS, node.data, ReassignmentZnode,
                           "reassignment request")
        return None if value is None else ReassignmentRequest(_sorted(value.partitions))

    def preferred_request(self, watch: bool) -> PreferredElectionRequest | None:
        node = self.port.get(P.PREFERRED_REPLICA_ELECTION, watch)
        if node is None:
            return None
        value = self.value(P.PREFERRED_REPLICA_ELECTION, node.data, PreferredElectionZnode,
                           "preferred election request")
        return None if value is None else PreferredElectionRequest(frozenset(value.partitions))

    def isr_notification_names(self, watch: bool) -> tuple[str, ...]:
        return tuple(sorted(n for n in self.port.children(P.ISR_CHANGE_NOTIFICATION, watch)
                            if n.startswith(P.ISR_CHANGE_PREFIX)))

    def isr_change_notification(self, watch: bool) -> IsrChangeNotification:
        names = self.isr_notification_names(watch)
        paths = [P.isr_change(n) for n in names]
        tps: set[TopicPartition] = set()
        for path, node in zip(paths, self.port.get_many(paths), strict=True):
            if node is not None:
                value = self.value(path, node.data, IsrChangeZnode, "ISR change notification")
                if value is not None:
                    tps.update(value.partitions)
        return IsrChangeNotification(names, tuple(self.partition_states(_sorted(tps))))

    # ------------------------------------------------------------ failover, recovery

    def cluster_snapshot(self, watch: bool) -> ClusterSnapshot:
        isr = self.isr_notification_names(watch)  # first: see the module's docstring
        live = self.live_brokers(watch)
        topics = self.topic_assignments(self.port.children(P.TOPICS, watch), watch)
        states = self.topic_states([(t, _partition_ids(a)) for t, a in topics])
        deleting = self.deletion_request(watch).topics
        reassign = self.reassignment_request(watch)
        preferred = self.preferred_request(watch)
        return ClusterSnapshot(
            live_brokers=live,
            topics=tuple(topics),
            partition_states=tuple(states),
            topics_to_delete=deleting,
            reassignments=reassign.targets if reassign is not None else (),
            preferred_elections=preferred.partitions if preferred is not None else frozenset(),
            isr_change_notifications=isr,
            bad_input=tuple(self.bad),
        )

    def broker_metadata(self) -> BrokerMetadataLoaded:
        topics = self.topic_assignments(self.port.children(P.TOPICS), False)
        states = self.topic_states([(t, _partition_ids(a)) for t, a in topics])
        return BrokerMetadataLoaded(tuple(topics), tuple(states),
                                    tuple(sorted(self.port.children(P.DELETE_TOPICS))))


_LEADER_AND_ISR = {LeaderAndIsr}


def _shared_state(data: LeaderAndIsr, version: int,
                  shared: dict[tuple[int, int], PartitionStateZk]) -> PartitionStateZk:
    """The one ``PartitionStateZk(data, version)`` of this (data object, version) pair."""
    key = (id(data), version)
    state = shared.get(key)
    if state is None:
        state = shared[key] = PartitionStateZk(data, version)
    return state


def _shared_states(datas: Sequence[LeaderAndIsr], versions: Sequence[int],
                   shared: dict[tuple[int, int], PartitionStateZk]) -> list[PartitionStateZk]:
    """``_shared_state`` of each pair: the lookups at C level, a Python step only for the
    pairs not seen before."""
    keys = list(zip(map(id, datas), versions, strict=True))
    states = list(map(shared.get, keys))
    if not all(states):  # a PartitionStateZk is always true: a None is a new pair
        for i, state in enumerate(states):
            if state is None:
                states[i] = _shared_state(datas[i], versions[i], shared)
    return states


def _partition_ids(a: TopicAssignment) -> list[int]:
    return list(map(_FIRST, a.partitions))


_FIRST = itemgetter(0)


def _sorted(items: Iterable[Any]) -> tuple[Any, ...]:
    """``tuple(sorted(items))``; by ``repr`` when they do not compare (malformed entries, which
    the controller rejects one by one: sorting must not raise first)."""
    items = list(items)
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=repr))


# ================================================================ the reads


def materialize(port: ReadPort, marker: M.Marker, *, active: bool,
                known_topics: Collection[str] = frozenset()) -> Read:
    """The event ``marker`` stands for, read now (``Read.value`` None: nothing to hand).
    ``active``: whether the candidate is the active controller (the other markers than
    ``/controller``'s are not read otherwise); ``known_topics``: the topics it knows (read
    for the kinds whose row says ``reads_topics``)."""
    kind = marker.kind
    row = M.MARKERS.get(kind)
    if row is None:
        raise ValueError(f"unknown marker {marker!r}")
    if row.controller_only and not active:
        return Read(None)
    r = _Reading(port)
    if kind == M.CONTROLLER:
        return r.done(r.controller_change(True))
    if kind == M.LOAD:
        return r.done(ClusterLoaded(r.cluster_snapshot(True)))
    if kind == M.BROKERS:
        return r.done(BrokerChange(r.live_brokers(True)))
    if kind == M.TOPICS:
        return r.done(r.topic_change(known_topics, True))
    if kind == M.TOPIC:
        if marker.arg not in known_topics:
            # a topic the controller skipped (malformed when first read): a repaired znode is
            # picked up as a new topic
            return r.done(r.topic_change(known_topics, True))
        return r.done(r.partition_modification(marker.arg, True))
    if kind == M.DELETE_TOPICS:
        return r.done(r.deletion_request(True))
    if kind == M.REASSIGN:
        return r.done(r.reassignment_request(True))
    if kind == M.PREFERRED:
        return r.done(r.preferred_request(True))
    if kind == M.ISR_CHANGE:
        return r.done(r.isr_change_notification(True))
    raise AssertionError(f"marker kind {kind!r} has a row but no read")


def controller_change(port: ReadPort, watch: bool = False) -> Read:
    """``ControllerChange`` from ``/controller`` and ``/controller_epoch``."""
    r = _Reading(port)
    return r.done(r.controller_change(watch))


def live_brokers(port: ReadPort, watch: bool = False) -> Read:
    """The registered brokers (``BrokerInfo``s by id, the epoch their znode's czxid)."""
    r = _Reading(port)
    return r.done(r.live_brokers(watch))


def cluster_snapshot(port: ReadPort, watch: bool = False) -> Read:
    """Everything a new controller loads (``ClusterSnapshot``), setting the controller's
    watches with ``watch``."""
    r = _Reading(port)
    return r.done(r.cluster_snapshot(watch))


def broker_metadata(port: ReadPort) -> Read:
    """A starting broker's recovery input (``BrokerMetadataLoaded``: assignments, partition
    states, the topics queued for deletion; no watches)."""
    r = _Reading(port)
    return r.done(r.broker_metadata())
