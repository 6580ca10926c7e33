"""The core's controller requests and responses on the wire, read and written by kio.

``test_netcodec_against_kio`` checks the codec's schemas; this module checks the step before
them, ``convert`` (the core's values -> wire dicts, and back), together with the controller's
own encoding path (``channel_manager.encode``, partition states shared as ``wire.Encoded``).
The expected kio entity is built here straight from the core's value, by Kafka's field names
(``Leader``, ``Isr``, ``PartitionEpoch``, ``Replicas`` ...): a field ``convert`` copies into
the wrong place, or a partition grouped under the wrong topic, shows as a difference.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio import serial as kio_serial
from kio.schema import errors as kio_errors
from kio.schema.leader_and_isr.v2 import request as lai
from kio.schema.leader_and_isr.v2 import response as lai_response
from kio.schema.stop_replica.v1 import request as sr
from kio.schema.stop_replica.v1 import response as sr_response
from kio.schema.update_metadata.v5 import request as um
from kio.schema.update_metadata.v5 import response as um_response

from adapters.network import channel_manager
from adapters.network.codec import convert
from adapters.network.codec.dispatch import (
    Request,
    decode_response,
    encode_request,
    encode_response,
    parse_request,
)
from adapters.network.codec.headers import RequestHeader
from adapters.network.shared_encoding import SharedEncodings
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

T = TypeVar("T")
I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
NAME = st.sampled_from(["a", "b", "topic-ü", ""]) | st.text(max_size=6)
REPLICAS = st.lists(I32, max_size=4).map(tuple)
KIO_CODES = {int(e) for e in kio_errors.ErrorCode}
ERRORS = st.sampled_from([e for e in ErrorCode if int(e) in KIO_CODES])
SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
"""Kafka's ``SecurityProtocol`` ids, as UpdateMetadata's ``SecurityProtocol`` field holds them."""
EXAMPLES = settings(max_examples=40, deadline=None)


def by_topic(items: Iterable[T], topic: Callable[[T], str]) -> list[tuple[str, list[T]]]:
    """Kafka groups partitions under their topic; topics in order of first appearance."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(topic(item), []).append(item)
    return list(groups.items())


def kio_encode(entity: Any) -> bytes:
    buf = io.BytesIO()
    kio_serial.entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def kio_read_request(frame: bytes, entity_type: type) -> tuple[Any, Any]:
    """(header, body) of a request frame (size prefix included), read by kio."""
    data = memoryview(frame)
    header, size = kio_serial.entity_reader(entity_type.__header_schema__)(data, 4)
    body, body_size = kio_serial.entity_reader(entity_type)(data, 4 + size)
    assert 4 + size + body_size == len(frame)
    return header, body


def kio_request_frame(api_key: int, version: int, correlation_id: int, body: Any) -> bytes:
    header_type = type(body).__header_schema__
    fields = {
        "request_api_key": api_key,
        "request_api_version": version,
        "correlation_id": correlation_id,
    }
    if "client_id" in header_type.__dataclass_fields__:
        fields["client_id"] = "kio"
    payload = kio_encode(header_type(**fields)) + kio_encode(body)
    return len(payload).to_bytes(4, "big") + payload


def our_request(frame: bytes) -> dict[str, Any]:
    parsed = parse_request(frame[4:])
    assert isinstance(parsed, Request)
    return parsed.body


def sent_by_the_controller(request: Any, correlation_id: int, shared: bool) -> bytes:
    """The frame the controller's channel manager sends for ``request``."""
    encodings = SharedEncodings(min_partitions=0) if shared else None
    api_key, version, body = channel_manager.encode(request, "PLAINTEXT", encodings)
    return encode_request(RequestHeader(api_key, version, correlation_id, "controller"), body)


# -- LeaderAndIsr v2 ------------------------------------------------------------------------------

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


def kio_leader_and_isr(req: LeaderAndIsrRequest) -> Any:
    return lai.LeaderAndIsrRequest(
        controller_id=req.controller_id,
        controller_epoch=req.controller_epoch,
        broker_epoch=req.broker_epoch,
        topic_states=tuple(
            lai.LeaderAndIsrTopicState(
                topic_name=topic,
                partition_states=tuple(
                    lai.LeaderAndIsrPartitionState(
                        partition_index=p.partition,
                        controller_epoch=p.controller_epoch,
                        leader=p.leader,
                        leader_epoch=p.leader_epoch,
                        isr=p.isr,
                        partition_epoch=p.zk_version,
                        replicas=p.replicas,
                        is_new=p.is_new,
                    )
                    for p in parts
                ),
            )
            for topic, parts in by_topic(req.partitions, lambda p: p.topic)
        ),
        live_leaders=tuple(
            lai.LeaderAndIsrLiveLeader(
                broker_id=b.broker_id, host_name=b.endpoints[0].host, port=b.endpoints[0].port
            )
            for b in req.live_leaders
        ),
    )


