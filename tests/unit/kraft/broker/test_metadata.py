"""Client Metadata answered from the replayed image: fenced and unregistered brokers left
out, brokers in controlled shutdown kept, leaderless partitions shown with leader -1."""

from __future__ import annotations

from fsm.broker.views import MetadataPartition
from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.effects import ReplyMetadata
from fsm.kraft.broker.events import MetadataFetched, MetadataRequest
from fsm.kraft.records.values import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    UnregisterBrokerRecord,
)
from fsm.values import Endpoint
from tests.unit.kraft.broker.walk import T1, cluster_records, config, registered, running


def _ask(core: KRaftBroker, topics: tuple[str, ...] | None = None):  # type: ignore[no-untyped-def]
    (reply,) = core.handle(MetadataRequest("tok", topics))
    assert isinstance(reply, ReplyMetadata) and reply.token == "tok"
    return reply.response


def test_the_answer_from_the_image() -> None:
    core, _ = running()
    answer = _ask(core)
    assert answer.cluster_id == "cluster-a" and answer.controller_id == 1
    assert [b.broker_id for b in answer.live_brokers] == [1, 2, 3]
    assert answer.live_brokers[0].endpoints == (Endpoint("PLAINTEXT", "b1", 9092, "PLAINTEXT"),)
    assert [t.topic for t in answer.topics] == ["t1", "t2"]
    assert dict(answer.topics[0].partitions)[0] == MetadataPartition(1, 0, (1, 2, 3),
                                                                      (1, 2, 3), ())


def test_fenced_and_unregistered_brokers_are_left_out() -> None:
    core, _ = running()
    core.handle(MetadataFetched(12, (
        PartitionChangeRecord(1, T1, leader=1, isr=(1, 3)),  # leaders move off 2, then
        PartitionChangeRecord(2, T1, leader=3, isr=(3,)),
        FenceBrokerRecord(2, 1),  # 2 is fenced
        BrokerRegistrationChangeRecord(3, 2, in_controlled_shutdown=1),
    )))
    answer = _ask(core)
    assert [b.broker_id for b in answer.live_brokers] == [1, 3]  # 3 is shutting down: listed
    parts = dict(answer.topics[0].partitions)
    assert parts[0].offline_replicas == (2,) and parts[0].replicas == (1, 2, 3)
    core.handle(MetadataFetched(16, (UnregisterBrokerRecord(3, 2),)))
    answer = _ask(core, ("t1",))
    assert [b.broker_id for b in answer.live_brokers] == [1]
    # t1-2's leader 3 is gone: leader -1 (LEADER_NOT_AVAILABLE on the wire)
    part = dict(answer.topics[0].partitions)[2]
    assert part.leader == -1 and part.offline_replicas == (2, 3) and part.leader_epoch == 1


def test_unknown_topics_and_leaderless_partitions() -> None:
    core, _ = running()
    core.handle(MetadataFetched(12, (PartitionChangeRecord(0, T1, leader=-1),)))
    answer = _ask(core, ("nope", "t1", "t1"))
    assert [(t.topic, t.error) for t in answer.topics] == [
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ("t1", ErrorCode.NONE)]
    assert dict(answer.topics[1].partitions)[0].leader == -1


def test_only_what_was_replayed_is_answered() -> None:
    core, _ = registered()
    assert _ask(core).live_brokers == () and _ask(core).controller_id is None
    core.handle(MetadataFetched(0, tuple(cluster_records()[:3])))  # registered, all fenced
    assert _ask(core).live_brokers == () and _ask(core).topics == ()
    assert KRaftBroker(config()).handle(MetadataRequest(1, None))[0].response.topics == ()
