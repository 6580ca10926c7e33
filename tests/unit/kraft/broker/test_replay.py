"""Committed records replayed through the image, and the replica roles they give: leader,
follower and delete effects exactly once, nothing before the broker has caught up."""

from __future__ import annotations

import pytest

from fsm.errors import ErrorCode
from fsm.kraft.broker import Role
from fsm.kraft.broker.effects import (
    BecomeFollower,
    BecomeLeader,
    DeleteReplica,
    LifecycleChange,
    ScheduleHeartbeat,
    UpdateIsr,
)
from fsm.kraft.broker.events import HeartbeatDue, MetadataFetched
from fsm.kraft.controller.requests import BrokerHeartbeatResponse
from fsm.kraft.image import MetadataImage, image_from_records
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from fsm.raft.messages import LeaderChange
from tests.unit.kraft.broker.walk import (
    T1,
    T2,
    S,
    answer,
    cluster_records,
    registered,
    running,
    sent,
)

T3 = uuid_of(3)
OK = ErrorCode.NONE


def test_nothing_starts_before_the_broker_has_caught_up() -> None:
    core, hb = registered()
    assert core.handle(MetadataFetched(0, tuple(cluster_records()))) == []
    assert core.replicas() == ()
    assert core.metadata_offset == 11
    assert core.image == image_from_records(cluster_records())  # the controller's replay


def test_recovery_deletes_stray_replicas_and_starts_the_assigned_ones() -> None:
    # local logs: t1-0 (still ours), t1-2 (reassigned away), t3-0 (topic deleted meanwhile)
    local = ((T1, 0), (T1, 2), (T3, 0))
    core, effects = running(local=local)
    assert effects == [
        LifecycleChange(S.STARTING, S.RECOVERY),
        DeleteReplica(T1, 2), DeleteReplica(T3, 0),
        BecomeLeader(T1, 0, 0, (1, 2, 3)),
        BecomeFollower(T1, 1, 2, 0),
        BecomeFollower(T2, 0, 3, 0),
        ScheduleHeartbeat(10),
    ]
    assert [r.role for _, r in core.replicas()] == [Role.LEADER, Role.FOLLOWER, Role.FOLLOWER]


def test_each_change_gives_its_effect_exactly_once() -> None:
    core, _ = running()
    fetch = MetadataFetched(12, (
        TopicRecord("t3", T3),
        PartitionRecord(0, T3, (1, 2), (1, 2), leader=2),  # a new follower
        PartitionChangeRecord(1, T1, leader=1),  # follower -> leader, epoch 1
        PartitionChangeRecord(0, T2, isr=(3,)),  # ISR only: a follower does not care
        PartitionChangeRecord(2, T1, isr=(2,)),  # not ours
    ))
    assert core.handle(fetch) == [
        BecomeFollower(T3, 0, 2, 0),
        BecomeLeader(T1, 1, 1, (2, 1, 3)),
    ]
    assert core.metadata_offset == 16
    # the same batch again (fetched twice) is skipped: no effect, no error
    assert core.handle(fetch) == []
    # a leader's ISR changed by the controller within its epoch: UpdateIsr, once
    change = PartitionChangeRecord(0, T1, isr=(1, 2))
    assert core.handle(MetadataFetched(17, (change,))) == [UpdateIsr(T1, 0, 0, 1, (1, 2))]
    # leader -> follower (a new leader epoch), then the leader changes again
    assert core.handle(MetadataFetched(18, (PartitionChangeRecord(0, T1, leader=2),))) == [
        BecomeFollower(T1, 0, 2, 1)]
    assert core.handle(MetadataFetched(19, (PartitionChangeRecord(0, T1, leader=-1),))) == [
        BecomeFollower(T1, 0, -1, 2)]
    assert core.metadata_offset == 19


