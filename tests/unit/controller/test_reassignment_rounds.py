"""Reassignment phases write ZooKeeper before memory moves, one round each (Kafka's order):
the completion's state write first, the topic znode and /admin/reassign_partitions only once
it committed; the expansion's topic znode first, the leader-epoch bump once it committed. A
state write that fails with BadVersion never leaves a half-done reassignment behind."""

from __future__ import annotations

from fsm.effects import DeleteOp, ZkWrite
from fsm.events import IsrChangeNotification, ReassignmentRequest, WriteFailure, WriteResult
from fsm.replica_states import ReplicaState
from fsm.values import LeaderAndIsr

from .harness import active, feed, lai_to, no_illegal, state, stops, writes

T0 = ("t", 0)
STATE = "/brokers/topics/t/partitions/0/state"
TOPIC = "/brokers/topics/t"
ADMIN = "/admin/reassign_partitions"


def paths(w: ZkWrite) -> list[str]:
    return [op.path for op in w.ops]


def completion_write(ctl=None) -> ZkWrite:
    """Partition t-0 on 3,2,1 (leader 3, all in sync) reassigned to 2,3: no expansion
    needed, the completion is decided at once (the world test's scenario)."""
    out = ctl.handle(ReassignmentRequest(((T0, (2, 3)),)))
    (w,) = writes(out)
    return w


def contracting():
    return active(live=(1, 2, 3), topics={"t": {0: (3, 2, 1)}},
                  states={T0: state(3, (3, 2, 1))})


