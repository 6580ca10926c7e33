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
from kraft_strategies import REQUESTS, RESPONSES, K, seen_at

from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.kraft_registry import KRAFT_SUPPORTED, api_name
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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
