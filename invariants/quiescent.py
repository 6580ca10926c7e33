"""Quiescent-state invariants: they hold once nothing is in flight (``view.pending`` is
False) -- no message, watch notification, queued event, pending write, unnoticed session
expiry or timer that matters. In between, brokers lag behind ZooKeeper by design."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import QUIESCENT, invariant
from invariants.view import (
    FOLLOWER,
    LEADER,
    NO_LEADER,
    BrokerView,
    GlobalView,
    MetadataView,
    ZkView,
)

TopicPartition = tuple[str, int]
_NEVER_WRITTEN = MetadataView()


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _current_brokers(view: GlobalView, zk: ZkView) -> list[BrokerView]:
    """Brokers the controller considers live: up, serving, registered with their epoch."""
    return [b for b in view.brokers or ()
            if b.serving and b.epoch is not None and zk.registered.get(b.broker_id) == b.epoch]


def _diff(name: str, want: dict, got: dict, limit: int = 3) -> str | None:
    keys = sorted(set(want) | set(got), key=repr)
    bad = [k for k in keys if want.get(k) != got.get(k)]
    if not bad:
        return None
    parts = [f"{_tp(k) if isinstance(k, tuple) else k}: has {got.get(k)} want {want.get(k)}"
             for k in bad[:limit]]
    more = f" (+{len(bad) - limit} more)" if len(bad) > limit else ""
    return f"{name} " + "; ".join(parts) + more


def a_live_broker_has_metadata(view: GlobalView) -> bool:
    """A live, registered broker's metadata cache has been written."""
    zk = view.zk
    return zk is not None and any(b.metadata is not None and b.metadata != _NEVER_WRITTEN
                                  for b in _current_brokers(view, zk))


def an_offline_partition(view: GlobalView) -> bool:
    """A partition (of a topic not being deleted) has no leader."""
    zk = view.zk
    return zk is not None and any(st.leader == NO_LEADER and tp[0] not in zk.deleting
                                  for tp, st in zk.partitions)


def a_reassignment_finished(view: GlobalView) -> bool:
    """A reassignment the controller accepted is no longer pending."""
    zk = view.zk
    if zk is None or view.reassign_targets is None:
        return False
    return any(tp[0] in zk.topics and tp[0] not in zk.deleting and tp not in zk.reassigning
               for tp, _ in view.reassign_targets)


def a_topic_was_deleted(view: GlobalView) -> bool:
    """A topic whose deletion was requested is gone from ZooKeeper."""
    zk = view.zk
    return any(zk is None or t not in zk.topics for t in view.deleted_topics)


def a_live_broker_holds_a_replica(view: GlobalView) -> bool:
    """A live, registered broker is assigned a replica of a settled partition (neither being
    deleted nor reassigned)."""
    zk = view.zk
    if zk is None:
        return False
    live = {b.broker_id for b in _current_brokers(view, zk)}
    return any(tp[0] not in zk.deleting and tp not in zk.reassigning
               and not live.isdisjoint(zk.assignment.get(tp, ()))
               for tp, _ in zk.partitions)


@invariant(QUIESCENT, "seed 000 'cluster metadata updates' (UpdateMetadata to every broker)",
           premise=a_live_broker_has_metadata)
def metadata_matches_zookeeper(view: GlobalView) -> Iterator[str]:
    """Once quiescent, every live broker's metadata cache equals ZooKeeper: for each
    partition with a state (topics pending deletion aside) the leader, leader epoch, ISR
    and replicas; the live brokers (ids and epochs); and the controller id.

    The metadata cache is what clients are routed by. The controller sends UpdateMetadata
    after every change; once nothing is in flight a cache that still differs will never be
    corrected (until some unrelated change), so clients would be sent to a dead or deposed
    leader indefinitely. "Live" = up, serving, registered with the epoch it believes in.

    One exemption: a broker whose cache was never written (no controller id, no broker, no
    partition) while ZooKeeper holds no partition state. kcontrol's controller sends no
    UpdateMetadata on failover to a cluster without partitions (Kafka sends one with the
    live brokers); nothing routes by such a cache, so this is recorded as a known
    difference rather than a safety violation.
    """
    zk = view.zk
    if zk is None or view.pending:
        return
    want_parts = {tp: (st.leader, st.leader_epoch, st.isr, zk.assignment.get(tp, ()))
                  for tp, st in zk.partitions if tp[0] not in zk.deleting}
    want_live = dict(zk.brokers)
    for b in _current_brokers(view, zk):
        md = b.metadata
        if md is None or (not zk.partitions and md == _NEVER_WRITTEN):
            continue
        got_parts = {tp: (m.leader, m.leader_epoch, m.isr, m.replicas)
                     for tp, m in md.partitions if tp[0] not in zk.deleting}
        d = _diff("partitions", want_parts, got_parts)
        if d:
            yield f"broker {b.broker_id} metadata: {d}"
        d = _diff("live brokers", want_live, dict(md.live_brokers))
        if d:
            yield f"broker {b.broker_id} metadata: {d}"
        if zk.controller is not None and md.controller_id != zk.controller:
            yield (f"broker {b.broker_id} metadata names controller {md.controller_id}, "
                   f"/controller names {zk.controller}")


@invariant(QUIESCENT, "seed 000 'broker join'/'broker failure'; seed 001 A and D",
           premise=an_offline_partition)
