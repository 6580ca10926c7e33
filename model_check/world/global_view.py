"""``global_view(world) -> GlobalView``: the neutral snapshot the invariants read.

Uses only the world's public attributes and queries (``zk``, ``brokers``, ``controllers``,
``procs``, ``config``, ``admin_done``, ``accepted``, ``is_quiescent()``, the component snapshots) and the
``fsm`` objects' public queries, so the world's internals can change freely underneath.
The parts are memoised by content (see ``global_view``): a component is restored only when
a snapshot of it is seen for the first time.
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
from model_check.world.fingerprint import Shared, part_digest
from model_check.world.world import World
from model_check.world.zookeeper import ZOOKEEPER, ZooKeeper


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
    """The whole world as a ``GlobalView``. The ZooKeeper part and each broker's part are
    memoised by their component snapshot's content digest (``facts``), so a step rebuilds
    only the parts it touched and restores nothing it did not touch; an untouched part is
    the very same object in the parent's view (transition invariants skip it by identity)."""
    zk = zk_view_of(world)
    ids = world.ids
    procs = world.procs
    controllers = tuple([_controller_view(b, procs[b].up, world.controller_facts(b))
                         for b in ids])
    brokers = tuple([broker_view_of(world, b) for b in ids])
    deleting = deletion_requests(world)
    view = _blank(GlobalView)  # what GlobalView(...) builds, without the frozen __init__'s
    vars(view).update(  # eight object.__setattr__ calls (a microsecond, once per state)
        zk=zk,
        controllers=controllers,
        brokers=brokers,
        pending=not world.is_quiescent(),
        deleted_topics=tuple(t for t in deleting if t not in zk.topics),
        reassign_targets=accepted_reassignments(world),
        unclean_leader_election=world.config.unclean_leader_election,
    )
    return view


_blank = object.__new__
_VIEW_FIELDS = ("zk", "controllers", "brokers", "pending", "deleted_topics",
                "reassign_targets", "unclean_leader_election")
assert tuple(f.name for f in fields(GlobalView)) == _VIEW_FIELDS, (
    "GlobalView's fields changed: global_view sets each one")


_LIMIT = 40_000
_zk_views: dict[tuple, ZkView] = {}
_zk_views_by_id: dict[int, tuple[tuple, ZkView]] = {}
"""The same, by the znode tuple's identity first: most worlds share the tuple (a step that
writes no znode keeps it), and hashing a tuple walks all of it every time."""
_broker_views: dict[tuple[int, bool, bool, bytes], BrokerView] = {}
_broker_views_by_id: dict[tuple[int, int, bool, bool], tuple[tuple, BrokerView]] = {}
"""The same, by the core snapshot's identity first (``facts``: one small-key lookup instead
of the digest's and then this one's; the entry keeps the snapshot alive)."""
_intern = Shared(_LIMIT)
"""Parts by value: equal parts built from different snapshots are one object, so that the
transition invariants (which skip parts a step left as they were, by identity) and the
state-invariant memo (keyed by the parts' identities) see them as the same."""
_controller_views: dict[tuple[int, bool, ControllerFacts], ControllerView] = {}


def _put(memo: dict, key: object, value: object) -> None:
    if len(memo) >= _LIMIT:
        memo.clear()
    memo[key] = value


def zk_view_of(world: World) -> ZkView:
    """``zk_view`` of the world's ZooKeeper, memoised by its encoded znodes (the view reads
    nothing else: sessions, watches and pending notifications leave it as it is). The key is
    the znode tuple itself: hashing it costs less than its digest, and most lookups find the
    very object (identity is tested first)."""
    key = world.zk_snapshot()[ZOOKEEPER.nodes]
    known = _zk_views_by_id.get(id(key))
    if known is not None and known[0] is key:
        return known[1]
    hit = _zk_views.get(key)
    if hit is None:
        hit = _intern(zk_view(world.zk))
        _put(_zk_views, key, hit)
    _put(_zk_views_by_id, id(key), (key, hit))  # the entry keeps ``key`` alive
    return hit  # type: ignore[return-value]


def broker_view_of(world: World, b: int) -> BrokerView:
    """``broker_view`` of broker ``b``, memoised by its core snapshot's digest."""
    proc = world.procs[b]
    up, shut_down = proc.up, proc.shut_down
    snap = world.broker_snapshot(b)
    known = _broker_views_by_id.get((id(snap), b, up, shut_down))
    if known is not None and known[0] is snap:
        return known[1]
    key = (b, up, shut_down, part_digest(snap))
    hit = _broker_views.get(key)
    if hit is None:
        hit = _intern(broker_view(b, up, world.brokers[b], shut_down))
        _put(_broker_views, key, hit)
    _put(_broker_views_by_id, (id(snap), b, up, shut_down), (snap, hit))
    return hit  # type: ignore[return-value]


def _controller_view(b: int, up: bool, facts: ControllerFacts) -> ControllerView:
    key = (b, up, facts)
    hit = _controller_views.get(key)
    if hit is None:
        hit = ControllerView(b, up, facts.active, facts.epoch, facts.live,
                             facts.shutting_down)
        _put(_controller_views, key, hit)
    return hit
