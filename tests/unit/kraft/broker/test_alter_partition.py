"""The leader's AlterPartition: one request in flight per partition, the latest wish queued,
stale epochs never resent, the controller's answer taken as committed."""

from __future__ import annotations

import pytest

from fsm.errors import ErrorCode
from fsm.kraft.broker.effects import SendToController, UpdateIsr
from fsm.kraft.broker.events import (
    ControllerUnreachable,
    HeartbeatDue,
    IsrChangesWanted,
    IsrChangeWanted,
    MetadataFetched,
)
from fsm.kraft.controller.requests import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResult,
)
from fsm.kraft.records.values import PartitionChangeRecord
from tests.unit.kraft.broker.walk import ME, T1, T2, answer, of, running, sent

OK = ErrorCode.NONE


def _want(core, isr, topic=T1, partition=0):  # type: ignore[no-untyped-def]
    return core.handle(IsrChangesWanted((IsrChangeWanted(topic, partition, isr),)))


def test_the_leader_sends_its_epochs_from_the_image() -> None:
    core, _ = running()
    # the ISR of t1-0 changed once by the controller: partition epoch 1
    core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, isr=(1, 2, 3)),)))
    request = sent(_want(core, (1, 2)))
    assert request == AlterPartitionRequest(ME, 0, (AlterPartitionItem(T1, 0, 0, (1, 2), 1),))


def test_only_the_leader_asks() -> None:
    core, _ = running()
    assert _want(core, (3,), topic=T2) == []  # a follower
    assert _want(core, (1,), partition=2) == []  # not a replica
    assert _want(core, "1,2") == [] and _want(core, ()) == [] and _want(core, (1, 1)) == []
    assert core.alter_partition_in_flight() == ()


def test_one_in_flight_per_partition_and_the_latest_wish_waits() -> None:
    core, _ = running()
    first = sent(_want(core, (1, 2)))
    assert _want(core, (1,)) == []
    assert _want(core, (1, 3)) == []  # replaces the queued (1,)
    assert [k for k, _ in core.queued_isr_wishes()] == [(T1, 0)]
    # accepted: the leader takes the committed ISR, then sends the queued wish on top of it
    effects = answer(core, first, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, ME, 0, (1, 2), 1),)))
    assert of(effects, UpdateIsr) == [UpdateIsr(T1, 0, 0, 1, (1, 2))]
    second = sent(effects)
    assert second.partitions == (AlterPartitionItem(T1, 0, 0, (1, 3), 1),)
    # the record of the first change replayed later changes nothing more
    assert core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, isr=(1, 2)),))) == []
    assert core.replica(T1, 0).isr == (1, 2)  # type: ignore[union-attr]


@pytest.mark.parametrize("error", [ErrorCode.FENCED_LEADER_EPOCH,
                                   ErrorCode.INVALID_UPDATE_VERSION,
                                   ErrorCode.UNKNOWN_TOPIC_ID])
def test_a_stale_epoch_drops_the_wish_and_waits_for_metadata(error: ErrorCode) -> None:
    core, _ = running()
    first = sent(_want(core, (1, 2)))
    _want(core, (1,))
    effects = answer(core, first, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, error),)))
    assert effects == []
    assert core.alter_partition_in_flight() == () and core.queued_isr_wishes() == ()
    # nothing is resent later with the stale epochs
    assert of(core.handle(HeartbeatDue(6000)), SendToController)[0].request.__class__.__name__ \
        == "BrokerHeartbeatRequest"
    # the metadata arrives; the replication layer asks again, with the new epochs
    core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, isr=(1, 3)),)))
    assert sent(_want(core, (1,))).partitions == (AlterPartitionItem(T1, 0, 0, (1,), 1),)


def test_the_controller_may_commit_another_isr_than_asked() -> None:
    core, _ = running()
    # t1-0 [1, 2, 3] is being reassigned to [1, 3]; only 1 is in the ISR (partition epoch 1)
    core.handle(MetadataFetched(12, (PartitionChangeRecord(
        0, T1, isr=(1,), removing_replicas=(2,)),)))
    request = sent(_want(core, (1, 2, 3)))
    assert request.partitions == (AlterPartitionItem(T1, 0, 0, (1, 2, 3), 1),)
    # seed 004: the ISR now holds the target, the controller finishes the reassignment and
    # prunes the ISR of the removed replica
    effects = answer(core, request, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, ME, 0, (1, 3), 2),)))
    assert effects == [UpdateIsr(T1, 0, 0, 2, (1, 3))]
    # an answer naming another leader is left to the metadata
    request = sent(_want(core, (1,)))
    assert answer(core, request, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, 3, 1, (3,), 3),))) == []
    assert core.replica(T1, 0).leader_epoch == 0  # type: ignore[union-attr]


