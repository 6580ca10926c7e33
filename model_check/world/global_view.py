"""``global_view(world) -> GlobalView``: the neutral snapshot the invariants read.

Uses only the world's public attributes and queries (``zk``, ``brokers``, ``controllers``,
``procs``, ``config``, ``admin_done``, ``is_quiescent()``) and the ``fsm`` objects' public
queries, so the world's internals can change freely underneath.
"""

from __future__ import annotations

from fsm import zk_paths as P
from fsm.broker import BrokerCore
from fsm.values import LeaderAndIsr, TopicAssignment
from fsm.znodes import ControllerEpochZnode, ControllerZnode, ReassignmentZnode
from invariants.view import (
    AppliedView,
    BrokerView,
    ControllerView,
    GlobalView,
    MetadataPartitionView,
    MetadataView,
    PartitionStateView,
    ReplicaView,
    ZkView,
)
from model_check.world.config import DROP, DeleteTopic, Reassign
from model_check.world.world import World
from model_check.world.zookeeper import ZooKeeper


def zk_view(zk: ZooKeeper) -> ZkView:
    """ZooKeeper's part of the view, read as a Kafka-aware tool would."""
    ctl = zk.data(P.CONTROLLER)
    ep = zk.get(P.CONTROLLER_EPOCH)
    epoch = ep.data.epoch if ep is not None and isinstance(ep.data, ControllerEpochZnode) \
        else None
    brokers = []
    for name in zk.children(P.BROKER_IDS):
        node = zk.get(P.broker(int(name)))
        if node is not None:
            brokers.append((int(name), node.czxid))
    assignments = []
    states = []
    for t in zk.children(P.TOPICS):
        data = zk.data(P.topic(t))
        if isinstance(data, TopicAssignment):
            assignments.extend(((t, p), tuple(r)) for p, r in data.partitions)
        for p in zk.children(P.partitions(t)):
            if not (p.isascii() and p.isdigit()):
                continue
            node = zk.get(P.partition_state(t, int(p)))
            if node is not None and isinstance(node.data, LeaderAndIsr):
                li = node.data
                states.append(((t, int(p)), PartitionStateView(
                    li.leader, li.leader_epoch, tuple(li.isr), li.controller_epoch,
                    node.version, node.czxid)))
    reassign = zk.data(P.REASSIGN_PARTITIONS)
    pending = tuple(sorted((tuple(tp), tuple(r)) for tp, r in reassign.partitions)) \
        if isinstance(reassign, ReassignmentZnode) else ()
    return ZkView(
        controller=ctl.broker_id if isinstance(ctl, ControllerZnode) else None,
        controller_epoch=epoch,
        controller_epoch_version=ep.version if ep is not None else None,
        brokers=tuple(sorted(brokers)),
        assignments=tuple(sorted(assignments)),
        partitions=tuple(sorted(states)),
        topics_pending_deletion=tuple(zk.children(P.DELETE_TOPICS)),
        reassignments_pending=pending,
        isr_change_notifications=tuple(zk.children(P.ISR_CHANGE_NOTIFICATION)),
    )


def broker_view(b: int, up: bool, core: BrokerCore) -> BrokerView:
    """One broker's part of the view, from ``BrokerCore``'s public queries."""
    replicas = tuple(
        (tp, ReplicaView(v.role.value, v.leader, v.leader_epoch, tuple(v.isr), v.zk_version,
                         v.fenced))
        for tp, v in core.replicas())
    md = core.metadata_cache
    metadata = MetadataView(
        md.controller_id,
        tuple(sorted((i.broker_id, i.epoch) for i in md.live_brokers)),
        tuple((tp, MetadataPartitionView(m.leader, m.leader_epoch, tuple(m.isr),
                                         tuple(m.replicas)))
              for tp, m in md.partitions))
    mark = core.applied
    applied = None if mark is None else AppliedView(
        mark.controller_epoch, mark.broker_epoch, mark.highest_before)
    return BrokerView(b, up, core.state.value, core.epoch, core.controller_epoch, replicas,
                      metadata, applied)


def admin_requests(world: World) -> tuple[tuple[str, ...], tuple]:
    """``(topics asked to be deleted, reassignment targets)`` among the admin actions done.
    A partition asked to move by two different requests is left out (the order in which
    they were done is not recorded)."""
    deleted: set[str] = set()
    targets: dict = {}
    conflicting: set = set()
    for i in sorted(world.admin_done):
        op = world.config.admin[i]
        if isinstance(op, DeleteTopic):
            deleted.add(op.topic)
        elif isinstance(op, Reassign):
            for tp, target in op.targets:
                tp, target = tuple(tp), tuple(target)
                if targets.get(tp, target) != target:
                    conflicting.add(tp)
                targets[tp] = target
    return (tuple(sorted(deleted)),
            tuple(sorted((tp, t) for tp, t in targets.items() if tp not in conflicting)))


def global_view(world: World) -> GlobalView:
    """The whole world as a ``GlobalView``."""
    zk = zk_view(world.zk)
    ids = world.config.broker_ids
    controllers = tuple(
        ControllerView(b, world.procs[b].up, world.controllers[b].is_active,
                       world.controllers[b].epoch)
        for b in ids)
    brokers = tuple(broker_view(b, world.procs[b].up, world.brokers[b]) for b in ids)
    deleting, targets = admin_requests(world)
    return GlobalView(
        zk=zk,
        controllers=controllers,
        brokers=brokers,
        pending=not world.is_quiescent(),
        deleted_topics=tuple(t for t in deleting if t not in zk.topics),
        reassign_targets=targets,
        unclean_leader_election=world.config.unclean_leader_election,
        messages_lost=messages_lost(world),
    )


def messages_lost(world: World) -> bool:
    """Whether a connection drop (which loses what is in flight for good) happened on the
    path to this world: the world does not resend as Kafka's RequestSendThread does."""
    return world.left(DROP) < world.config.budget(DROP)
