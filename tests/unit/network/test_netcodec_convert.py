"""fsm.requests values <-> wire dicts <-> bytes, round trips (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from adapters.network.codec import convert
from adapters.network.codec.registry import request_schema, response_schema
from adapters.network.codec.wire import decode, encode
from fsm.errors import ErrorCode
from fsm.requests import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ControllerResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint

I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
NAME = st.text(max_size=8)
REPLICAS = st.lists(I32, max_size=4).map(tuple)
TPS = st.lists(st.tuples(NAME, I32), max_size=6).map(tuple)
ERRORS = st.sampled_from(list(ErrorCode))


def grouped(items: tuple, topic) -> tuple:  # type: ignore[no-untyped-def]
    """The order the wire gives back: grouped by topic in order of first appearance."""
    return tuple(x for _, xs in convert.group_by_topic(items, topic) for x in xs)


def via_bytes(schema, wire):  # type: ignore[no-untyped-def]
    return decode(schema, encode(schema, wire))


lai_partitions = st.lists(
    st.builds(
        LeaderAndIsrPartition, NAME, I32, I32, I32, I32, REPLICAS, I32, REPLICAS, st.booleans()
    ),
    max_size=6,
).map(tuple)
live_leaders = st.lists(
    st.builds(lambda b, h, p: BrokerInfo(b, -1, (Endpoint("PLAINTEXT", h, p),)), I32, NAME, I32),
    max_size=3,
).map(tuple)


@given(st.builds(LeaderAndIsrRequest, I32, I32, I64, lai_partitions, live_leaders))
def test_leader_and_isr(req: LeaderAndIsrRequest) -> None:
    wire = via_bytes(request_schema(4, 2), convert.leader_and_isr_request_to_wire(req))
    back = convert.leader_and_isr_request_from_wire(wire)
    assert back.partitions == grouped(req.partitions, lambda p: p.topic)
    assert back == LeaderAndIsrRequest(
        req.controller_id, req.controller_epoch, req.broker_epoch, back.partitions, req.live_leaders
    )


def test_live_leader_endpoint_is_picked_by_listener() -> None:
    broker = BrokerInfo(
        1, 77, (Endpoint("CONTROLLER", "c", 1), Endpoint("PLAINTEXT", "p", 2)), rack="r"
    )
    req = LeaderAndIsrRequest(0, 1, 2, (), (broker,))
    wire = convert.leader_and_isr_request_to_wire(req, listener="PLAINTEXT")
    assert wire["live_leaders"] == [{"broker_id": 1, "host_name": "p", "port": 2}]
    assert convert.leader_and_isr_request_to_wire(req)["live_leaders"][0]["port"] == 1


protocols = st.sampled_from(sorted(convert.SECURITY_PROTOCOLS))
endpoints = st.lists(st.builds(Endpoint, NAME, NAME, I32, protocols), max_size=2).map(tuple)
live_brokers = st.lists(
    st.builds(BrokerInfo, I32, st.just(-1), endpoints, st.none() | NAME), max_size=3
).map(tuple)
um_partitions = st.lists(
    st.builds(UpdateMetadataPartition, NAME, I32, I32, I32, I32, REPLICAS, I32, REPLICAS, REPLICAS),
    max_size=6,
).map(tuple)


@given(st.builds(UpdateMetadataRequest, I32, I32, I64, um_partitions, live_brokers))
def test_update_metadata(req: UpdateMetadataRequest) -> None:
    wire = via_bytes(request_schema(6, 5), convert.update_metadata_request_to_wire(req))
    back = convert.update_metadata_request_from_wire(wire)
    assert back.partitions == grouped(req.partitions, lambda p: p.topic)
    assert back.live_brokers == req.live_brokers
    assert (back.controller_id, back.controller_epoch, back.broker_epoch) == (
        req.controller_id,
        req.controller_epoch,
        req.broker_epoch,
    )


@given(st.builds(StopReplicaRequest, I32, I32, I64, st.booleans(), TPS))
def test_stop_replica(req: StopReplicaRequest) -> None:
    wire = via_bytes(request_schema(5, 1), convert.stop_replica_request_to_wire(req))
    back = convert.stop_replica_request_from_wire(wire)
    assert back.partitions == grouped(req.partitions, lambda tp: tp[0])
    assert back == StopReplicaRequest(
        req.controller_id,
        req.controller_epoch,
        req.broker_epoch,
        req.delete_partitions,
        back.partitions,
    )


@given(st.builds(ControlledShutdownRequest, I32, I64), st.integers(0, 2))
def test_controlled_shutdown_request(req: ControlledShutdownRequest, version: int) -> None:
    wire = via_bytes(request_schema(7, version), convert.controlled_shutdown_request_to_wire(req))
    back = convert.controlled_shutdown_request_from_wire(wire)
    assert back == (req if version == 2 else ControlledShutdownRequest(req.broker_id, -1))


@given(st.builds(ControlledShutdownResponse, ERRORS, TPS), st.integers(0, 2))
def test_controlled_shutdown_response(resp: ControlledShutdownResponse, version: int) -> None:
    wire = via_bytes(
        response_schema(7, version), convert.controlled_shutdown_response_to_wire(resp)
    )
    assert convert.controlled_shutdown_response_from_wire(wire) == resp


@given(
    st.sampled_from([("LeaderAndIsr", 4, 2), ("StopReplica", 5, 1), ("UpdateMetadata", 6, 5)]),
    ERRORS,
    st.lists(st.tuples(st.tuples(NAME, I32), ERRORS), max_size=4).map(tuple),
)
def test_controller_response(api: tuple[str, int, int], error: ErrorCode, errors: tuple) -> None:
    name, key, version = api
    resp = ControllerResponse(name, error, errors if name != "UpdateMetadata" else ())
    wire = via_bytes(response_schema(key, version), convert.controller_response_to_wire(resp))
    assert convert.controller_response_from_wire(name, wire) == resp


def test_unknown_error_codes_map_to_unknown_server_error() -> None:
    wire = {"error_code": 2, "partition_errors": []}
    assert convert.controller_response_from_wire("StopReplica", wire).error == -1
