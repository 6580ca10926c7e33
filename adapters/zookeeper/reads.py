"""Controller events from real ZooKeeper reads (the live twin of ``model_check.world.reads``).

The event thread calls these when it processes a queued marker ("re-read X"): each reads the
znodes the event needs, re-registering the one-shot watch that produced the marker, and builds
the event value. ``watch(kind, arg)`` gives the kazoo watch callback for a marker kind
(``adapters.controller.event_queue.Marker``), or None for no watch.

Which watch: ``/controller`` an exists watch (fires on create, delete and data change, also when
absent); ``/brokers/ids``, ``/brokers/topics``, ``/admin/delete_topics``,
``/isr_change_notification`` child watches; ``/brokers/topics/<t>`` data watches (partition
expansion); ``/admin/reassign_partitions`` and ``/admin/preferred_replica_election`` exists
watches (they come and go). Partition state znodes take no watch: leaders announce ISR changes
through ``/isr_change_notification`` (see ``fsm.controller.reassignment``).

Malformed data: the znode is skipped, one ERROR line names the path and the reason
(``ZnodeDecodeError``), and for ``ClusterLoaded`` the reason goes to ``ClusterSnapshot.bad_input``.
Nothing raises on outside input and nothing is half-applied: a malformed topic znode drops the
whole topic from the event, a malformed reassignment or preferred-election znode produces no
event at all (the znode is left for an operator; an *absent* one produces none either, as
Kafka's handlers react to their creation only), a malformed ISR notification is listed (so the
controller deletes it, as Kafka does) but names no partition.

Bulk reads (``ClusterLoaded``): broker registrations, topic znodes and the partition states
named by the assignments go through ``multi_read.read_many`` (ZooKeeper 3.6+ ``multiRead``,
size-bounded batches, several in flight; pipelined ``get_async`` on older servers). Partition
state bytes decode through a small memo (``PartitionStateDecoder``): the same bytes recur across
thousands of partitions (same leader, ISR and epochs), and decoding is a pure function of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.serialization import Exists

from adapters.zookeeper import codec
from adapters.zookeeper.codec import ZnodeDecodeError, broker_info
from adapters.zookeeper.codec.decoders import decode_partition_state
from adapters.zookeeper.multi_read import call_many, full_path, read_batches, read_many
from fsm import zk_paths as P
from fsm.events import (
    BrokerChange,
    BrokerMetadataLoaded,
    ControllerChange,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TopicChange,
    TopicDeletionRequest,
)
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

log = logging.getLogger("kcontrol.zk.reads")

# marker kinds (the same names as the world's markers)
CONTROLLER = "controller"
BROKERS = "brokers"
TOPICS = "topics"
TOPIC = "topic"
DELETE_TOPICS = "delete-topics"
REASSIGN = "reassign"
PREFERRED = "preferred"
ISR_CHANGE = "isr-change"
LOAD = "load"

Watch = Callable[[str, str], Callable[[Any], None] | None]
"""``watch(kind, arg)`` -> the kazoo watcher to register, or None."""

UNKNOWN_CONTROLLER = -1
"""``ControllerChange.active`` when ``/controller`` exists but cannot be decoded: somebody holds
it (a candidate must not elect), but not a broker this controller knows."""


def _no_watch(kind: str, arg: str = "") -> None:
    return None


class PartitionStateDecoder:
    """``decode`` of partition state bytes, memoised by the bytes (bounded)."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self._memo: dict[bytes, LeaderAndIsr] = {}
        self._max = max_entries

    def __call__(self, path: str, data: bytes) -> LeaderAndIsr:
        li = self._memo.get(data)
        if li is None:
            # the paths are built by ``zk_paths.partition_state`` for topics whose znode decoded
            # (so legal names): the codec itself, without classifying the path
            li = decode_partition_state(path, data)
            if len(self._memo) >= self._max:
                self._memo.clear()
            self._memo[data] = li
        return li


