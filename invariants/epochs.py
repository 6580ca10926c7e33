"""Epochs and fencing tokens: they only move forward, and nobody is ahead of ZooKeeper."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import STATE, TRANSITION, invariant
from invariants.view import GlobalView


def _tp(tp: tuple[str, int]) -> str:
    return f"{tp[0]}-{tp[1]}"


def _zk_step(before: GlobalView, after: GlobalView) -> bool:
    return before.zk is not None and after.zk is not None and before.zk is not after.zk


def _same_states(before: GlobalView, after: GlobalView) -> Iterator[tuple]:
    """``(tp, old state, new state)`` of the partition state znodes a step changed (same
    znode: same czxid)."""
    if not _zk_step(before, after):
        return
    old_states = before.zk.states  # type: ignore[union-attr]
    for tp, st in after.zk.partitions:  # type: ignore[union-attr]
        old = old_states.get(tp)
        if old is not None and old is not st and old.czxid == st.czxid and old != st:
            yield tp, old, st


def _replica_changes(before: GlobalView, after: GlobalView) -> Iterator[tuple]:
    """``(broker id, tp, old replica view, new replica view)`` of the replicas a broker that
    stayed up changed (a restart starts afresh: its memory is not compared)."""
    for b in after.brokers or ():
        ob = before.broker(b.broker_id)
        if ob is None or ob is b or not (ob.up and b.up):
            continue
        for tp, r in b.replicas:
            old = ob.replica(tp)
            if old is not None and old != r:
                yield b.broker_id, tp, old, r


def controller_epoch_moved(before: GlobalView, after: GlobalView) -> bool:
    """The step changed ``/controller_epoch`` or a running broker's controller epoch."""
    if _zk_step(before, after) and (
            before.zk.controller_epoch, before.zk.controller_epoch_version) != (  # type: ignore[union-attr]
            after.zk.controller_epoch, after.zk.controller_epoch_version):  # type: ignore[union-attr]
        return True
    for b in after.brokers or ():
        ob = before.broker(b.broker_id)
        if ob is not None and ob is not b and ob.up and b.up \
                and ob.controller_epoch != b.controller_epoch:
            return True
    return False


def leader_epoch_moved(before: GlobalView, after: GlobalView) -> bool:
    """The step changed a leader epoch: of a partition state, or of a running broker's
    replica."""
    return any(o.leader_epoch != n.leader_epoch for _, o, n in _same_states(before, after)) \
        or any(o.leader_epoch != n.leader_epoch for *_, o, n in _replica_changes(before, after))


def leader_changed(before: GlobalView, after: GlobalView) -> bool:
    """The step changed a leader: in a partition state, or in a running broker's replica."""
    return any(o.leader != n.leader for _, o, n in _same_states(before, after)) \
        or any(o.leader != n.leader for *_, o, n in _replica_changes(before, after))


def partition_state_decided(before: GlobalView, after: GlobalView) -> bool:
    """The step created a partition state, or raised its leader epoch (a decision)."""
    if not _zk_step(before, after):
        return False
    old_states = before.zk.states  # type: ignore[union-attr]
    for tp, st in after.zk.partitions:  # type: ignore[union-attr]
        old = old_states.get(tp)
        if old is not st and (old is None or old.czxid != st.czxid
                               or st.leader_epoch > old.leader_epoch):
            return True
    return False


def partition_state_written(before: GlobalView, after: GlobalView) -> bool:
    """The step wrote an existing partition state znode."""
    return any(True for _ in _same_states(before, after))


def state_or_applied_epochs(view: GlobalView) -> bool:
    """ZooKeeper's ``/controller_epoch`` is known and a partition state exists or a broker
    has applied a controller's request."""
    zk = view.zk
    return zk is not None and zk.controller_epoch is not None and (
        bool(zk.partitions) or any(b.controller_epoch > 0 for b in view.brokers or ()))


@invariant(TRANSITION, "seed 000 'controller leader election'; DESIGN.md 'Epochs and fences'",
           premise=controller_epoch_moved)
def controller_epoch_never_decreases(before: GlobalView, after: GlobalView) -> Iterator[str]:
    """``/controller_epoch`` (value and znode version) never goes back, and neither does the
    highest controller epoch a running broker has applied.

    The controller epoch is the fence against zombie controllers: ZooKeeper checks its
    znode version in every controller write, brokers reject requests from an epoch below
    the highest they have applied. If either went back, a deposed controller's writes or
    requests would pass again. A broker's memory is per process: a restart starts from
    zero, so the broker side is compared only while the process stays up.
    """
    zb, za = before.zk, after.zk
    if zb is not None and za is not None and zb is not za and None not in (
            zb.controller_epoch, za.controller_epoch):
        if za.controller_epoch < zb.controller_epoch:  # type: ignore[operator]
            yield f"/controller_epoch went from {zb.controller_epoch} to {za.controller_epoch}"
        if None not in (zb.controller_epoch_version, za.controller_epoch_version) and \
                za.controller_epoch_version < zb.controller_epoch_version:  # type: ignore[operator]
            yield (f"/controller_epoch version went from {zb.controller_epoch_version} to "
                   f"{za.controller_epoch_version}")
    for b in after.brokers or ():
        old = before.broker(b.broker_id)
        if old is None or old is b or not (old.up and b.up):
            continue
        if b.controller_epoch < old.controller_epoch:
            yield (f"broker {b.broker_id}'s controller epoch went from {old.controller_epoch} "
                   f"to {b.controller_epoch}")


@invariant(TRANSITION, "seed 001 (leader epoch, LeaderAndISR path); KIP-101/KIP-279",
           premise=leader_epoch_moved)
