"""The write protocol (BadVersion retried once, then owed to the next event) and rejection of
malformed input."""

from __future__ import annotations

import pytest

from fsm.controller import Controller, ControllerConfig
from fsm.controller.snapshot_fields import CONTROLLER
from fsm.effects import DeleteOp, SetDataOp
from fsm.events import (
    BrokerChange,
    ControlledShutdown,
    IsrChangeNotification,
    PartitionModification,
    PreferredElectionRequest,
    ReassignmentRequest,
    TopicChange,
    TopicDeletionRequest,
    WriteFailure,
    WriteResult,
)
from fsm.partition_states import PartitionState
from fsm.requests import ControlledShutdownRequest
from fsm.values import BrokerInfo, LeaderAndIsr, PartitionStateZk, TopicAssignment
from fsm.znodes import ReassignmentZnode

from .harness import active, broker_change, feed, writes

T0 = ("t", 0)
PATH = "/brokers/topics/t/partitions/0/state"


def test_bad_version_retried_once_with_current_data() -> None:
    ctl = active()
    (w,) = writes(ctl.handle(BrokerChange((BrokerInfo(2, 102), BrokerInfo(3, 103)))))
    # a leader shrank the ISR meanwhile: version 1, isr (1, 3)
    current = LeaderAndIsr(1, 0, (1, 3), 1)
    out = ctl.handle(WriteResult(w.token, failures=(
        WriteFailure(PATH, "BadVersion", current, 1),)))
    (w2,) = writes(out)
    (op,) = w2.ops
    assert op.path == PATH and op.version == 1
    assert op.data.leader == 3 and op.data.isr == (3,)
    # and gives up after the retry
    out = ctl.handle(WriteResult(w2.token, failures=(
        WriteFailure(PATH, "BadVersion", LeaderAndIsr(1, 1, (1, 3), 1), 2),)))
    assert not writes(out) and ctl.awaiting_write is None
    assert any(r.kind == "gave-up" for r in ctl.state_change_log)
    assert ctl.partition_zk_version(T0) == 2


def _fail(ctl: Controller, token: int, current: LeaderAndIsr, version: int) -> list:
    return ctl.handle(WriteResult(token, failures=(
        WriteFailure(PATH, "BadVersion", current, version),)))


def _notification(ctl: Controller, n: int, current: LeaderAndIsr, version: int) -> list:
    """The ISR change notification the leader wrote with its change: the next event."""
    return ctl.handle(IsrChangeNotification((f"isr_change_{n:010d}",),
                                            ((T0, PartitionStateZk(current, version)),)))


def test_bad_version_twice_owes_the_decision_to_the_next_event() -> None:
    """Seed 001 A 3.3: "if the version ... has changed, go back to 1.1" -- a decision whose
    write fails twice is not dropped: the next event decides it again (once per event)."""
    ctl = active()
    (w,) = writes(ctl.handle(BrokerChange((BrokerInfo(2, 102), BrokerInfo(3, 103)))))
    # broker 1 (paused, session expired) keeps changing its ISR: the version moves twice
    (w2,) = writes(_fail(ctl, w.token, LeaderAndIsr(1, 0, (1, 3), 1), 1))
    out = _fail(ctl, w2.token, LeaderAndIsr(1, 0, (1, 2, 3), 1), 2)
    assert not writes(out) and ctl.awaiting_write is None  # not again within this event
    assert ctl.partition_state(T0) is PartitionState.OfflinePartition  # leader 1 is dead
    assert ctl.leader_and_isr(T0).leader == 1 and ctl.partition_zk_version(T0) == 2
    again = Controller.restore(ctl.snapshot(), ctl.config)  # the debt is state: snapshotted
    assert again.snapshot() == ctl.snapshot() and again.ctx.owed == {T0: ("offline", 0, False)}
    # the next event (the notification of the second ISR change): its round, then the debt
    (d,) = writes(_notification(ctl, 1, LeaderAndIsr(1, 0, (1, 2, 3), 1), 2))
    assert all(isinstance(op, DeleteOp) for op in d.ops)
    (w3,) = writes(ctl.handle(WriteResult(d.token)))
    (op,) = w3.ops
    assert isinstance(op, SetDataOp) and op.version == 2
    assert op.data.leader == 2 and op.data.isr == (2, 3)
    # it fails twice more (its round and the retry round): owed again, not retried now
    (w4,) = writes(_fail(ctl, w3.token, LeaderAndIsr(1, 0, (1, 3), 1), 3))
    assert not writes(_fail(ctl, w4.token, LeaderAndIsr(1, 0, (1, 2, 3), 1), 4))
    assert ctl.ctx.owed and ctl.awaiting_write is None
    # the next event: decided again, and this time it commits
    (d,) = writes(_notification(ctl, 2, LeaderAndIsr(1, 0, (1, 2, 3), 1), 4))
    (w5,) = writes(ctl.handle(WriteResult(d.token)))
    assert w5.ops[0].version == 4
    ctl.handle(WriteResult(w5.token))
    assert ctl.leader_and_isr(T0).leader == 2 and ctl.partition_zk_version(T0) == 5
    assert ctl.partition_state(T0) is PartitionState.OnlinePartition
    assert not ctl.ctx.owed


