"""``kraft_convert``: value -> wire -> value round trips through whole frames for every API
and every version that can carry the value (hypothesis draws the values); what a version
cannot say is a clear ``EncodeError`` / ``DecodeError``; ``error_response`` answers every
item of a request with the one error."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode as KioErrorCode  # generated from Kafka's Errors

from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.kraft_registry import KRAFT_SUPPORTED, KRaftApiKey, api_name
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import ZERO_UUID
from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature

K = KRaftApiKey
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

i16 = st.integers(-(2**15), 2**15 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
text = st.text(max_size=8)
opt_text = st.none() | text
uuid = st.binary(min_size=16, max_size=16).filter(lambda u: u != ZERO_UUID)
replicas = st.lists(i32, max_size=4).map(tuple)
errors = st.sampled_from(list(ErrorCode))
topics = st.sampled_from(["a", "b", "c"])  # few names: groups of several partitions


def _by_topic(items: list[Any], topic: str = "topic") -> tuple[Any, ...]:
    """Items ordered as the wire groups them: by topic, in order of first appearance."""
    order: dict[Any, int] = {}
    for item in items:
        order.setdefault(getattr(item, topic), len(order))
    return tuple(sorted(items, key=lambda item: order[getattr(item, topic)]))


def grouped(strategy: st.SearchStrategy[Any], topic: str = "topic"
            ) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(strategy, max_size=5).map(lambda xs: _by_topic(xs, topic))


pairs = st.lists(st.tuples(topics, i32), max_size=5).map(
    lambda xs: tuple(sorted(xs, key=lambda tp: [t for t, _ in xs].index(tp[0]))))

REQUESTS: dict[int, st.SearchStrategy[Any]] = {
    K.BROKER_REGISTRATION: st.builds(
        rq.BrokerRegistrationRequest, i32, text, uuid,
        st.lists(st.builds(BrokerEndpoint, text, text, st.integers(0, 65535), i16),
                 max_size=3).map(tuple),
        st.lists(st.builds(BrokerFeature, text, i16, i16), max_size=3).map(tuple), opt_text),
    K.BROKER_HEARTBEAT: st.builds(rq.BrokerHeartbeatRequest, i32, i64, i64, st.booleans(),
                                  st.booleans()),
    K.UNREGISTER_BROKER: st.builds(rq.UnregisterBrokerRequest, i32),
    K.CREATE_TOPICS: st.builds(
        rq.CreateTopicsRequest,
        st.lists(st.builds(rq.CreatableTopic, text, i32, i16,
                           st.lists(st.tuples(i32, replicas), max_size=3).map(tuple),
                           st.lists(st.tuples(text, text), max_size=3).map(tuple)),
                 max_size=3).map(tuple),
        st.just(()), st.booleans()),
    K.DELETE_TOPICS: st.builds(rq.DeleteTopicsRequest, st.lists(text, max_size=3).map(tuple),
                               st.lists(uuid, max_size=3).map(tuple)),
    K.CREATE_PARTITIONS: st.builds(
        rq.CreatePartitionsRequest,
        st.lists(st.builds(rq.CreatePartitionsTopic, text, i32,
                           st.none() | st.lists(replicas, max_size=3).map(tuple)),
                 max_size=3).map(tuple),
        st.booleans()),
    K.ELECT_LEADERS: st.builds(rq.ElectLeadersRequest, st.sampled_from([0, 1]),
                               st.none() | pairs),
    K.ALTER_PARTITION_REASSIGNMENTS: st.builds(
        rq.AlterPartitionReassignmentsRequest,
        grouped(st.builds(rq.ReassignablePartition, topics, i32, st.none() | replicas))),
    K.LIST_PARTITION_REASSIGNMENTS: st.builds(rq.ListPartitionReassignmentsRequest,
                                              st.none() | pairs),
    K.ALTER_PARTITION: st.builds(
        rq.AlterPartitionRequest, i32, i64,
        grouped(st.builds(rq.AlterPartitionItem, st.sampled_from([b"\1" * 16, b"\2" * 16]),
                          i32, i32, replicas, i32), "topic_id")),
    K.DESCRIBE_CLUSTER: st.builds(rq.DescribeClusterRequest, st.booleans()),
}

RESPONSES: dict[int, st.SearchStrategy[Any]] = {
    K.BROKER_REGISTRATION: st.builds(rq.BrokerRegistrationResponse, errors, i64),
    K.BROKER_HEARTBEAT: st.builds(rq.BrokerHeartbeatResponse, errors, st.booleans(),
                                  st.booleans(), st.booleans()),
    K.UNREGISTER_BROKER: st.builds(rq.UnregisterBrokerResponse, errors),
    K.CREATE_TOPICS: st.builds(rq.CreateTopicsResponse, st.lists(st.builds(
        rq.CreatableTopicResult, text, uuid, errors, opt_text, i32, i16), max_size=3).map(tuple)),
    K.DELETE_TOPICS: st.builds(rq.DeleteTopicsResponse, st.lists(st.builds(
        rq.DeletableTopicResult, opt_text, uuid, errors, opt_text), max_size=3).map(tuple)),
    K.CREATE_PARTITIONS: st.builds(rq.CreatePartitionsResponse, st.lists(st.builds(
        rq.CreatePartitionsTopicResult, text, errors, opt_text), max_size=3).map(tuple)),
    K.ELECT_LEADERS: st.builds(rq.ElectLeadersResponse, errors, grouped(st.builds(
        rq.ElectionResult, topics, i32, errors, opt_text))),
    K.ALTER_PARTITION_REASSIGNMENTS: st.builds(
        rq.AlterPartitionReassignmentsResponse, errors,
        grouped(st.builds(rq.ReassignablePartitionResult, topics, i32, errors, opt_text))),
    K.LIST_PARTITION_REASSIGNMENTS: st.builds(
        rq.ListPartitionReassignmentsResponse, errors,
        grouped(st.builds(rq.OngoingReassignment, topics, i32, replicas, replicas, replicas))),
    K.ALTER_PARTITION: st.builds(
        rq.AlterPartitionResponse, errors,
        grouped(st.builds(rq.AlterPartitionResult, st.sampled_from([b"\1" * 16, b"\2" * 16]),
                          i32, errors, i32, i32, replicas, i32), "topic_id")),
    K.DESCRIBE_CLUSTER: st.builds(
        rq.DescribeClusterResponse, errors, text, i32,
        st.lists(st.builds(rq.DescribeClusterBroker, i32, text, i32, opt_text),
                 max_size=3).map(tuple), opt_text),
}


def seen_at(api_key: int, version: int, value: Any, response: bool) -> Any:
    """What ``value`` reads back as at ``version``: fields the version lacks at their
    defaults. ``None`` where the version cannot carry the value at all."""
    match (api_key, response):
        case (K.CREATE_TOPICS, True):
            return dataclasses.replace(value, topics=tuple(dataclasses.replace(
                t, topic_id=t.topic_id if version >= 7 else ZERO_UUID,
                num_partitions=t.num_partitions if version >= 5 else -1,
                replication_factor=t.replication_factor if version >= 5 else -1)
                for t in value.topics))
        case (K.DELETE_TOPICS, False):
            if version < 6 and value.topic_ids:
                return None
        case (K.DELETE_TOPICS, True):
            if version < 6 and any(t.name is None for t in value.topics):
                return None
            return dataclasses.replace(value, topics=tuple(dataclasses.replace(
                t, topic_id=t.topic_id if version >= 6 else ZERO_UUID,
                error_message=t.error_message if version >= 5 else None)
                for t in value.topics))
        case (K.ELECT_LEADERS, False):
            if version < 1 and value.election_type != rq.PREFERRED:
                return None
        case (K.ELECT_LEADERS, True):
            if version < 1:
                return dataclasses.replace(value, error=ErrorCode.NONE)
        case (K.ALTER_PARTITION, _):
            if version < 2:
                return None
    return value


CASES = [(k, v) for k, (lo, hi) in KRAFT_SUPPORTED.items() for v in range(lo, hi + 1)]
IDS = [f"{api_name(k)}-v{v}" for k, v in CASES]


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_request_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    value = data.draw(REQUESTS[api_key])
    expected = seen_at(api_key, version, value, False)
    if expected is None:
        with pytest.raises(EncodeError, match=f"v{version}"):
            kraft_convert.request_to_wire(api_key, version, value)
        return
    body = kraft_convert.request_to_wire(api_key, version, value)
    parsed = kraft_frames.parse_request(
        kraft_frames.encode_request(api_key, version, 3, "t", body)[4:])
    assert kraft_convert.request_from_wire(api_key, version, parsed.body) == expected


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_response_round_trip(api_key: int, version: int, data: st.DataObject) -> None:
    value = data.draw(RESPONSES[api_key])
    expected = seen_at(api_key, version, value, True)
    if expected is None:
        if api_key == K.ALTER_PARTITION and not value.partitions:
            return  # a bare top-level error is written at any version
        with pytest.raises(EncodeError, match=f"v{version}"):
            kraft_convert.response_to_wire(api_key, version, value)
        return
    body = kraft_convert.response_to_wire(api_key, version, value)
    frame = kraft_frames.encode_response(api_key, version, 5, body)
    _, decoded = kraft_frames.decode_response(api_key, version, frame[4:])
    assert kraft_convert.response_from_wire(api_key, version, decoded) == expected


@pytest.mark.parametrize("version", [0, 1])
def test_alter_partition_by_name_is_refused_by_a_controller(version: int) -> None:
    body = {"broker_id": 1, "broker_epoch": 2, "topics": [
        {"topic_name": "t", "partitions": []}]}
    with pytest.raises(DecodeError, match=f"AlterPartition v{version} request names topics"):
        kraft_convert.request_from_wire(K.ALTER_PARTITION, version, body)


def test_create_topics_reads_without_ids_and_drops_null_configs() -> None:
    body = {"topics": [{"name": "t", "num_partitions": 2, "replication_factor": 1,
                        "assignments": [], "configs": [{"name": "a", "value": None},
                                                       {"name": "b", "value": "1"}]}],
            "timeout_ms": 10, "validate_only": False}
    value = kraft_convert.request_from_wire(K.CREATE_TOPICS, 7, body)
    assert value.new_topic_ids == ()
    assert value.topics[0].configs == (("b", "1"),)


def test_wrong_value_or_version_is_a_clear_error() -> None:
    with pytest.raises(EncodeError, match="BROKER_HEARTBEAT request expected, got Unregister"):
        kraft_convert.request_to_wire(K.BROKER_HEARTBEAT, 0, rq.UnregisterBrokerRequest(1))
    with pytest.raises(EncodeError, match="BROKER_HEARTBEAT v5 is not a KRaft API version"):
        kraft_convert.request_to_wire(K.BROKER_HEARTBEAT, 5, rq.UnregisterBrokerRequest(1))
    with pytest.raises(DecodeError, match="UNREGISTER_BROKER v0 request: bad body"):
        kraft_convert.request_from_wire(K.UNREGISTER_BROKER, 0, {})
    with pytest.raises(TypeError, match="not a KRaft API value"):
        kraft_convert.api_of(object())


def test_an_unknown_error_code_reads_as_unknown_server_error() -> None:
    value = kraft_convert.response_from_wire(K.UNREGISTER_BROKER, 0,
                                             {"error_code": 9999, "error_message": None})
    assert value.error == ErrorCode.UNKNOWN_SERVER_ERROR


ERROR_CASES = [
    (K.CREATE_TOPICS, 7, rq.CreateTopicsRequest((rq.CreatableTopic("x"), rq.CreatableTopic("y")),
                                                ())),
    (K.CREATE_TOPICS, 2, rq.CreateTopicsRequest((rq.CreatableTopic("x"),), ())),
    (K.DELETE_TOPICS, 6, rq.DeleteTopicsRequest(("x",), (b"\1" * 16,))),
    (K.DELETE_TOPICS, 1, rq.DeleteTopicsRequest(("x", "y"))),
    (K.CREATE_PARTITIONS, 3, rq.CreatePartitionsRequest((rq.CreatePartitionsTopic("x", 3),))),
    (K.ELECT_LEADERS, 2, rq.ElectLeadersRequest(0, (("x", 0), ("x", 1), ("y", 0)))),
    (K.ELECT_LEADERS, 0, rq.ElectLeadersRequest(0, None)),
    (K.ALTER_PARTITION_REASSIGNMENTS, 0, rq.AlterPartitionReassignmentsRequest((
        rq.ReassignablePartition("x", 0, (1, 2)), rq.ReassignablePartition("y", 3, None)))),
    (K.LIST_PARTITION_REASSIGNMENTS, 0, rq.ListPartitionReassignmentsRequest(None)),
    (K.ALTER_PARTITION, 2, rq.AlterPartitionRequest(1, 2, (
        rq.AlterPartitionItem(b"\1" * 16, 0, 1, (1,), 1),))),
    (K.DESCRIBE_CLUSTER, 1, rq.DescribeClusterRequest()),
    (K.BROKER_REGISTRATION, 3, rq.BrokerRegistrationRequest(1, "c", b"\3" * 16)),
    (K.BROKER_HEARTBEAT, 0, rq.BrokerHeartbeatRequest(1, 2, 3, False)),
    (K.UNREGISTER_BROKER, 0, rq.UnregisterBrokerRequest(1)),
]


def _errors_of(value: Any) -> list[ErrorCode]:
    """Every error a response value carries: top-level and per item."""
    found = [value.error] if hasattr(value, "error") else []
    for f in dataclasses.fields(value):
        items = getattr(value, f.name)
        if isinstance(items, tuple):
            found += [i.error for i in items if hasattr(i, "error")]
    return found


@pytest.mark.parametrize(("api_key", "version", "request_value"), ERROR_CASES,
                         ids=[f"{api_name(k)}-v{v}" for k, v, _ in ERROR_CASES])
def test_error_response_answers_every_item(api_key: int, version: int,
                                           request_value: Any) -> None:
    request_body = kraft_frames.parse_request(kraft_frames.encode_request(
        api_key, version, 1, None,
        kraft_convert.request_to_wire(api_key, version, request_value))[4:]).body
    body = kraft_convert.error_response(api_key, version, request_body, ErrorCode.NOT_CONTROLLER)
    frame = kraft_frames.encode_response(api_key, version, 1, body)
    value = kraft_convert.response_from_wire(
        api_key, version, kraft_frames.decode_response(api_key, version, frame[4:])[1])
    found = _errors_of(value)
    if api_key == K.ELECT_LEADERS and version == 0:
        assert found == [ErrorCode.NONE]  # v0 has no top-level code and nothing was named
        return
    assert found and set(found) == {ErrorCode.NOT_CONTROLLER}
    items = {K.CREATE_TOPICS: "topics", K.DELETE_TOPICS: "topics",
             K.CREATE_PARTITIONS: "results", K.ELECT_LEADERS: "results",
             K.ALTER_PARTITION_REASSIGNMENTS: "results"}
    if api_key in items:
        asked = {K.CREATE_TOPICS: lambda r: len(r.topics),
                 K.DELETE_TOPICS: lambda r: len(r.names) + len(r.topic_ids),
                 K.CREATE_PARTITIONS: lambda r: len(r.topics),
                 K.ELECT_LEADERS: lambda r: len(r.partitions or ()),
                 K.ALTER_PARTITION_REASSIGNMENTS: lambda r: len(r.partitions)}[api_key]
        assert len(getattr(value, items[api_key])) == asked(request_value) > 0


def test_every_error_code_has_kafkas_number() -> None:
    kio = {name.upper(): int(code) for name, code in KioErrorCode.__members__.items()}
    assert {e.name: int(e) for e in ErrorCode} == {e.name: kio[e.name] for e in ErrorCode}
    for name, number in (("NOT_CONTROLLER", 41), ("STALE_BROKER_EPOCH", 77),
                         ("DUPLICATE_BROKER_REGISTRATION", 101),
                         ("BROKER_ID_NOT_REGISTERED", 102), ("INCONSISTENT_CLUSTER_ID", 104)):
        assert ErrorCode[name] == number
