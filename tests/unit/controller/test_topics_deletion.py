"""Topic creation, partition expansion, topic deletion."""

from __future__ import annotations

from fsm.effects import CreateOp, DeleteOp
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerResponseReceived,
    PartitionModification,
    TimerFired,
    TimerKind,
    TopicChange,
    TopicDeletionRequest,
)
from fsm.partition_states import PartitionState
from fsm.replica_states import ReplicaState
from fsm.requests import ControllerResponse, UpdateMetadataRequest
from fsm.values import TopicAssignment

from .harness import active, broker_change, feed, lai_to, no_illegal, sends, stops, writes

N0, N1, N2 = ("n", 0), ("n", 1), ("n", 2)


def create(ctl, parts):
    return feed(ctl, TopicChange(frozenset(ctl.topic_names() | {"n"}),
                                 (("n", TopicAssignment.of(parts)),)))


def test_topic_creation() -> None:
    ctl = active(live=(1, 2))
    out = create(ctl, {0: (3, 1, 2), 1: (2, 1)})
    (w,) = writes(out)
    ops = {op.path: op for op in w.ops}
    op = ops["/brokers/topics/n/partitions/0/state"]
    assert isinstance(op, CreateOp) and op.make_parents
    assert op.data.leader == 1 and op.data.isr == (1, 2) and op.data.leader_epoch == 0
    assert ctl.partition_state(N0) is PartitionState.OnlinePartition
    assert ctl.replica_state(N0, 1) is ReplicaState.OnlineReplica
    assert ctl.replica_state(N0, 3) is ReplicaState.NewReplica  # its broker is not live
    assert lai_to(out, 1) is not None and lai_to(out, 3) is None
    assert {s.broker_id for s in sends(out, UpdateMetadataRequest)} == {1, 2}
    no_illegal(ctl)


def test_partition_expansion() -> None:
    ctl = active()
    create(ctl, {0: (1, 2)})
    out = feed(ctl, PartitionModification("n", TopicAssignment.of(
        {0: (1, 2), 1: (2, 3), 2: (3, 1)})))
    assert len(writes(out)[0].ops) == 2
    assert ctl.leader_and_isr(N1).leader == 2 and ctl.leader_and_isr(N2).leader == 3


def _delete(ctl):
    return feed(ctl, TopicDeletionRequest(frozenset({"t"})))


def _answer(ctl, broker, tps, error=ErrorCode.NONE):
    resp = ControllerResponse("StopReplica", ErrorCode.NONE, tuple((tp, error) for tp in tps))
    return feed(ctl, BrokerResponseReceived(broker, 100 + broker, "StopReplica", resp,
                                            delete_partitions=True))


def test_deletion_two_phases_and_completion() -> None:
    ctl = active()
    out = _delete(ctl)
    for b in (1, 2, 3):
        s_false, s_true = stops(out, b, False), stops(out, b, True)
        assert s_false is not None and s_true is not None
        assert out.index(next(e for e in out if getattr(e, "request", None) is s_false)) < \
            out.index(next(e for e in out if getattr(e, "request", None) is s_true))
    um = sends(out, UpdateMetadataRequest)
    assert um and all(p.leader == -2 for p in um[0].request.partitions)
    assert ctl.replica_state(("t", 0), 1) is ReplicaState.ReplicaDeletionStarted
    _answer(ctl, 1, [("t", 0), ("t", 1)])
    _answer(ctl, 2, [("t", 0), ("t", 1)])
    assert "t" in ctl.topic_names()
    out = _answer(ctl, 3, [("t", 0), ("t", 1)])
    (w,) = writes(out)
    assert DeleteOp("/brokers/topics/t", recursive=True) in w.ops
    assert DeleteOp("/admin/delete_topics/t") in w.ops
    assert "t" not in ctl.topic_names()
    assert ctl.partition_state(("t", 0)) is PartitionState.NonExistentPartition
    no_illegal(ctl)


def test_deletion_of_unknown_topic_removes_admin_znode() -> None:
    ctl = active()
    out = feed(ctl, TopicDeletionRequest(frozenset({"ghost"})))
    assert writes(out)[0].ops == (DeleteOp("/admin/delete_topics/ghost"),)


def test_deletion_paused_by_offline_replica_resumed_by_join() -> None:
    ctl = active()
    broker_change(ctl, 1, 2)
    out = _delete(ctl)
    assert not stops(out, 1, True)
    assert "t" in ctl.topics_ineligible()
    out = broker_change(ctl, 1, 2, 3)
    assert stops(out, 3, True) is not None
    assert "t" not in ctl.topics_ineligible()
    no_illegal(ctl)


def test_failed_deletion_retried_by_timer() -> None:
    ctl = active()
    _delete(ctl)
    _answer(ctl, 2, [("t", 0)], error=ErrorCode.KAFKA_STORAGE_ERROR)
    assert ctl.replica_state(("t", 0), 2) is ReplicaState.ReplicaDeletionIneligible
    out = feed(ctl, TimerFired(TimerKind.DELETION_RETRY))
    s = stops(out, 2, True)
    assert s is not None and ("t", 0) in s.partitions
    assert ctl.replica_state(("t", 0), 2) is ReplicaState.ReplicaDeletionStarted
    no_illegal(ctl)


def test_deletion_broker_failure_makes_started_replicas_ineligible() -> None:
    ctl = active()
    _delete(ctl)
    broker_change(ctl, 1, 2)
    assert ctl.replica_state(("t", 0), 3) is ReplicaState.ReplicaDeletionIneligible
    no_illegal(ctl)
