"""A snapshot fetched from the quorum's leader replaces the broker's image whole: the offset
moves to its end, an older one is ignored, and once replicas run every partition the old or
new image gives this broker is reconciled (roles folded into the snapshot are not missed)."""

from __future__ import annotations

from fsm.kraft.broker.effects import BecomeFollower, BecomeLeader, DeleteReplica
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded
from fsm.kraft.image import image_from_records, snapshot_records
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from tests.unit.kraft.broker.walk import T1, T2, cluster_records, registered, running

T3 = uuid_of(3)


def _snapshot(extra: list) -> tuple:  # type: ignore[type-arg]
    return tuple(snapshot_records(image_from_records(cluster_records() + extra)))


def test_a_snapshot_before_catching_up_replaces_the_image_and_starts_nothing() -> None:
    core, _ = registered()
    records = _snapshot([TopicRecord("t3", T3), PartitionRecord(0, T3, (1,), (1,), leader=1)])
    assert core.handle(MetadataSnapshotLoaded(40, records)) == []
    assert core.metadata_offset == 39
    assert core.image == image_from_records(records)
    assert core.replicas() == ()
    # the log goes on from the snapshot's end
    core.handle(MetadataFetched(40, (TopicRecord("t4", uuid_of(4)),)))
    assert core.metadata_offset == 40 and core.image.topic("t4") is not None


def test_an_older_snapshot_is_ignored() -> None:
    core, _ = registered()
    core.handle(MetadataFetched(0, tuple(cluster_records())))  # offsets 0-11
    before = core.image.copy()
    assert core.handle(MetadataSnapshotLoaded(12, _snapshot([TopicRecord("x", T3)]))) == []
    assert core.metadata_offset == 11 and core.image == before


def test_a_running_broker_reconciles_what_the_snapshot_folded_in() -> None:
    core, _ = running()  # leads t1-0, follows t1-1 (leader 2) and t2-0 (leader 3)
    # folded into the snapshot: t2 removed, t1-1 now led by us, t3-0 new and followed
    changes = [PartitionChangeRecord(1, T1, leader=1), RemoveTopicRecord(T2),
               TopicRecord("t3", T3), PartitionRecord(0, T3, (2, 1), (2, 1), leader=2)]
    effects = core.handle(MetadataSnapshotLoaded(100, _snapshot(changes)))
    assert sorted(effects, key=repr) == sorted([
        BecomeLeader(T1, 1, 1, (2, 1, 3)),
        DeleteReplica(T2, 0),
        BecomeFollower(T3, 0, 2, 0),
    ], key=repr)
    assert core.metadata_offset == 99
    assert {k for k, _ in core.replicas()} == {(T1, 0), (T1, 1), (T3, 0)}