def test_owed_decision_dropped_when_nothing_is_left_to_decide() -> None:
    """An owed decision is decided again on what memory holds then: if the partition needs
    nothing any more (a newer state was learnt), nothing is written and the debt is gone."""
    ctl = active(config=ControllerConfig(broker_id=1))
    (w,) = writes(ctl.handle(BrokerChange((BrokerInfo(2, 102), BrokerInfo(3, 103)))))
    (w2,) = writes(_fail(ctl, w.token, LeaderAndIsr(1, 0, (1, 3), 1), 1))
    _fail(ctl, w2.token, LeaderAndIsr(1, 0, (1, 3), 1), 2)
    assert ctl.ctx.owed
    # meanwhile another controller decision landed (leader 3, ISR (3,)): learnt, nothing owed
    (d,) = writes(_notification(ctl, 1, LeaderAndIsr(3, 1, (3,), 1), 3))
    assert not writes(ctl.handle(WriteResult(d.token)))
    assert not ctl.ctx.owed and ctl.leader_and_isr(T0).leader == 3
    assert ctl.partition_state(T0) is PartitionState.OnlinePartition  # its leader is live


def test_wrong_token_is_rejected_not_raised() -> None:
    ctl = active()
    (w,) = writes(ctl.handle(TopicDeletionRequest(frozenset({"ghost"}))))
    assert ctl.handle(WriteResult(w.token + 7)) == []
    assert ctl.awaiting_write == w.token


BAD = [
    BrokerChange((BrokerInfo(2, 1), BrokerInfo(2, 5))),
    BrokerChange((BrokerInfo(-1, 1),)),
    TopicChange(frozenset({"t", "x"}), (("x", TopicAssignment.of({0: (1, 1)})),)),
    TopicChange(frozenset({"t", "x"}), (("x", TopicAssignment.of({0: ()})),)),
    TopicChange(frozenset({"t", "x"}), (("x", TopicAssignment(())),)),
    TopicChange(frozenset({"t", "x"}), (("x", TopicAssignment.of({0: (1,), 2: (2,)})),)),
    TopicChange(frozenset({"t", "x"}), (("x", TopicAssignment.of({0: (-3, 1)})),)),
    PartitionModification("nope", TopicAssignment.of({0: (1,)})),
    PartitionModification("t", TopicAssignment.of({0: (1, 2, 3)})),
    PartitionModification("t", TopicAssignment.of({0: (1, 2, 3), 1: (2, 3, 1), 2: (4, 4)})),
    ReassignmentRequest(((("t", 9), (1, 2)),)),
    ReassignmentRequest(((("nope", 0), (1, 2)),)),
    ReassignmentRequest(((T0, (1, 1)),)),
    ReassignmentRequest(((T0, ()),)),
    ReassignmentRequest(((T0, (1, 9)),)),
    ReassignmentRequest(((T0, (-1, 2)),)),
    IsrChangeNotification((), ((("nope", 0), None),)),
    ControlledShutdown(ControlledShutdownRequest(9, 1), 1),
    ControlledShutdown(ControlledShutdownRequest(2, 1), 1),
    WriteResult(42),
]


