"""The write protocol (BadVersion retry once) and rejection of malformed input."""

from __future__ import annotations

import pytest

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
from fsm.requests import ControlledShutdownRequest
from fsm.values import BrokerInfo, LeaderAndIsr, TopicAssignment
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
        assert ctl.snapshot()[-1] == before[-1]  # the cluster state is untouched
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
    assert ctl.snapshot()[-1] == before[-1]
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
