"""``global_view(world) -> GlobalView``: the neutral snapshot the invariants read.

Uses only the world's public attributes and queries (``zk``, ``brokers``, ``controllers``,
``procs``, ``config``, ``admin_done``, ``accepted``, ``is_quiescent()``, the component snapshots) and the
``fsm`` objects' public queries, so the world's internals can change freely underneath.
With the world's memos the parts are remembered by content (``model_check.memo.views``): a
component is restored only when a snapshot of it is seen for the first time.
"""

from __future__ import annotations

from dataclasses import fields

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
from model_check.world.config import DeleteTopic
from model_check.world.facts import ControllerFacts
from model_check.world.fingerprint import Shared
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


def broker_view(b: int, up: bool, core: BrokerCore, shut_down: bool = False) -> BrokerView:
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
                      metadata, applied, shut_down)


def deletion_requests(world: World) -> tuple[str, ...]:
    """Topics an admin action asked to delete (among the actions done)."""
    return tuple(sorted({op.topic for i in world.admin_done
                         if isinstance(op := world.config.admin[i], DeleteTopic)}))


def accepted_reassignments(world: World) -> tuple:
    """``(tp, target)`` of the reassignments a controller took in flight (the world's record:
    refused requests never appear here, see ``executor._record_accepted``)."""
    return tuple(sorted(world.accepted.items()))


def global_view(world: World) -> GlobalView:
    """The whole world as a ``GlobalView``. Each part is one object per value
    (``shared_part``); with the world's memos (``model_check.memo.views``) the parts are
    remembered by their component snapshots, so a step rebuilds only the parts it touched
    and restores nothing it did not touch: an untouched part is the very same object in the
    parent's view (transition invariants skip it by identity)."""
    memos = world.memos
    ids = world.ids
    procs = world.procs
    if memos is None:
        zk = shared_part(zk_view(world.zk))
        controllers = tuple([_shared_controller(controller_view(b, procs[b].up,  # type: ignore[misc]
                                                                world.controller_facts(b)))
                             for b in ids])
        brokers = tuple([shared_part(broker_view(b, procs[b].up, world.brokers[b],  # type: ignore[arg-type]
                                                 procs[b].shut_down)) for b in ids])
    else:
        views = memos.views
        zk = views.zk(world)
        controller, facts = views.controller, memos.facts.controller  # ``controller_facts``
        controllers = tuple([controller(b, procs[b].up, facts(world, b)) for b in ids])
        broker = views.broker
        brokers = tuple([broker(world, b) for b in ids])
    deleting = deletion_requests(world)
    view = _blank(GlobalView)  # what GlobalView(...) builds, without the frozen __init__'s
    vars(view).update(  # eight object.__setattr__ calls (a microsecond, once per state)
        zk=zk,
        controllers=controllers,
        brokers=brokers,
        pending=not world.is_quiescent(),
        deleted_topics=tuple(t for t in deleting if t not in zk.topics),  # type: ignore[attr-defined]
        reassign_targets=accepted_reassignments(world),
        unclean_leader_election=world.config.unclean_leader_election,
    )
    return view


_blank = object.__new__
_VIEW_FIELDS = ("zk", "controllers", "brokers", "pending", "deleted_topics",
                "reassign_targets", "unclean_leader_election")
assert tuple(f.name for f in fields(GlobalView)) == _VIEW_FIELDS, (
    "GlobalView's fields changed: global_view sets each one")


shared_part = Shared(40_000)
"""Parts by value: equal parts built from different snapshots are one object, so that the
transition invariants (which skip parts a step left as they were, by identity) and the
state-invariant memo (keyed by the parts' identities) see them as the same. An intern
table, not a memo of the search (``fingerprint.Shared``): the views memo
(``model_check.memo.views``) remembers which part a component snapshot gives."""


_shared_controller = Shared(40_000)
"""Controller parts by value (``shared_part``'s, for a world without memos): an intern
table, not a memo of the search (``fingerprint.Shared``)."""


def controller_view(b: int, up: bool, facts: ControllerFacts) -> ControllerView:
    """Controller ``b``'s part of the view, from its facts."""
    return ControllerView(b, up, facts.active, facts.epoch, facts.live, facts.shutting_down)