def leader_epoch_never_decreases(before: GlobalView, after: GlobalView) -> Iterator[str]:
    """A partition's leader epoch never goes back: in its ZooKeeper state znode (the same
    znode: same czxid), and in a running broker's local replica.

    The leader epoch orders leaderships: brokers ignore a LeaderAndIsr with an older one,
    followers truncate by it, and the seed's "multiple leaders in transition" argument rests
    on a new leader always carrying a higher epoch than the one it replaces. A decrease would
    let an old leadership be taken for a new one. A recreated topic (new state znode) and a
    restarted broker start afresh.
    """
    for tp, old, st in _same_states(before, after):
        if st.leader_epoch < old.leader_epoch:
            yield (f"{_tp(tp)}: leader epoch in ZooKeeper went from {old.leader_epoch} "
                   f"to {st.leader_epoch}")
    for b, tp, old_r, r in _replica_changes(before, after):
        if r.leader_epoch < old_r.leader_epoch:
            yield (f"{_tp(tp)}: broker {b}'s leader epoch went from "
                   f"{old_r.leader_epoch} to {r.leader_epoch}")


@invariant(TRANSITION, "seed 001 (a new leader gets a new leader epoch); KIP-101",
           premise=leader_changed)
def leader_change_bumps_leader_epoch(before: GlobalView, after: GlobalView) -> Iterator[str]:
    """When a partition's leader changes, its leader epoch goes up: in its ZooKeeper state
    znode (the same znode: same czxid), and in a running broker's local replica.

    The leader epoch is the name of a leadership: followers truncate to the leader epoch
    boundaries (KIP-101), brokers order LeaderAndIsr requests by it, and the committer
    argument of seed 001 §3 ("the new leader carries a higher epoch than the one it
    replaces") needs two leaderships never to share one. ISR changes may keep the epoch;
    a new leader -- or going leaderless (-1) -- may not.
    """
    for tp, old, st in _same_states(before, after):
        if st.leader != old.leader and st.leader_epoch <= old.leader_epoch:
            yield (f"{_tp(tp)}: leader in ZooKeeper went from {old.leader} to {st.leader} "
                   f"at leader epoch {old.leader_epoch} -> {st.leader_epoch}")
    for b, tp, old_r, r in _replica_changes(before, after):
        if r.leader != old_r.leader and r.leader_epoch <= old_r.leader_epoch:
            yield (f"{_tp(tp)}: broker {b} switched from leader {old_r.leader} "
                   f"to {r.leader} at leader epoch {old_r.leader_epoch} -> {r.leader_epoch}")


@invariant(TRANSITION, "KAFKA-6082 (zombie controller writes); seed 000 'controller epoch'",
           premise=partition_state_decided)
def partition_state_decided_by_current_controller(before: GlobalView,
                                                  after: GlobalView) -> Iterator[str]:
    """A partition state that a step creates, or whose leader epoch it raises -- a
    controller's decision -- carries the controller epoch that ``/controller_epoch`` holds
    after the step.

    Only the controller decides leaders and bumps leader epochs (a leader's own ISR change
    keeps its epoch), and every controller write is fenced by the ``/controller_epoch``
    version it won. A decision landing with an older controller epoch is a deposed
    controller's: KAFKA-6082, where a controller whose session expired kept writing
    partition states behind its successor's back.
    """
    zb, za = before.zk, after.zk
    if zb is None or za is None or zb is za or za.controller_epoch is None:
        return
    now = za.controller_epoch
    for tp, st in za.partitions:
        old = zb.states.get(tp)
        decided = old is None or old.czxid != st.czxid or st.leader_epoch > old.leader_epoch
        if decided and st.controller_epoch != now:
            yield (f"{_tp(tp)}: leader {st.leader} epoch {st.leader_epoch} written with "
                   f"controller epoch {st.controller_epoch}, /controller_epoch is {now}")


@invariant(TRANSITION, "seed 001 §3 and G (conditional ISR updates); DESIGN.md fences",
           premise=partition_state_written)
def partition_state_version_never_decreases(before: GlobalView,
                                            after: GlobalView) -> Iterator[str]:
    """The znode version of a partition state (same znode: same czxid) never goes back.

    That version is the token of every conditional update of the partition state, by the
    controller and by the partition leader (seed 001 §3: the old leader's ISR shrink fails
    because the version moved on). It can only grow in a real ZooKeeper; a decrease means
    the state was replaced behind the fences' back.
    """
    zb, za = before.zk, after.zk
    if zb is None or za is None or zb is za:
        return
    for tp, st in za.partitions:
        old = zb.states.get(tp)
        if old is not None and old.czxid == st.czxid and st.version < old.version:
            yield f"{_tp(tp)}: state znode version went from {old.version} to {st.version}"


@invariant(STATE, "seed 000 'controller leader election'; DESIGN.md 'Epochs and fences'",
           premise=state_or_applied_epochs)
def controller_epochs_not_ahead_of_zookeeper(view: GlobalView) -> Iterator[str]:
    """No broker has applied a request from a controller epoch higher than
    ``/controller_epoch``, and no partition state was written with one.

    Every controller epoch comes from a successful election write; an epoch ahead of
    ZooKeeper's was never won, so whatever carried it did not come from a legitimate
    controller (and would make brokers reject the real one as stale).
    """
    zk = view.zk
    if zk is None or zk.controller_epoch is None:
        return
    top = zk.controller_epoch
    for b in view.brokers or ():
        if b.controller_epoch > top:
            yield (f"broker {b.broker_id} has applied controller epoch {b.controller_epoch} "
                   f"but /controller_epoch is {top}")
    for tp, st in zk.partitions:
        if st.controller_epoch > top:
            yield (f"{_tp(tp)}: state written with controller epoch {st.controller_epoch} "
                   f"but /controller_epoch is {top}")
