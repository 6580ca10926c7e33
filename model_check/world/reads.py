"""The adapters' reads, against the in-memory ZooKeeper: znodes -> event values.

What the real event thread does when it processes a watch notification: read
the znodes the event needs (re-registering the one-shot watch) and build the
event value. ``watch`` is the reading session (None: no watch).
"""

from __future__ import annotations

from fsm import zk_paths as P
from fsm.events import (
    BrokerChange,
    BrokerMetadataLoaded,
    ControllerChange,
    IsrChangeNotification,
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
from model_check.world.zookeeper import ZooKeeper


def controller_change(zk: ZooKeeper, watch: int | None) -> ControllerChange:
    node = zk.get(P.CONTROLLER, watch)
    ep = zk.get(P.CONTROLLER_EPOCH)
    active = node.data.broker_id if node is not None and isinstance(node.data, ControllerZnode) \
        else None
    epoch = ep.data.epoch if ep is not None and isinstance(ep.data, ControllerEpochZnode) else 0
    return ControllerChange(active, epoch, ep.version if ep is not None else -1)


def active_controller(zk: ZooKeeper) -> int | None:
    data = zk.data(P.CONTROLLER)
    return data.broker_id if isinstance(data, ControllerZnode) else None


def live_brokers(zk: ZooKeeper, watch: int | None) -> tuple[BrokerInfo, ...]:
    out = []
    for name in zk.children(P.BROKER_IDS, watch):
        node = zk.get(P.broker(int(name)))
        reg = node.data
        if isinstance(reg, BrokerRegistration):
            out.append(BrokerInfo(int(name), node.czxid, reg.endpoints, reg.rack))
        else:
            out.append(BrokerInfo(int(name), node.czxid))
    return tuple(sorted(out, key=lambda b: b.broker_id))


def broker_change(zk: ZooKeeper, watch: int | None) -> BrokerChange:
    return BrokerChange(live_brokers(zk, watch))


def topic_assignment(zk: ZooKeeper, topic: str, watch: int | None) -> TopicAssignment | None:
    node = zk.get(P.topic(topic), watch)
    if node is None or not isinstance(node.data, TopicAssignment):
        return None
    return node.data


def topic_change(zk: ZooKeeper, known: set[str] | frozenset[str], watch: int | None
                 ) -> TopicChange:
    """Children of ``/brokers/topics``; the assignments of the topics not ``known`` (their
    data watch registered, as Kafka's TopicChange handler does)."""
    names = frozenset(zk.children(P.TOPICS, watch))
    new = []
    for t in sorted(names - set(known)):
        a = topic_assignment(zk, t, watch)
        if a is not None:
            new.append((t, a))
    return TopicChange(names, tuple(new))


def partition_states(zk: ZooKeeper, topics: list[str] | tuple[str, ...]
                     ) -> tuple[tuple[TopicPartition, PartitionStateZk], ...]:
    out = []
    for t in sorted(topics):
        for p in sorted(zk.children(P.partitions(t)), key=_int):
            if not p.isdigit():
                continue
            st = state_of(zk, (t, int(p)))
            if st is not None:
                out.append(((t, int(p)), st))
    return tuple(out)


def state_of(zk: ZooKeeper, tp: TopicPartition) -> PartitionStateZk | None:
    node = zk.get(P.partition_state(*tp))
    if node is None or not isinstance(node.data, LeaderAndIsr):
        return None
    return PartitionStateZk(node.data, node.version)


def deletion_request(zk: ZooKeeper, watch: int | None) -> TopicDeletionRequest:
    return TopicDeletionRequest(frozenset(zk.children(P.DELETE_TOPICS, watch)))


def reassignment_request(zk: ZooKeeper, watch: int | None) -> ReassignmentRequest:
    """``present=False`` when the znode is absent or holds no reassignment (where the live
    reader, ``adapters.zookeeper.reads``, hands no event at all)."""
    node = zk.get(P.REASSIGN_PARTITIONS, watch)
    if node is None or not isinstance(node.data, ReassignmentZnode):
        return ReassignmentRequest((), present=False)
    return ReassignmentRequest(node.data.partitions)


def preferred_request(zk: ZooKeeper, watch: int | None) -> PreferredElectionRequest:
    """``present=False`` as for ``reassignment_request``."""
    node = zk.get(P.PREFERRED_REPLICA_ELECTION, watch)
    if node is None or not isinstance(node.data, PreferredElectionZnode):
        return PreferredElectionRequest(frozenset(), present=False)
    return PreferredElectionRequest(frozenset(node.data.partitions))


def isr_change_notification(zk: ZooKeeper, watch: int | None) -> IsrChangeNotification:
    names = tuple(n for n in zk.children(P.ISR_CHANGE_NOTIFICATION, watch)
                  if n.startswith(P.ISR_CHANGE_PREFIX))
    tps: set[TopicPartition] = set()
    for n in names:
        data = zk.data(P.isr_change(n))
        if isinstance(data, IsrChangeZnode):
            tps.update(data.partitions)
    states = []
    for tp in sorted(tps):
        st = state_of(zk, tp)
        if st is not None:
            states.append((tp, st))
    return IsrChangeNotification(names, tuple(states))


def cluster_snapshot(zk: ZooKeeper, watch: int | None) -> ClusterSnapshot:
    """Everything a new controller loads (Kafka's ``initializeControllerContext`` reads),
    registering the controller's watches as those reads do."""
    live = live_brokers(zk, watch)
    names = zk.children(P.TOPICS, watch)
    topics = []
    for t in names:
        a = topic_assignment(zk, t, watch)
        if a is not None:
            topics.append((t, a))
    deleting = frozenset(zk.children(P.DELETE_TOPICS, watch))
    reassign = reassignment_request(zk, watch).targets
    preferred = preferred_request(zk, watch).partitions
    isr = isr_change_notification(zk, watch).notifications
    return ClusterSnapshot(
        live_brokers=live,
        topics=tuple(topics),
        partition_states=partition_states(zk, [t for t, _ in topics]),
        topics_to_delete=deleting,
        reassignments=tuple(sorted(reassign)),
        preferred_elections=preferred,
        isr_change_notifications=isr,
    )


def broker_metadata(zk: ZooKeeper) -> BrokerMetadataLoaded:
    topics = []
    for t in zk.children(P.TOPICS):
        a = topic_assignment(zk, t, None)
        if a is not None:
            topics.append((t, a))
    return BrokerMetadataLoaded(tuple(topics), partition_states(zk, [t for t, _ in topics]),
                                tuple(sorted(zk.children(P.DELETE_TOPICS))))


def _int(s: str) -> int:
    return int(s) if s.isdigit() else -1
