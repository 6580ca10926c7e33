"""CreateTopics, DeleteTopics, CreatePartitions."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.placement import place, rack_alternated
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import PartitionRecord, RemoveTopicRecord, TopicRecord
from tests.unit.kraft.controller.harness import Harness


def test_create_writes_topic_then_partitions_with_usable_isr() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.register(4)  # fenced: never placed, never in an ISR
    result = h.create("orders", 4, 3)
    assert result.error == ErrorCode.NONE and result.num_partitions == 4
    tail = h.log[-5:]
    assert isinstance(tail[0], TopicRecord) and tail[0].name == "orders"
    assert all(isinstance(r, PartitionRecord) for r in tail[1:])
    for r in tail[1:]:
        assert 4 not in r.replicas and len(set(r.replicas)) == 3
        assert r.isr == r.replicas and r.leader == r.replicas[0]
        assert r.leader_epoch == 0 and r.partition_epoch == 0


def test_validation_errors_per_topic() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("a", 1, 2)
    resp = h.ask(rq.CreateTopicsRequest(
        (rq.CreatableTopic("a", 1, 1), rq.CreatableTopic("bad/name", 1, 1),
         rq.CreatableTopic("c", 0, 1), rq.CreatableTopic("d", 1, 3),
         rq.CreatableTopic("e", assignments=((0, (1, 9)),)),
         rq.CreatableTopic("f", assignments=((1, (1,)),)),
         rq.CreatableTopic("ok", 2, 2)),
        tuple(uuid_of(500 + i) for i in range(7))))
    errors = {t.name: t.error for t in resp.topics}
    assert errors == {"a": ErrorCode.TOPIC_ALREADY_EXISTS,
                      "bad/name": ErrorCode.INVALID_TOPIC_EXCEPTION,
                      "c": ErrorCode.INVALID_PARTITIONS,
                      "d": ErrorCode.INVALID_REPLICATION_FACTOR,
                      "e": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "f": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "ok": ErrorCode.NONE}
    assert h.ctl.image.topic("ok") is not None and h.ctl.image.topic("c") is None


def test_an_uncommitted_topic_already_exists_for_the_next_request() -> None:
    h = Harness()
    h.start_brokers(1)
    h.auto_commit = False
    first = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("x", 1, 1),), (uuid_of(1),)))
    second = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("x", 1, 1),), (uuid_of(2),)))
    assert first not in h.replies and second not in h.replies, "nothing answered uncommitted"
    assert h.ctl.committed.topic("x") is None and h.ctl.image.topic("x") is not None
    h.commit()
    assert h.replies.pop(first).topics[0].error == ErrorCode.NONE
    assert h.replies.pop(second).topics[0].error == ErrorCode.TOPIC_ALREADY_EXISTS


def test_placement_is_rack_aware() -> None:
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    assert rack_alternated(racks) == [1, 3, 5, 2, 4, 6]
    for start in range(6):
        for replicas in place(racks, 12, 3, start):
            assert len({racks[b] for b in replicas}) == 3
    for replicas in place({1: "a", 2: "a", 3: "b"}, 6, 3, 0):
        assert sorted(replicas) == [1, 2, 3]
    leaders = [r[0] for r in place(racks, 6, 2, 0)]
    assert sorted(leaders) == [1, 2, 3, 4, 5, 6], "leaders spread over every broker"


def test_delete_is_one_record_and_ends_a_reassignment() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3, 4)
    h.create("t", 1, 2, ((0, (1, 2)),))
    h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0, (3, 4)),)))
    assert h.partition("t").reassigning
    n = len(h.log)
    resp = h.ask(rq.DeleteTopicsRequest(("t", "nope")))
    assert [t.error for t in resp.topics] == [ErrorCode.NONE,
                                              ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert len(h.log) == n + 1 and isinstance(h.log[-1], RemoveTopicRecord)
    assert h.ctl.image.topic("t") is None
    listed = h.ask(rq.ListPartitionReassignmentsRequest())
    assert listed.reassignments == ()
    assert h.ask(rq.DeleteTopicsRequest(topic_ids=(uuid_of(3),))).topics[0].error == \
        ErrorCode.UNKNOWN_TOPIC_ID


def test_create_partitions() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 2, 2)
    resp = h.ask(rq.CreatePartitionsRequest((rq.CreatePartitionsTopic("t", 4),
                                             rq.CreatePartitionsTopic("t2", 4))))
    assert [r.error for r in resp.results] == [ErrorCode.NONE,
                                               ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    t = h.ctl.image.topic("t")
    assert sorted(t.partitions) == [0, 1, 2, 3]
    assert all(len(p.replicas) == 2 for p in t.partitions.values())
    again = h.ask(rq.CreatePartitionsRequest((rq.CreatePartitionsTopic("t", 3),)))
    assert again.results[0].error == ErrorCode.INVALID_PARTITIONS
    manual = h.ask(rq.CreatePartitionsRequest((rq.CreatePartitionsTopic("t", 5, ((3,),)),)))
    assert manual.results[0].error == ErrorCode.INVALID_REPLICA_ASSIGNMENT