def test_leaving_the_replicas_deletes_the_replica() -> None:
    core, _ = running()
    # reassignment [2, 1, 3] -> [2, 3]: broker 1 is removed from t1-1
    effects = core.handle(MetadataFetched(12, (
        PartitionChangeRecord(1, T1, replicas=(2, 1, 3), adding_replicas=(), isr=(2, 1, 3),
                              removing_replicas=(1,)),
        PartitionChangeRecord(1, T1, replicas=(2, 3), isr=(2, 3), removing_replicas=()),
    )))
    assert effects == [DeleteReplica(T1, 1)]
    assert core.replica(T1, 1) is None


def test_remove_topic_deletes_every_local_replica_of_the_topic() -> None:
    core, _ = running()
    assert core.handle(MetadataFetched(12, (RemoveTopicRecord(T1),))) == [
        DeleteReplica(T1, 0), DeleteReplica(T1, 1)]
    assert core.replica(T1, 0) is None and core.replica(T2, 0) is not None
    assert core.image.topic("t1") is None
    # deleted once: replaying further records does not delete it again
    assert core.handle(MetadataFetched(13, (RemoveTopicRecord(T2),))) == [DeleteReplica(T2, 0)]


def test_fencing_another_broker_changes_no_role() -> None:
    core, _ = running()
    assert core.handle(MetadataFetched(12, (FenceBrokerRecord(3, 2),))) == []
    assert not core.image.brokers[1].fenced and core.image.brokers[3].fenced


def test_a_gap_is_refused_and_the_offset_is_reported() -> None:
    core, _ = running()
    assert core.handle(MetadataFetched(20, (RemoveTopicRecord(T1),))) == []
    assert core.metadata_offset == 11 and core.image.topic("t1") is not None
    hb = sent(core.handle(HeartbeatDue(6000)))
    assert hb.current_metadata_offset == 11


def test_a_raft_control_record_takes_its_offset_and_is_not_replayed() -> None:
    core, _ = running()
    before = core.image.copy()
    fetch = MetadataFetched(12, (LeaderChange(3001, (3000, 3001)),
                                 PartitionChangeRecord(1, T1, leader=1)))
    effects = core.handle(fetch)
    assert core.metadata_offset == 13
    assert core.image.partition(T1, 1).leader == 1
    assert before.partition(T1, 1).leader == 2
    assert BecomeLeader(T1, 1, 1, (2, 1, 3)) in effects
    assert core.handle(MetadataFetched(14, (LeaderChange(3000, (3000, 3001)),))) == []
    assert core.metadata_offset == 14


def test_records_arriving_while_starting_start_nothing_until_recovery() -> None:
    core, hb = registered()
    records = cluster_records()
    core.handle(MetadataFetched(0, tuple(records[:8])))
    core.handle(MetadataFetched(8, tuple(records[8:])))
    effects = answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=True))
    assert BecomeLeader(T1, 0, 0, (1, 2, 3)) in effects
    assert len([e for e in effects if isinstance(e, (BecomeLeader, BecomeFollower))]) == 3


def test_a_record_that_does_not_replay_raises() -> None:
    core, _ = running()
    with pytest.raises(ValueError, match="unknown"):
        core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T3, isr=(1,)),)))
    assert isinstance(core.image, MetadataImage)


def test_a_copy_is_independent_and_behaves_the_same() -> None:
    core, _ = running()
    twin = core.copy()
    fetch = MetadataFetched(12, (PartitionChangeRecord(1, T1, leader=1),
                                 RemoveTopicRecord(T2)))
    effects = core.handle(fetch)
    assert twin.metadata_offset == 11 and twin.image.topic("t2") is not None
    assert twin.replica(T2, 0) is not None and twin.state is core.state
    assert twin.handle(fetch) == effects
    assert twin.image == core.image and twin.replicas() == core.replicas()


def test_replica_counts_follow_the_replicas() -> None:
    core, _ = running()
    assert core.replica_counts() == (3, 1)  # leads t1-0, follows t1-1 and t2-0
    assert core.replica_count == 3
    core.handle(MetadataFetched(12, (PartitionChangeRecord(1, T1, leader=1),
                                     PartitionChangeRecord(0, T2, leader=1))))
    assert core.replica_counts() == (3, 3)
    core.handle(MetadataFetched(14, (RemoveTopicRecord(T2),)))
    assert core.replica_counts() == (2, 2)