def test_expansion_writes_the_topic_znode_then_bumps_the_epoch() -> None:
    ctl = active(live=(1, 2, 3, 4), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    (w,) = writes(ctl.handle(ReassignmentRequest(((T0, (3, 4)),))))
    assert paths(w) == [TOPIC]  # the topic znode alone, memory untouched
    assert w.ops[0].data.partitions == ((0, (3, 4, 1, 2)),)
    assert w.ops[0].data.adding == ((0, (3, 4)),)
    assert ctl.replicas(T0) == (1, 2)
    (w2,) = writes(ctl.handle(WriteResult(w.token)))
    assert paths(w2) == [STATE] and w2.ops[0].data.leader_epoch == 1
    assert ctl.replicas(T0) == (3, 4, 1, 2)
    assert ctl.replica_state(T0, 3) is ReplicaState.NonExistentReplica  # not started yet
    out = ctl.handle(WriteResult(w2.token))
    assert ctl.replica_state(T0, 3) is ReplicaState.NewReplica
    assert lai_to(out, 3) is not None and lai_to(out, 4) is not None
    assert lai_to(out, 3).partitions[0].replicas == (3, 4, 1, 2)
    no_illegal(ctl)


def test_expansion_epoch_bump_failing_twice_is_retried_on_the_next_isr_change() -> None:
    ctl = active(live=(1, 2, 3, 4), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    (w,) = writes(ctl.handle(ReassignmentRequest(((T0, (3, 4)),))))
    (w,) = writes(ctl.handle(WriteResult(w.token)))
    for version in (1, 2):  # the leader changes the ISR before each attempt
        out = ctl.handle(WriteResult(w.token, failures=(WriteFailure(
            STATE, "BadVersion", LeaderAndIsr(1, 0, (1,) if version == 1 else (1, 2), 1),
            version),)))
        ws = writes(out)
        if version == 1:
            (w,) = ws
            assert paths(w) == [STATE] and w.ops[0].version == 1
    assert ws == [] and lai_to(out, 3) is None
    assert ctl.replica_state(T0, 3) is ReplicaState.NonExistentReplica
    assert ctl.reassignments() == {T0: (3, 4)}
    # the leader's ISR notification brings the next attempt
    out = feed(ctl, IsrChangeNotification(("isr_change_0000000002",),
                                          ((T0, state(1, (1, 2), 0, 2)),)))
    assert lai_to(out, 3) is not None and ctl.leader_and_isr(T0).leader_epoch == 1
    assert ctl.replica_state(T0, 3) is ReplicaState.NewReplica
    no_illegal(ctl)


def test_completion_writes_the_state_alone_then_the_znodes() -> None:
    ctl = contracting()
    w = completion_write(ctl)
    assert paths(w) == [STATE]
    assert w.ops[0].data.isr == (3, 2) and w.ops[0].data.leader == 3
    assert ctl.replicas(T0) == (3, 2, 1) and T0 in ctl.reassignments()  # not switched yet
    out = ctl.handle(WriteResult(w.token))
    assert ctl.replicas(T0) == (2, 3) and T0 not in ctl.reassignments()
    assert stops(out, 1, True).partitions == (T0,)
    (w2,) = writes(out)
    assert paths(w2) == [TOPIC, ADMIN]
    assert w2.ops[0].data.partitions == ((0, (2, 3)),) and w2.ops[1] == DeleteOp(ADMIN)
    assert writes(ctl.handle(WriteResult(w2.token))) == []
    no_illegal(ctl)


def test_completion_racing_an_isr_change_writes_nothing_else() -> None:
    """The world's race: leader 3 changes the ISR to 3,1 before the completion commits. The
    re-read state no longer has the target in sync: nothing but the state op was ever
    written, memory keeps the reassignment in flight, broker 1 gets no StopReplica."""
    ctl = contracting()
    w = completion_write(ctl)
    out = ctl.handle(WriteResult(w.token, failures=(WriteFailure(
        STATE, "BadVersion", LeaderAndIsr(3, 0, (3, 1), 1), 2),)))
    assert writes(out) == [] and stops(out, 1, False) is None and stops(out, 1, True) is None
    assert ctl.replicas(T0) == (3, 2, 1) and ctl.reassignments() == {T0: (2, 3)}
    assert ctl.leader_and_isr(T0).isr == (3, 1) and ctl.partition_zk_version(T0) == 2
    assert ctl.replica_state(T0, 1) is ReplicaState.OnlineReplica
    # broker 2 back in sync: the completion is tried again, from the current version
    out = feed(ctl, IsrChangeNotification(("isr_change_0000000002",),
                                          ((T0, state(3, (3, 1, 2), 0, 3)),)))
    assert ctl.replicas(T0) == (2, 3) and not ctl.reassignments()
    assert ctl.leader_and_isr(T0).isr == (3, 2)
    assert stops(out, 1, True) is not None
    no_illegal(ctl)


def test_completion_retried_once_after_bad_version_then_the_znodes() -> None:
    ctl = contracting()
    w = completion_write(ctl)
    out = ctl.handle(WriteResult(w.token, failures=(WriteFailure(
        STATE, "BadVersion", LeaderAndIsr(3, 0, (3, 2, 1), 1), 2),)))
    (w2,) = writes(out)
    assert paths(w2) == [STATE] and w2.ops[0].version == 2  # decided again, state alone
    assert T0 in ctl.reassignments() and stops(out, 1, True) is None
    out = ctl.handle(WriteResult(w2.token))
    assert ctl.replicas(T0) == (2, 3) and stops(out, 1, True) is not None
    (w3,) = writes(out)
    assert paths(w3) == [TOPIC, ADMIN]
    no_illegal(ctl)


def test_completion_failing_twice_stays_in_flight() -> None:
    ctl = contracting()
    w = completion_write(ctl)
    for version in (2, 3):
        out = ctl.handle(WriteResult(w.token, failures=(WriteFailure(
            STATE, "BadVersion", LeaderAndIsr(3, 0, (3, 2, 1), 1), version),)))
        ws = writes(out)
        if ws:
            (w,) = ws
    assert ws == [] and ctl.awaiting_write is None
    assert ctl.replicas(T0) == (3, 2, 1) and ctl.reassignments() == {T0: (2, 3)}
    assert stops(out, 1, True) is None
    assert any(r.kind == "info" and "postponed" in r.reason for r in ctl.state_change_log)


def test_completion_and_another_partitions_expansion_share_the_topic_znode() -> None:
    """Two partitions of one topic: t-0 completes while t-1 expands; every topic znode write
    holds only what committed (t-0's new list once its state write committed)."""
    ctl = active(live=(1, 2, 3), topics={"t": {0: (3, 2, 1), 1: (1, 2)}},
                 states={T0: state(3, (3, 2, 1)), ("t", 1): state(1, (1, 2))})
    out = feed(ctl, ReassignmentRequest(((T0, (2, 3)), (("t", 1), (2, 3)))))
    ws = writes(out)
    s1 = "/brokers/topics/t/partitions/1/state"
    assert [paths(w) for w in ws] == [[STATE, TOPIC], [s1, TOPIC, ADMIN]]
    # round 1: t-0's completion state, t-1's expansion znode (t-0 still as committed)
    assert ws[0].ops[1].data.partitions == ((0, (3, 2, 1)), (1, (2, 3, 1)))
    # round 2: t-1's epoch bump, t-0's completion znodes (t-1 still expanding)
    assert ws[1].ops[1].data.partitions == ((0, (2, 3)), (1, (2, 3, 1)))
    assert ws[1].ops[1].data.adding == ((1, (3,)),)
    assert ws[1].ops[2].data.partitions == ((("t", 1), (2, 3)),)
    assert ctl.replicas(("t", 1)) == (2, 3, 1) and ctl.replicas(T0) == (2, 3)
    no_illegal(ctl)