@pytest.mark.parametrize("event", BAD, ids=lambda e: type(e).__name__)
def test_bad_input_rejected_state_unchanged(event) -> None:
    ctl = active()
    before = ctl.snapshot()
    n = len(ctl.state_change_log)
    out = ctl.handle(event)
    if isinstance(event, ReassignmentRequest):
        # the rejected entry leaves /admin/reassign_partitions (deleted: none in flight)
        (w,) = writes(out)
        assert w.ops == (DeleteOp("/admin/reassign_partitions"),)
        assert not writes(ctl.handle(WriteResult(w.token)))
        assert ctl.snapshot()[CONTROLLER.context] == before[CONTROLLER.context]  # the cluster state is untouched
    else:
        assert ctl.snapshot() == before
        assert not writes(out)
    if not isinstance(event, (PartitionModification,)) or event.topic == "nope":
        assert any(r.kind == "rejected" for r in ctl.state_change_log[n:])


def test_reassignment_of_topic_being_deleted_rejected() -> None:
    ctl = active()
    broker_change(ctl, 1, 2)  # offline replica keeps the deletion pending
    ctl.handle(TopicDeletionRequest(frozenset({"t"})))
    before = ctl.snapshot()
    out = ctl.handle(ReassignmentRequest(((T0, (1, 2)),)))
    assert ctl.snapshot()[CONTROLLER.context] == before[CONTROLLER.context]
    assert ctl.state_change_log[-1].kind == "rejected"
    assert [op.path for op in writes(out)[0].ops] == ["/admin/reassign_partitions"]


def test_rejected_reassignments_leave_the_znode() -> None:
    """Kafka removes entries it rejects from /admin/reassign_partitions: rewritten with the
    reassignments in flight, deleted when none remain; no write when nothing is dropped."""
    ctl = active(live=(1, 2, 3, 4))
    good, bad = (T0, (2, 3, 4)), (("t", 1), (1, 9))  # broker 9 is not live
    out = feed(ctl, ReassignmentRequest((good, bad, (("nope", 0), (1,)))))
    (op,) = writes(out)[0].ops
    assert isinstance(op, SetDataOp) and op.path == "/admin/reassign_partitions"
    assert op.data == ReassignmentZnode(((T0, (2, 3, 4)),))
    assert ctl.reassignments() == {T0: (2, 3, 4)}  # waiting for the new replica's ISR
    # the rewritten znode fires the watch again: only the one in flight, nothing to drop
    n = len(ctl.state_change_log)
    out = ctl.handle(ReassignmentRequest((good,)))
    assert not writes(out)
    assert all(r.kind != "rejected" for r in ctl.state_change_log[n:])
    # a target equal to the current replicas is done at once: dropped as well
    out = ctl.handle(ReassignmentRequest((good, (("t", 1), (2, 3, 1)))))
    (w,) = writes(out)
    assert w.ops == (SetDataOp("/admin/reassign_partitions",
                               ReassignmentZnode(((T0, (2, 3, 4)),)), -1),)


def test_rejected_reassignment_dropped_on_failover() -> None:
    ctl = active(reassignments=(((("t", 7), (1, 2))),))
    assert ctl.reassignments() == {}
    assert any(r.kind == "rejected" for r in ctl.state_change_log)


def test_rejected_reassignment_dropped_on_failover_write() -> None:
    from fsm.controller import Controller, ControllerConfig
    from fsm.events import ClusterLoaded, ControllerChange
    from fsm.values import ClusterSnapshot, PartitionStateZk

    ctl = Controller(ControllerConfig(broker_id=1))
    (w,) = writes(ctl.handle(ControllerChange(None, 0, 0)))
    ctl.handle(WriteResult(w.token))
    out = ctl.handle(ClusterLoaded(ClusterSnapshot(
        live_brokers=(BrokerInfo(1, 101), BrokerInfo(2, 102)),
        topics=(("t", TopicAssignment.of({0: (1, 2)})),),
        partition_states=((T0, PartitionStateZk(LeaderAndIsr(1, 0, (1, 2), 1), 0)),),
        reassignments=((("t", 5), (1, 2)),))))
    (w,) = writes(out)
    assert DeleteOp("/admin/reassign_partitions") in w.ops


def test_preferred_unknown_partition_only_deletes_admin_znode() -> None:
    ctl = active()
    out = ctl.handle(PreferredElectionRequest(frozenset({("zz", 1)})))
    assert [op.path for op in writes(out)[0].ops] == ["/admin/preferred_replica_election"]
