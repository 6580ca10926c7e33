"""The write protocol (BadVersion retry once) and rejection of malformed input."""

from __future__ import annotations

import pytest

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

from .harness import active, broker_change, writes

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
    assert ctl.snapshot() == before
    assert not writes(out)
    if not isinstance(event, (PartitionModification,)) or event.topic == "nope":
        assert any(r.kind == "rejected" for r in ctl.state_change_log[n:])


def test_reassignment_of_topic_being_deleted_rejected() -> None:
    ctl = active()
    broker_change(ctl, 1, 2)  # offline replica keeps the deletion pending
    ctl.handle(TopicDeletionRequest(frozenset({"t"})))
    before = ctl.snapshot()
    ctl.handle(ReassignmentRequest(((T0, (1, 2)),)))
    assert ctl.snapshot() == before
    assert ctl.state_change_log[-1].kind == "rejected"


def test_preferred_unknown_partition_only_deletes_admin_znode() -> None:
    ctl = active()
    out = ctl.handle(PreferredElectionRequest(frozenset({("zz", 1)})))
    assert [op.path for op in writes(out)[0].ops] == ["/admin/preferred_replica_election"]