@EXAMPLES
@given(
    req=st.builds(LeaderAndIsrRequest, I32, I32, I64, lai_partitions, live_leaders),
    correlation_id=I32,
    shared=st.booleans(),
)
def test_leader_and_isr_matches_kio_both_ways(
    req: LeaderAndIsrRequest, correlation_id: int, shared: bool
) -> None:
    expected = kio_leader_and_isr(req)
    header, body = kio_read_request(
        sent_by_the_controller(req, correlation_id, shared), lai.LeaderAndIsrRequest
    )
    assert (header.request_api_key, header.request_api_version) == (4, 2)
    assert (header.correlation_id, header.client_id) == (correlation_id, "controller")
    assert body == expected
    back = convert.leader_and_isr_request_from_wire(
        our_request(kio_request_frame(4, 2, correlation_id, expected))
    )
    grouped = tuple(p for _, ps in by_topic(req.partitions, lambda p: p.topic) for p in ps)
    assert back == LeaderAndIsrRequest(
        req.controller_id, req.controller_epoch, req.broker_epoch, grouped, req.live_leaders
    )


# -- UpdateMetadata v5 ---------------------------------------------------------------------------

um_partitions = st.lists(
    st.builds(UpdateMetadataPartition, NAME, I32, I32, I32, I32, REPLICAS, I32, REPLICAS, REPLICAS),
    max_size=6,
).map(tuple)
endpoints = st.lists(
    st.builds(Endpoint, NAME, NAME, I32, st.sampled_from(sorted(SECURITY_PROTOCOL_IDS))),
    max_size=2,
).map(tuple)
live_brokers = st.lists(
    st.builds(BrokerInfo, I32, st.just(-1), endpoints, st.none() | NAME), max_size=3
).map(tuple)


def kio_update_metadata(req: UpdateMetadataRequest) -> Any:
    return um.UpdateMetadataRequest(
        controller_id=req.controller_id,
        controller_epoch=req.controller_epoch,
        broker_epoch=req.broker_epoch,
        topic_states=tuple(
            um.UpdateMetadataTopicState(
                topic_name=topic,
                partition_states=tuple(
                    um.UpdateMetadataPartitionState(
                        partition_index=p.partition,
                        controller_epoch=p.controller_epoch,
                        leader=p.leader,
                        leader_epoch=p.leader_epoch,
                        isr=p.isr,
                        zk_version=p.zk_version,
                        replicas=p.replicas,
                        offline_replicas=p.offline_replicas,
                    )
                    for p in parts
                ),
            )
            for topic, parts in by_topic(req.partitions, lambda p: p.topic)
        ),
        live_brokers=tuple(
            um.UpdateMetadataBroker(
                id_=b.broker_id,
                endpoints=tuple(
                    um.UpdateMetadataEndpoint(
                        port=e.port,
                        host=e.host,
                        listener=e.listener,
                        security_protocol=SECURITY_PROTOCOL_IDS[e.security_protocol],
                    )
                    for e in b.endpoints
                ),
                rack=b.rack,
            )
            for b in req.live_brokers
        ),
    )


@EXAMPLES
@given(
    req=st.builds(UpdateMetadataRequest, I32, I32, I64, um_partitions, live_brokers),
    correlation_id=I32,
    shared=st.booleans(),
)
def test_update_metadata_matches_kio_both_ways(
    req: UpdateMetadataRequest, correlation_id: int, shared: bool
) -> None:
    expected = kio_update_metadata(req)
    header, body = kio_read_request(
        sent_by_the_controller(req, correlation_id, shared), um.UpdateMetadataRequest
    )
    assert (header.request_api_key, header.request_api_version) == (6, 5)
    assert body == expected
    back = convert.update_metadata_request_from_wire(
        our_request(kio_request_frame(6, 5, correlation_id, expected))
    )
    grouped = tuple(p for _, ps in by_topic(req.partitions, lambda p: p.topic) for p in ps)
    assert back == UpdateMetadataRequest(
        req.controller_id, req.controller_epoch, req.broker_epoch, grouped, req.live_brokers
    )


# -- StopReplica v1 ------------------------------------------------------------------------------


@EXAMPLES
@given(
    req=st.builds(
        StopReplicaRequest,
        I32,
        I32,
        I64,
        st.booleans(),
        st.lists(st.tuples(NAME, I32), max_size=6).map(tuple),
    ),
    correlation_id=I32,
)
def test_stop_replica_matches_kio_both_ways(req: StopReplicaRequest, correlation_id: int) -> None:
    expected = sr.StopReplicaRequest(
        controller_id=req.controller_id,
        controller_epoch=req.controller_epoch,
        broker_epoch=req.broker_epoch,
        delete_partitions=req.delete_partitions,
        topics=tuple(
            sr.StopReplicaTopicV1(name=topic, partition_indexes=tuple(p for _, p in tps))
            for topic, tps in by_topic(req.partitions, lambda tp: tp[0])
        ),
    )
    header, body = kio_read_request(
        sent_by_the_controller(req, correlation_id, False), sr.StopReplicaRequest
    )
    assert (header.request_api_key, header.request_api_version) == (5, 1)
    assert body == expected
    back = convert.stop_replica_request_from_wire(
        our_request(kio_request_frame(5, 1, correlation_id, expected))
    )
    grouped = tuple(tp for _, tps in by_topic(req.partitions, lambda tp: tp[0]) for tp in tps)
    assert back == StopReplicaRequest(
        req.controller_id, req.controller_epoch, req.broker_epoch, req.delete_partitions, grouped
    )