def no_offline_partition_with_live_isr_replica(view: GlobalView) -> Iterator[str]:
    """Once quiescent, no partition is offline (leader -1) while one of its ISR replicas is
    registered (live). Topics pending deletion aside.

    With unclean election off, a partition goes offline only when its whole ISR is gone;
    when an ISR replica comes back (broker join), the controller must elect it. A partition
    left offline with a live in-sync replica is unavailable for no reason (the "stuck
    partition" complaint about Kafka's controller).
    """
    zk = view.zk
    if zk is None or view.pending:
        return
    for tp, st in zk.partitions:
        if tp[0] in zk.deleting or st.leader != NO_LEADER:
            continue
        live = [m for m in st.isr if m in zk.registered]
        if live:
            yield f"{_tp(tp)}: offline (leader -1) with live ISR replicas {live}"


@invariant(QUIESCENT, "seed 001 F 'Replica reassignment'; Kafka's /admin/reassign_partitions",
           premise=a_reassignment_finished)
def finished_reassignment_has_target_replicas(view: GlobalView) -> Iterator[str]:
    """Once quiescent, a partition whose reassignment the controller *accepted* and that is
    no longer listed in ``/admin/reassign_partitions`` has exactly the target replicas (in
    order) in its topic znode. Topics gone or pending deletion aside.

    The reassignment znode is the admin's only record of the request: the controller
    removes an entry when the move completed. Removing it while the replica set is still the
    union (old + target) or something else leaves the partition on brokers the admin is
    about to decommission. A request the controller *refused* (an unknown partition, a
    target broker that is not live, a topic being deleted) is removed from the znode too,
    but it never moved anything: it is not a finished reassignment and is not judged.
    Which requests were accepted comes from ``view.reassign_targets`` -- the model checker's
    world records every reassignment a controller took in flight (the latest target per
    partition); a live audit, which cannot know, passes None and the check is skipped.
    """
    zk = view.zk
    if zk is None or view.pending or view.reassign_targets is None:
        return
    for tp, target in view.reassign_targets:
        if tp[0] not in zk.topics or tp[0] in zk.deleting or tp in zk.reassigning:
            continue
        replicas = zk.assignment.get(tp)
        if replicas is not None and tuple(replicas) != tuple(target):
            yield (f"{_tp(tp)}: reassignment no longer pending but replicas are "
                   f"{list(replicas)}, target {list(target)}")


@invariant(QUIESCENT, "seed 000 'topic deletion' (TopicDeletionManager); seed 001 B and §5",
           premise=a_topic_was_deleted)
def deleted_topic_leaves_no_replica(view: GlobalView) -> Iterator[str]:
    """Once quiescent, a deleted topic (``view.deleted_topics``; gone from
    ``/brokers/topics``) has no replica left on any running broker, no partition in any
    running broker's metadata cache, and no ``/admin/delete_topics`` entry.

    Deletion completes only after every replica answered StopReplica(delete=true); a replica
    left behind keeps disk and, worse, resurfaces if a topic of the same name is created
    again (seed 001 §5). A leftover metadata entry routes clients to a topic that is gone.
    """
    zk = view.zk
    gone = {t for t in view.deleted_topics if zk is None or t not in zk.topics}
    if not gone or view.pending:
        return
    for b in view.brokers or ():
        if not b.up:
            continue
        left = sorted(tp for tp, _ in b.replicas if tp[0] in gone)
        if left:
            yield f"broker {b.broker_id} still holds replicas {[_tp(tp) for tp in left]}"
        if b.metadata is not None:
            cached = sorted(tp for tp, _ in b.metadata.partitions if tp[0] in gone)
            if cached:
                yield (f"broker {b.broker_id}'s metadata still lists "
                       f"{[_tp(tp) for tp in cached]}")
    if zk is not None:
        for t in sorted(gone & zk.deleting):
            yield f"/admin/delete_topics/{t} left behind after {t} was deleted"


@invariant(QUIESCENT, "seed 001 C (LeaderAndIsr: become leader / follower); seed 000 D",
           premise=a_live_broker_holds_a_replica)
def replicas_follow_zookeeper(view: GlobalView) -> Iterator[str]:
    """Once quiescent, every live broker assigned a replica of a partition (topics pending
    deletion and partitions being reassigned aside) holds it with ZooKeeper's leader and
    leader epoch: the leader as an acting (unfenced) LEADER whose ISR view and znode version
    are ZooKeeper's, every other replica as a FOLLOWER.

    LeaderAndIsr is how decisions reach the brokers. Once nothing is in flight, a replica
    still on an older leadership never fetches from the real leader (it drops out of the ISR
    for good), and a leader whose ISR view or version differs from ZooKeeper's will have its
    next ISR change refused.
    """
    zk = view.zk
    if zk is None or view.pending:
        return
    brokers = {b.broker_id: b for b in _current_brokers(view, zk)}
    for tp, st in zk.partitions:
        if tp[0] in zk.deleting or tp in zk.reassigning:
            continue
        for m in zk.assignment.get(tp, ()):
            b = brokers.get(m)
            if b is None:
                continue
            r = b.replica(tp)
            if r is None:
                yield f"{_tp(tp)}: live replica broker {m} holds no replica"
                continue
            if (r.leader, r.leader_epoch) != (st.leader, st.leader_epoch):
                yield (f"{_tp(tp)}: broker {m} has leader {r.leader} epoch {r.leader_epoch}, "
                       f"ZooKeeper {st.leader} epoch {st.leader_epoch}")
            elif m == st.leader:
                if r.role != LEADER or r.fenced or tuple(r.isr) != tuple(st.isr) \
                        or r.zk_version != st.version:
                    yield (f"{_tp(tp)}: leader {m} is {r.role}{' fenced' if r.fenced else ''} "
                           f"isr {list(r.isr)} v{r.zk_version}, ZooKeeper isr {list(st.isr)} "
                           f"v{st.version}")
            elif r.role != FOLLOWER:
                yield f"{_tp(tp)}: broker {m} is {r.role}, not a follower of {st.leader}"
