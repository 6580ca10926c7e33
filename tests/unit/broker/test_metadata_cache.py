"""UpdateMetadata and the metadata cache (what a MetadataRequest answers)."""

from __future__ import annotations

from fsm.broker import MetadataPartition
from fsm.errors import ErrorCode
from fsm.values import LEADER_DURING_DELETE

from .builders import running, send, um, um_request


def test_update_replaces_entries_brokers_and_controller() -> None:
    core = running()
    assert core.controller_id is None
    response = send(core, um_request(um(("t", 0)), um(("t", 1), leader=2, offline=(3,)),
                                     live=(1, 2, 3), controller_id=2))
    assert response.error is ErrorCode.NONE and response.partition_errors == ()
    cache = core.metadata_cache
    assert cache.controller_id == 2 and core.controller_id == 2
    assert [b.broker_id for b in cache.live_brokers] == [1, 2, 3]
    assert dict(cache.partitions)[("t", 1)] == MetadataPartition(2, 1, (1, 2, 3), (1, 2, 3), (3,))
    # a second update replaces the named entry, keeps the others, replaces the brokers
    send(core, um_request(um(("t", 0), leader=3, leader_epoch=2, isr=(3,)), live=(3,),
                          controller_id=3))
    cache = core.metadata_cache
    assert dict(cache.partitions)[("t", 0)] == MetadataPartition(3, 2, (3,), (1, 2, 3), ())
    assert ("t", 1) in dict(cache.partitions)
    assert [b.broker_id for b in cache.live_brokers] == [3] and cache.controller_id == 3


def test_leader_minus_two_removes_the_partition() -> None:
    core = running()
    send(core, um_request(um(("t", 0)), um(("t", 1)), um(("u", 0))))
    send(core, um_request(um(("t", 0), leader=LEADER_DURING_DELETE, isr=(), replicas=()),
                          um(("t", 1), leader=LEADER_DURING_DELETE)))
    assert [tp for tp, _ in core.metadata_cache.partitions] == [("u", 0)]
    # removing what is not there is fine
    assert send(core, um_request(um(("v", 0), leader=LEADER_DURING_DELETE))).error \
        is ErrorCode.NONE


def test_topic_metadata_answers_unknown_topics() -> None:
    core = running()
    send(core, um_request(um(("t", 1)), um(("t", 0)), um(("u", 0), leader=-1, isr=())))
    answer = core.topic_metadata(["t", "nope"])
    assert answer[0].topic == "t" and answer[0].error is ErrorCode.NONE
    assert [p for p, _ in answer[0].partitions] == [0, 1]
    assert answer[1].error is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert [t.topic for t in core.topic_metadata()] == ["t", "u"]
    assert dict(core.topic_metadata(["u"])[0].partitions)[0].leader == -1


def test_malformed_update_rejected_cache_untouched() -> None:
    core = running()
    send(core, um_request(um(("t", 0)), controller_id=1))
    before = core.snapshot()
    bad_requests = [
        um_request(um(("t", 0)), um(("t", 0), leader=2)),  # partition twice
        um_request(um(("t", 1), replicas=())),  # no replicas
        um_request(um(("t", 1), leader=7)),  # leader not a replica
        um_request(um(("t", 1), isr=(1, 1))),  # ISR names a broker twice
        um_request(um(("t", 1), offline=(9,))),  # offline not a replica
        um_request(um(("", 1))),  # empty topic name
        um_request(um(("t", 1)), live=(2, 2)),  # broker twice
    ]
    for request in bad_requests:
        assert send(core, request).error is ErrorCode.INVALID_REQUEST
        assert core.snapshot() == before
    assert core.controller_id == 1