# -- ControlledShutdown v0-v2 --------------------------------------------------------------------

CONTROLLED_SHUTDOWN = {
    v: (
        importlib.import_module(f"kio.schema.controlled_shutdown.v{v}.request"),
        importlib.import_module(f"kio.schema.controlled_shutdown.v{v}.response"),
    )
    for v in (0, 1, 2)
}


@pytest.mark.parametrize("version", sorted(CONTROLLED_SHUTDOWN))
@EXAMPLES
@given(
    broker_id=I32,
    broker_epoch=I64,
    correlation_id=I32,
    errors=ERRORS,
    remaining=st.lists(st.tuples(NAME, I32), max_size=4).map(tuple),
)
def test_controlled_shutdown_matches_kio_both_ways(
    version: int,
    broker_id: int,
    broker_epoch: int,
    correlation_id: int,
    errors: ErrorCode,
    remaining: tuple[tuple[str, int], ...],
) -> None:
    request_module, response_module = CONTROLLED_SHUTDOWN[version]
    req = ControlledShutdownRequest(broker_id, broker_epoch)
    wire = convert.controlled_shutdown_request_to_wire(req)
    frame = encode_request(RequestHeader(7, version, correlation_id, "broker"), wire)
    header, body = kio_read_request(frame, request_module.ControlledShutdownRequest)
    if version == 0:  # request header v0: no client id
        assert not hasattr(header, "client_id")
    expected = request_module.ControlledShutdownRequest(
        broker_id=broker_id, **({"broker_epoch": broker_epoch} if version >= 2 else {})
    )
    assert (header.request_api_key, header.correlation_id) == (7, correlation_id)
    assert body == expected
    back = convert.controlled_shutdown_request_from_wire(
        our_request(kio_request_frame(7, version, correlation_id, expected))
    )
    assert back == ControlledShutdownRequest(broker_id, broker_epoch if version >= 2 else -1)

    resp = ControlledShutdownResponse(errors, remaining)
    their_response = response_module.ControlledShutdownResponse(
        error_code=kio_errors.ErrorCode(int(errors)),
        remaining_partitions=tuple(
            response_module.RemainingPartition(topic_name=t, partition_index=p)
            for t, p in remaining
        ),
    )
    frame = encode_response(
        7, version, correlation_id, convert.controlled_shutdown_response_to_wire(resp)
    )
    assert frame[8:] == kio_encode(their_response)  # response header v0: correlation id only
    ours = decode_response(7, version, frame[4:8] + kio_encode(their_response))
    assert ours[0] == correlation_id
    assert convert.controlled_shutdown_response_from_wire(ours[1]) == resp


# -- the brokers' answers: LeaderAndIsr, StopReplica, UpdateMetadata ------------------------------

PARTITION_ERRORS = st.lists(st.tuples(st.tuples(NAME, I32), ERRORS), max_size=5).map(tuple)


def kio_controller_response(resp: ControllerResponse) -> Any:
    code = kio_errors.ErrorCode(int(resp.error))
    if resp.api == "UpdateMetadata":
        return um_response.UpdateMetadataResponse(error_code=code)
    module, error = (
        (lai_response, lai_response.LeaderAndIsrPartitionError)
        if resp.api == "LeaderAndIsr"
        else (sr_response, sr_response.StopReplicaPartitionError)
    )
    entity = (
        module.LeaderAndIsrResponse if resp.api == "LeaderAndIsr" else module.StopReplicaResponse
    )
    return entity(
        error_code=code,
        partition_errors=tuple(
            error(topic_name=t, partition_index=p, error_code=kio_errors.ErrorCode(int(e)))
            for (t, p), e in resp.partition_errors
        ),
    )


@pytest.mark.parametrize(
    ("api", "api_key", "version"),
    [("LeaderAndIsr", 4, 2), ("StopReplica", 5, 1), ("UpdateMetadata", 6, 5)],
)
@EXAMPLES
@given(error=ERRORS, partition_errors=PARTITION_ERRORS, correlation_id=I32)
def test_controller_responses_match_kio_both_ways(
    api: str,
    api_key: int,
    version: int,
    error: ErrorCode,
    partition_errors: tuple[Any, ...],
    correlation_id: int,
) -> None:
    resp = ControllerResponse(api, error, partition_errors if api != "UpdateMetadata" else ())
    theirs = kio_encode(kio_controller_response(resp))
    frame = encode_response(
        api_key, version, correlation_id, convert.controller_response_to_wire(resp)
    )
    assert frame[8:] == theirs
    cid, body = decode_response(api_key, version, frame[4:8] + theirs)
    assert cid == correlation_id
    assert convert.controller_response_from_wire(api, body) == resp
