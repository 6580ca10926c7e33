"""Reassignment, preferred election (manual and automatic), ISR notifications."""

from __future__ import annotations

from fsm.controller import Controller, ControllerConfig
from fsm.effects import DeleteOp, SetDataOp
from fsm.events import (
    ClusterLoaded,
    ControllerChange,
    IsrChangeNotification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TimerFired,
    TimerKind,
)
from fsm.replica_states import ReplicaState
from fsm.requests import UpdateMetadataRequest
from fsm.values import ClusterSnapshot, TopicAssignment

from .harness import active, brokers, feed, lai_to, no_illegal, sends, state, stops, writes

T0 = ("t", 0)


def isr_change(ctl, tp, leader, isr, epoch, version):
    return feed(ctl, IsrChangeNotification(("isr_change_0000000001",),
                                           ((tp, state(leader, isr, epoch, version)),)))


def test_reassignment_expand_wait_move_contract() -> None:
    ctl = active(live=(1, 2, 3, 4), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    out = feed(ctl, ReassignmentRequest(((T0, (3, 4)),)))
    assert ctl.replicas(T0) == (3, 4, 1, 2)
    topic_ops = [op for op in writes(out)[0].ops if op.path == "/brokers/topics/t"]
    assert topic_ops and topic_ops[0].data.removing == ((0, (1, 2)),)
    assert lai_to(out, 3) is not None and lai_to(out, 4) is not None
    assert ctl.replica_state(T0, 3) is ReplicaState.NewReplica
    assert ctl.leader_and_isr(T0).leader_epoch == 1
    # not yet in sync: nothing happens
    v = ctl.partition_zk_version(T0)
    out = isr_change(ctl, T0, 1, (1, 2, 3), 1, v + 1)
    assert T0 in ctl.reassignments()
    out = isr_change(ctl, T0, 1, (1, 2, 3, 4), 1, v + 2)
    assert T0 not in ctl.reassignments()
    assert ctl.replicas(T0) == (3, 4)
    li = ctl.leader_and_isr(T0)
    assert li.leader == 3 and li.isr == (3, 4) and li.leader_epoch == 2
    assert stops(out, 1, True).partitions == (T0,) and stops(out, 2, False) is not None
    assert ctl.replica_state(T0, 1) is ReplicaState.NonExistentReplica
    assert ctl.replica_state(T0, 4) is ReplicaState.OnlineReplica
    ops = [op for w in writes(out) for op in w.ops]
    assert DeleteOp("/admin/reassign_partitions") in ops
    assert any(isinstance(op, SetDataOp) and op.path == "/brokers/topics/t"
               and op.data.partitions == ((0, (3, 4)),) for op in ops)
    no_illegal(ctl)


def test_reassignment_survives_failover() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    feed(ctl, ControllerChange(None, 3, 3))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3, 4),
        topics=(("t", TopicAssignment(((0, (3, 4, 1, 2)),))),),
        partition_states=((T0, state(1, (1, 2, 3, 4), epoch=1, version=2)),),
        reassignments=((T0, (3, 4)),))
    out = feed(ctl, ClusterLoaded(snap))
    assert T0 not in ctl.reassignments() and ctl.replicas(T0) == (3, 4)
    assert ctl.leader_and_isr(T0).leader == 3
    assert stops(out, 1, True) is not None


def test_reassignment_waits_in_flight_across_failover() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    feed(ctl, ControllerChange(None, 3, 3))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3),
        topics=(("t", TopicAssignment(((0, (1, 2)),))),),
        partition_states=((T0, state(1, (1, 2))),),
        reassignments=((T0, (2, 3)),))
    feed(ctl, ClusterLoaded(snap))
    assert ctl.reassignments() == {T0: (2, 3)} and ctl.replicas(T0) == (2, 3, 1)


def test_preferred_election_manual() -> None:
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(2, (1, 2))})
    out = feed(ctl, PreferredElectionRequest(frozenset({T0, ("nope", 0)})))
    assert ctl.leader_and_isr(T0).leader == 1
    assert DeleteOp("/admin/preferred_replica_election") in writes(out)[0].ops
    assert any(r.kind == "rejected" for r in ctl.state_change_log)


def test_preferred_election_auto_over_threshold() -> None:
    topics = {"t": {p: (1, 2) for p in range(10)}}
    states = {("t", p): state(2 if p < 2 else 1, (1, 2)) for p in range(10)}
    ctl = active(topics=topics, states=states)
    assert ctl.imbalance()[1] == 0.2
    feed(ctl, TimerFired(TimerKind.AUTO_REBALANCE))
    assert all(ctl.leader_and_isr(("t", p)).leader == 1 for p in range(10))
    # at 10% exactly nothing moves
    states = {("t", p): state(2 if p < 1 else 1, (1, 2)) for p in range(10)}
    ctl = active(topics=topics, states=states)
    feed(ctl, TimerFired(TimerKind.AUTO_REBALANCE))
    assert ctl.leader_and_isr(("t", 0)).leader == 2


def test_isr_notification_updates_cache_and_metadata() -> None:
    ctl = active()
    out = isr_change(ctl, T0, 1, (1, 2), 0, 1)
    assert ctl.leader_and_isr(T0).isr == (1, 2) and ctl.partition_zk_version(T0) == 1
    um = sends(out, UpdateMetadataRequest)
    assert {s.broker_id for s in um} == {1, 2, 3}
    assert um[0].request.partitions[0].isr == (1, 2)
    assert DeleteOp("/isr_change_notification/isr_change_0000000001") in writes(out)[0].ops