@pytest.mark.parametrize("failure", ["unreachable", "not-controller", "missing"])
def test_a_lost_request_is_resent_at_the_next_heartbeat_with_fresh_epochs(failure: str) -> None:
    core, _ = running()
    request = sent(_want(core, (1, 2)))
    if failure == "unreachable":
        assert core.handle(ControllerUnreachable(request)) == []
    elif failure == "not-controller":
        assert answer(core, request, AlterPartitionResponse(ErrorCode.NOT_CONTROLLER)) == []
    else:
        assert answer(core, request, AlterPartitionResponse(OK, ())) == []
    # meanwhile the controller changed the ISR (partition epoch 1)
    core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, isr=(1, 2, 3)),)))
    requests = [e.request for e in core.handle(HeartbeatDue(6000))
                if isinstance(e, SendToController)]
    assert requests[0].partitions == (AlterPartitionItem(T1, 0, 0, (1, 2), 1),)


def test_a_wish_of_a_lost_leadership_is_dropped() -> None:
    core, _ = running()
    first = sent(_want(core, (1, 2)))
    _want(core, (1,))
    # broker 2 becomes leader (leader epoch 1): the queued wish is dropped at replay
    core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, leader=2),)))
    assert core.queued_isr_wishes() == ()
    assert answer(core, first, AlterPartitionResponse(ErrorCode.NOT_CONTROLLER)) == []
    assert [e for e in core.handle(HeartbeatDue(6000))
            if isinstance(e, SendToController)
            and isinstance(e.request, AlterPartitionRequest)] == []
    # an answer to a request no longer in flight is ignored
    assert answer(core, first, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, ME, 0, (1, 2), 1),))) == []


def test_records_older_than_an_answer_do_not_roll_the_isr_back() -> None:
    core, _ = running()
    first = sent(_want(core, (1, 2)))
    second = sent(answer(core, first, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, ME, 0, (1, 2), 1),))) + _want(core, (1,)))
    assert answer(core, second, AlterPartitionResponse(OK, (
        AlterPartitionResult(T1, 0, OK, ME, 0, (1,), 2),))) == [UpdateIsr(T1, 0, 0, 2, (1,))]
    # the broker fetches the two committed records afterwards, one batch each
    assert core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, isr=(1, 2)),))) == []
    assert core.replica(T1, 0).isr == (1,)  # type: ignore[union-attr]
    assert core.handle(MetadataFetched(13, (PartitionChangeRecord(0, T1, isr=(1,)),))) == []


def test_several_wishes_go_as_one_request() -> None:
    core, _ = running()
    core.handle(MetadataFetched(12, (PartitionChangeRecord(1, T1, leader=ME),)))  # leads t1-1
    request = sent(core.handle(IsrChangesWanted((
        IsrChangeWanted(T1, 0, (1, 2)),
        IsrChangeWanted(T2, 0, (3,)),  # a follower there: ignored, the others still go
        IsrChangeWanted(T1, 1, (1, 3)),
    ))))
    assert [(i.topic_id, i.partition_id, i.new_isr) for i in request.partitions] == [
        (T1, 0, (1, 2)), (T1, 1, (1, 3))]
    assert core.alter_partition_in_flight() == ((T1, 0), (T1, 1))
    # still one in flight per partition: a second batch waits behind the first
    assert core.handle(IsrChangesWanted((IsrChangeWanted(T1, 0, (1,)),))) == []
    assert [k for k, _ in core.queued_isr_wishes()] == [(T1, 0)]
    # malformed: ignored, nothing lost
    assert core.handle(IsrChangesWanted("t1-0")) == []  # type: ignore[arg-type]
    assert core.handle(IsrChangesWanted(((T1, 0, (1,)),))) == []  # type: ignore[arg-type]
    assert core.alter_partition_in_flight() == ((T1, 0), (T1, 1))