class ZkReader:
    """Reads on the event thread: one per kazoo client. ``bad`` collects the reasons of the
    znodes skipped since the last ``take_bad()``."""

    def __init__(self, client: KazooClient, timeout: float | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.client = client
        self.timeout = timeout
        self.log = logger or log
        self.bad: list[str] = []
        self.decode_state = PartitionStateDecoder()
        self._epoch_malformed = False  # the last read of /controller_epoch could not be decoded

    # ------------------------------------------------------------------ helpers

    def take_bad(self) -> tuple[str, ...]:
        out, self.bad = tuple(self.bad), []
        return out

    def _skip(self, exc: ZnodeDecodeError | Exception, what: str) -> None:
        reason = f"{exc} ({what} skipped)"
        self.log.error("malformed znode: %s", reason)
        self.bad.append(reason)

    def _decode(self, path: str, data: bytes | None, what: str) -> Any:
        try:
            return codec.decode(path, data)
        except ZnodeDecodeError as exc:
            self._skip(exc, what)
            return None

    def _get(self, path: str, watcher: Callable | None = None
             ) -> tuple[bytes, Any] | None:
        """getData (None if absent); with ``watcher``, an exists watch is set first so it
        fires on creation as well."""
        c = self.client
        try:
            if watcher is not None and c.exists(path, watch=watcher) is None:
                return None
            data, stat = c.get(path)
            return data, stat
        except NoNodeError:
            return None

    def _children(self, path: str, watcher: Callable | None = None) -> list[str]:
        try:
            return self.client.get_children(path, watch=watcher)
        except NoNodeError:
            return []

    # ------------------------------------------------------------------ controller

    def controller_epoch(self) -> tuple[int, int]:
        """``/controller_epoch``'s value and znode version ((0, -1) when absent)."""
        self._epoch_malformed = False
        got = self._get(P.CONTROLLER_EPOCH)
        if got is None:
            return 0, -1
        data, stat = got
        value = self._decode(P.CONTROLLER_EPOCH, data, "no election until it is repaired")
        self._epoch_malformed = not isinstance(value, ControllerEpochZnode)
        return (value.epoch if isinstance(value, ControllerEpochZnode) else 0), stat.version

    def controller_change(self, watch: Watch = _no_watch) -> ControllerChange:
        """``/controller`` and ``/controller_epoch``. A malformed epoch cannot be raised (an
        election on "0" would send the brokers an epoch lower than the one they know, and they
        would ignore the new controller): the change then says the controller is unknown, so
        nobody elects (an active controller resigns), and ``/controller_epoch`` gets the same
        watch as ``/controller``, so an operator's repair brings the election."""
        w = watch(CONTROLLER, "")
        got = self._get(P.CONTROLLER, w)
        epoch, version = self.controller_epoch()
        active: int | None = None
        if got is not None:
            value = self._decode(P.CONTROLLER, got[0], "controller unknown")
            active = value.broker_id if isinstance(value, ControllerZnode) \
                else UNKNOWN_CONTROLLER
        if version >= 0 and self._epoch_malformed:
            active = UNKNOWN_CONTROLLER
            if w is not None:
                self.client.exists(P.CONTROLLER_EPOCH, watch=w)
        return ControllerChange(active, epoch, version)

    def controller_owner(self) -> int | None:
        """The session id owning ``/controller`` (its ephemeralOwner), None when absent."""
        stat = self.client.exists(P.CONTROLLER)
        return None if stat is None else stat.ephemeralOwner

    # ------------------------------------------------------------------ brokers

    def live_brokers(self, watch: Watch = _no_watch) -> tuple[BrokerInfo, ...]:
        names = self._children(P.BROKER_IDS, watch(BROKERS, ""))
        ids = []
        for n in names:
            if n.isascii() and n.isdigit() and (n == "0" or not n.startswith("0")):
                ids.append(int(n))
            else:
                self._skip(ValueError(f"{P.BROKER_IDS}/{n}: not a broker id"), "broker")
        got = read_many(self.client, [P.broker(b) for b in ids], timeout=self.timeout)
        out = []
        for b in ids:
            path = P.broker(b)
            r = got.get(path)
            if not isinstance(r, tuple):
                continue  # gone meanwhile: the next BrokerChange will say so
            reg = self._decode(path, r[0], f"broker {b}")
            if isinstance(reg, BrokerRegistration):
                out.append(broker_info(reg, r[1].czxid))
        return tuple(sorted(out, key=lambda i: i.broker_id))

    def broker_change(self, watch: Watch = _no_watch) -> BrokerChange:
        return BrokerChange(self.live_brokers(watch))

    # ------------------------------------------------------------------ topics

    def topic_assignment(self, topic: str, watch: Watch = _no_watch) -> TopicAssignment | None:
        path = P.topic(topic)
        got = self._get(path, watch(TOPIC, topic))
        if got is None:
            return None
        value = self._decode(path, got[0], f"topic {topic!r}")
        return value if isinstance(value, TopicAssignment) else None

    def topic_assignments(self, topics: Iterable[str], watch: Watch = _no_watch
                          ) -> list[tuple[str, TopicAssignment]]:
        """Many topic znodes: data watches registered pipelined (exists), then one bulk read.
        A topic changed between the two fires its watch: the change is re-read, never lost."""
        topics = sorted(topics)
        pending = self._watch_topics(topics, watch)
        out = self._read_topics(topics)
        for r in pending:
            r.get(timeout=self.timeout)
        return out

    def _watch_topics(self, topics: list[str], watch: Watch) -> list[Any]:
        """Set the topic znodes' data watches (exists requests queued at once, ``call_many``);
        the answers are left to the caller to await. Requests on a session are served in order,
        so every read sent after this call sees the znodes with their watches set."""
        chroot = self.client.chroot
        requests = []
        for t in topics:
            w = watch(TOPIC, t)
            if w is not None:
                requests.append(Exists(full_path(chroot, P.topic(t)), w))
        return call_many(self.client, requests)

    def _read_topics(self, topics: list[str]) -> list[tuple[str, TopicAssignment]]:
        got = read_many(self.client, [P.topic(t) for t in topics], timeout=self.timeout,
                        expected_znode_bytes=4096)
        out = []
        for t in topics:
            r = got.get(P.topic(t))
            if not isinstance(r, tuple):
                continue
            value = self._decode(P.topic(t), r[0], f"topic {t!r}")
            if isinstance(value, TopicAssignment):
                out.append((t, value))
        return out

    def topic_change(self, known: Iterable[str], watch: Watch = _no_watch) -> TopicChange:
        names = frozenset(self._children(P.TOPICS, watch(TOPICS, "")))
        new = self.topic_assignments(names - set(known), watch)
        return TopicChange(names, tuple(new))

    def partition_modification(self, topic: str, watch: Watch = _no_watch
                               ) -> PartitionModification | None:
        a = self.topic_assignment(topic, watch)
        return None if a is None else PartitionModification(topic, a)

    def partition_states(self, tps: Iterable[TopicPartition]
                         ) -> list[tuple[TopicPartition, PartitionStateZk]]:
        """The state znodes of ``tps`` (distinct), decoded batch by batch as the answers arrive
        (the next batches are in flight meanwhile)."""
        tps = list(tps)
        paths = [P.partition_state(t, p) for t, p in tps]
        out = []
        append = out.append
        decode = self.decode_state
        # (bytes, version) -> value: thousands of partitions share both (same leader, ISR,
        # epochs, never rewritten), and a lookup is cheaper than building the value
        known: dict[tuple[bytes, int], PartitionStateZk] = {}
        for start, end, replies in read_batches(self.client, paths, timeout=self.timeout):
            for tp, path, r in zip(tps[start:end], paths[start:end], replies, strict=True):
                if type(r) is not tuple:
                    continue  # no state znode yet: a New partition
                key = (r[0], r[1].version)
                state = known.get(key)
                if state is None:
                    try:
                        state = PartitionStateZk(decode(path, key[0]), key[1])
                    except ZnodeDecodeError as exc:
                        self._skip(exc, f"partition {tp[0]}-{tp[1]}")
                        continue
                    known[key] = state
                append((tp, state))
        return out

    # ------------------------------------------------------------------ admin

    def deletion_request(self, watch: Watch = _no_watch) -> TopicDeletionRequest:
        return TopicDeletionRequest(frozenset(self._children(P.DELETE_TOPICS,
                                                             watch(DELETE_TOPICS, ""))))

    def reassignment_request(self, watch: Watch = _no_watch) -> ReassignmentRequest | None:
        got = self._get(P.REASSIGN_PARTITIONS, watch(REASSIGN, ""))
        if got is None:
            return None  # deleted or never there: Kafka's handler reacts to creation only
        value = self._decode(P.REASSIGN_PARTITIONS, got[0], "reassignment request")
        if not isinstance(value, ReassignmentZnode):
            return None
        return ReassignmentRequest(tuple(sorted(value.partitions)))

    def preferred_request(self, watch: Watch = _no_watch) -> PreferredElectionRequest | None:
        got = self._get(P.PREFERRED_REPLICA_ELECTION, watch(PREFERRED, ""))
        if got is None:
            return None  # deleted (by the controller itself) or never there: nothing to do
        value = self._decode(P.PREFERRED_REPLICA_ELECTION, got[0], "preferred election request")
        if not isinstance(value, PreferredElectionZnode):
            return None
        return PreferredElectionRequest(frozenset(value.partitions))

    def isr_change_notification(self, watch: Watch = _no_watch) -> IsrChangeNotification:
        names = tuple(sorted(n for n in self._children(P.ISR_CHANGE_NOTIFICATION,
                                                       watch(ISR_CHANGE, ""))
                             if n.startswith(P.ISR_CHANGE_PREFIX)))
        got = read_many(self.client, [P.isr_change(n) for n in names], timeout=self.timeout)
        tps: set[TopicPartition] = set()
        for n in names:
            r = got.get(P.isr_change(n))
            if isinstance(r, tuple):
                value = self._decode(P.isr_change(n), r[0], "ISR change notification")
                if isinstance(value, IsrChangeZnode):
                    tps.update(value.partitions)
        return IsrChangeNotification(names, tuple(self.partition_states(sorted(tps))))

    # ------------------------------------------------------------------ failover

    def cluster_snapshot(self, watch: Watch = _no_watch) -> ClusterSnapshot:
        """Everything a new controller loads, registering the controller's watches."""
        self.bad = []
        # ISR change notifications are listed *before* the partition states are read: a
        # leader writes its state, then its notification, so every notification listed here
        # is covered by the states read below, and the new controller may delete them. Listed
        # after, a notification written meanwhile was deleted unread while the state read
        # had missed its change: the ISR change never reached any broker's metadata (found by
        # `kcontrol chaos`). Later ones fire the watch set here. (Kafka deletes the
        # notifications before it loads the controller context, for the same reason.)
        isr = self._children(P.ISR_CHANGE_NOTIFICATION, watch(ISR_CHANGE, ""))
        live = self.live_brokers(watch)
        names = sorted(self._children(P.TOPICS, watch(TOPICS, "")))
        # the topic watches' answers are awaited last: kazoo spends a round of Python per
        # request, and the partition states are read and decoded meanwhile
        pending = self._watch_topics(names, watch)
        topics = self._read_topics(names)
        tps = [(t, p) for t, a in topics for p, _ in a.partitions]
        states = self.partition_states(tps)
        for r in pending:
            r.get(timeout=self.timeout)
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
            isr_change_notifications=tuple(sorted(n for n in isr
                                                  if n.startswith(P.ISR_CHANGE_PREFIX))),
            bad_input=self.take_bad(),
        )

    def broker_metadata(self) -> BrokerMetadataLoaded:
        """A starting broker's recovery input: assignments, partition states and the topics
        queued for deletion (no watches)."""
        topics = self.topic_assignments(self._children(P.TOPICS))
        states = self.partition_states([(t, p) for t, a in topics for p, _ in a.partitions])
        return BrokerMetadataLoaded(tuple(topics), tuple(states),
                                    tuple(sorted(self._children(P.DELETE_TOPICS))))


__all__ = [
    "BROKERS", "CONTROLLER", "DELETE_TOPICS", "ISR_CHANGE", "LOAD", "PREFERRED", "REASSIGN",
    "TOPIC", "TOPICS", "UNKNOWN_CONTROLLER", "PartitionStateDecoder",
    "Watch", "ZkReader",
]
