"""``fsm.kraft.controller.requests`` values <-> the KRaft APIs' wire dicts.

Five functions, keyed by (api key, version) of ``kraft_registry``: :func:`request_from_wire`
and :func:`response_to_wire` for the side that serves a request, :func:`request_to_wire` and
:func:`response_from_wire` for the side that sends it, and :func:`error_response`, the answer
to a request that could not be taken at all (NOT_CONTROLLER, REQUEST_TIMED_OUT), every item
of it carrying the one error.

The values are flat where the wire nests by topic (``ReassignablePartition(topic, partition,
...)``); writing groups them by topic in order of first appearance. Fields the values do not
carry are read and dropped, and written as their schema defaults (throttle times, timeouts,
CreateTopics' per-topic configs in the response, BrokerRegistration's log directories...).
Error codes are ``fsm.errors.ErrorCode``; a code it does not know reads as
``UNKNOWN_SERVER_ERROR``.

Where a version cannot say what a value says, writing raises :class:`EncodeError` naming the
field (DeleteTopics below v6 by topic id, ElectLeaders v0 an unclean election), and reading a
version whose content the values cannot hold raises :class:`DecodeError` (AlterPartition v0-v1
name topics, the controller works by topic id: ``CONTROLLER_SERVED`` offers v2 only).
CreateTopics requests read with ``new_topic_ids=()``: the shell draws one fresh id per topic
(the core has no randomness) and sets them with ``dataclasses.replace``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.kraft_registry import KRAFT_SUPPORTED, KRaftApiKey, api_name
from fsm.errors import ErrorCode
from fsm.kraft.controller.requests import (
    UNCLEAN,
    AlterPartitionItem,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResult,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    CreatableTopic,
    CreatableTopicResult,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
    CreatePartitionsTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
    ElectionResult,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingReassignment,
    ReassignablePartition,
    ReassignablePartitionResult,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
)
from fsm.kraft.records.uuid import ZERO_UUID
from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature

Body = dict[str, Any]

K = KRaftApiKey

REQUEST_TYPES: dict[type, KRaftApiKey] = {
    CreateTopicsRequest: K.CREATE_TOPICS,
    DeleteTopicsRequest: K.DELETE_TOPICS,
    CreatePartitionsRequest: K.CREATE_PARTITIONS,
    ElectLeadersRequest: K.ELECT_LEADERS,
    AlterPartitionReassignmentsRequest: K.ALTER_PARTITION_REASSIGNMENTS,
    ListPartitionReassignmentsRequest: K.LIST_PARTITION_REASSIGNMENTS,
    AlterPartitionRequest: K.ALTER_PARTITION,
    DescribeClusterRequest: K.DESCRIBE_CLUSTER,
    BrokerRegistrationRequest: K.BROKER_REGISTRATION,
    BrokerHeartbeatRequest: K.BROKER_HEARTBEAT,
    UnregisterBrokerRequest: K.UNREGISTER_BROKER,
}
RESPONSE_TYPES: dict[type, KRaftApiKey] = {
    CreateTopicsResponse: K.CREATE_TOPICS,
    DeleteTopicsResponse: K.DELETE_TOPICS,
    CreatePartitionsResponse: K.CREATE_PARTITIONS,
    ElectLeadersResponse: K.ELECT_LEADERS,
    AlterPartitionReassignmentsResponse: K.ALTER_PARTITION_REASSIGNMENTS,
    ListPartitionReassignmentsResponse: K.LIST_PARTITION_REASSIGNMENTS,
    AlterPartitionResponse: K.ALTER_PARTITION,
    DescribeClusterResponse: K.DESCRIBE_CLUSTER,
    BrokerRegistrationResponse: K.BROKER_REGISTRATION,
    BrokerHeartbeatResponse: K.BROKER_HEARTBEAT,
    UnregisterBrokerResponse: K.UNREGISTER_BROKER,
}


def api_of(value: object) -> tuple[KRaftApiKey, bool]:
    """(api key, is a request) of a KRaft request or response value; ``TypeError`` else."""
    key = REQUEST_TYPES.get(type(value))
    if key is not None:
        return key, True
    key = RESPONSE_TYPES.get(type(value))
    if key is not None:
        return key, False
    raise TypeError(f"not a KRaft API value: {value!r}")


def error_code(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


# -- the five functions --------------------------------------------------------------------


def request_from_wire(api_key: int, version: int, body: Body) -> Any:
    """The request value of a decoded request body."""
    return _read(_REQUEST_FROM, api_key, version, body, "request")


def response_from_wire(api_key: int, version: int, body: Body) -> Any:
    """The response value of a decoded response body."""
    return _read(_RESPONSE_FROM, api_key, version, body, "response")


def request_to_wire(api_key: int, version: int, value: Any) -> Body:
    """The request body (for ``kraft_frames.encode_request``) of a request value."""
    return _write(_REQUEST_TO, REQUEST_TYPES, api_key, version, value, "request")


def response_to_wire(api_key: int, version: int, value: Any) -> Body:
    """The response body (for ``kraft_frames.encode_response``) of a response value."""
    return _write(_RESPONSE_TO, RESPONSE_TYPES, api_key, version, value, "response")


def error_response(api_key: int, version: int, request_body: Body, error: ErrorCode) -> Body:
    """A response body answering every item of ``request_body`` (a decoded request of that
    version) with ``error``; where the API has a top-level error code, it is ``error`` too."""
    _check_version(api_key, version, EncodeError)
    code = int(error)
    match api_key:
        case K.CREATE_TOPICS:
            return {"topics": [_created(t["name"], ZERO_UUID, code, None, -1, -1)
                               for t in request_body["topics"]]}
        case K.DELETE_TOPICS:
            if version >= 6:
                return {"responses": [_deleted(t.get("name"), t["topic_id"], code, None)
                                      for t in request_body["topics"]]}
            return {"responses": [_deleted(n, ZERO_UUID, code, None)
                                  for n in request_body["topic_names"]]}
        case K.CREATE_PARTITIONS:
            return {"results": [{"name": t["name"], "error_code": code, "error_message": None}
                                for t in request_body["topics"]]}
        case K.ELECT_LEADERS:
            return {"error_code": code, "replica_election_results": [
                {"topic": t["topic"], "partition_result": [
                    {"partition_id": p, "error_code": code, "error_message": None}
                    for p in t["partitions"]]}
                for t in request_body["topic_partitions"] or ()]}
        case K.ALTER_PARTITION_REASSIGNMENTS:
            return {"error_code": code, "error_message": None, "responses": [
                {"name": t["name"], "partitions": [
                    {"partition_index": p["partition_index"], "error_code": code,
                     "error_message": None} for p in t["partitions"]]}
                for t in request_body["topics"]]}
        case K.LIST_PARTITION_REASSIGNMENTS:
            return {"error_code": code, "error_message": None, "topics": []}
        case K.ALTER_PARTITION:
            return {"error_code": code, "topics": []}
        case K.DESCRIBE_CLUSTER:
            return {"error_code": code, "error_message": None, "cluster_id": "",
                    "controller_id": -1, "brokers": []}
        case K.BROKER_REGISTRATION:
            return {"error_code": code, "broker_epoch": -1}
        case K.BROKER_HEARTBEAT:
            return {"error_code": code, "is_caught_up": False, "is_fenced": True,
                    "should_shut_down": False}
        case K.UNREGISTER_BROKER:
            return {"error_code": code, "error_message": None}
    raise AssertionError(api_key)  # _check_version admits only the keys above


# -- dispatch ------------------------------------------------------------------------------

Reader = Callable[[int, Body], Any]
Writer = Callable[[int, Any], Body]


def _check_version(api_key: int, version: int, error: type[Exception]) -> None:
    lo_hi = KRAFT_SUPPORTED.get(api_key)
    if lo_hi is None or not lo_hi[0] <= version <= lo_hi[1]:
        raise error(f"{api_name(api_key)} v{version} is not a KRaft API version "
                    f"(declared {KRAFT_SUPPORTED})")


def _read(table: dict[int, Reader], api_key: int, version: int, body: Body, kind: str) -> Any:
    _check_version(api_key, version, DecodeError)
    try:
        return table[api_key](version, body)
    except (KeyError, TypeError, ValueError) as e:  # a body not decoded by our schema
        raise DecodeError(f"{api_name(api_key)} v{version} {kind}: bad body: {e!r}") from None


def _write(table: dict[int, Writer], types: dict[type, KRaftApiKey], api_key: int,
           version: int, value: Any, kind: str) -> Body:
    _check_version(api_key, version, EncodeError)
    if types.get(type(value)) != api_key:
        raise EncodeError(f"{api_name(api_key)} {kind} expected, got {type(value).__name__}")
    return table[api_key](version, value)


def _grouped(items: Iterable[Any], key: Callable[[Any], Hashable]) -> list[tuple[Any, list[Any]]]:
    """Items grouped by ``key``, groups in order of first appearance."""
    groups: dict[Hashable, list[Any]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.items())


def _ints(values: Iterable[int] | None) -> tuple[int, ...]:
    return tuple(values or ())


# -- BrokerRegistration (62), BrokerHeartbeat (63), UnregisterBroker (64) --------------------


def _registration_from(version: int, b: Body) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(
        broker_id=b["broker_id"],
        cluster_id=b["cluster_id"],
        incarnation_id=b["incarnation_id"],
        listeners=tuple(BrokerEndpoint(x["name"], x["host"], x["port"], x["security_protocol"])
                        for x in b["listeners"]),
        features=tuple(BrokerFeature(f["name"], f["min_supported_version"],
                                     f["max_supported_version"]) for f in b["features"]),
        rack=b["rack"],
    )


def _registration_to(version: int, v: BrokerRegistrationRequest) -> Body:
    return {
        "broker_id": v.broker_id,
        "cluster_id": v.cluster_id,
        "incarnation_id": v.incarnation_id,
        "listeners": [{"name": e.name, "host": e.host, "port": e.port,
                       "security_protocol": e.security_protocol} for e in v.listeners],
        "features": [{"name": f.name, "min_supported_version": f.min_supported_version,
                      "max_supported_version": f.max_supported_version} for f in v.features],
        "rack": v.rack,
    }


def _registration_response_from(version: int, b: Body) -> BrokerRegistrationResponse:
    return BrokerRegistrationResponse(error_code(b["error_code"]), b["broker_epoch"])


def _registration_response_to(version: int, v: BrokerRegistrationResponse) -> Body:
    return {"error_code": int(v.error), "broker_epoch": v.broker_epoch}


def _heartbeat_from(version: int, b: Body) -> BrokerHeartbeatRequest:
    return BrokerHeartbeatRequest(b["broker_id"], b["broker_epoch"],
                                  b["current_metadata_offset"], b["want_fence"],
                                  b["want_shut_down"])


def _heartbeat_to(version: int, v: BrokerHeartbeatRequest) -> Body:
    return {"broker_id": v.broker_id, "broker_epoch": v.broker_epoch,
            "current_metadata_offset": v.current_metadata_offset, "want_fence": v.want_fence,
            "want_shut_down": v.want_shut_down}


def _heartbeat_response_from(version: int, b: Body) -> BrokerHeartbeatResponse:
    return BrokerHeartbeatResponse(error_code(b["error_code"]), b["is_caught_up"],
                                   b["is_fenced"], b["should_shut_down"])


def _heartbeat_response_to(version: int, v: BrokerHeartbeatResponse) -> Body:
    return {"error_code": int(v.error), "is_caught_up": v.is_caught_up,
            "is_fenced": v.is_fenced, "should_shut_down": v.should_shut_down}


def _unregister_from(version: int, b: Body) -> UnregisterBrokerRequest:
    return UnregisterBrokerRequest(b["broker_id"])


def _unregister_to(version: int, v: UnregisterBrokerRequest) -> Body:
    return {"broker_id": v.broker_id}


def _unregister_response_from(version: int, b: Body) -> UnregisterBrokerResponse:
    return UnregisterBrokerResponse(error_code(b["error_code"]))


def _unregister_response_to(version: int, v: UnregisterBrokerResponse) -> Body:
    return {"error_code": int(v.error), "error_message": None}


# -- CreateTopics (19), DeleteTopics (20), CreatePartitions (37) -----------------------------


def _create_topics_from(version: int, b: Body) -> CreateTopicsRequest:
    return CreateTopicsRequest(
        topics=tuple(
            CreatableTopic(
                name=t["name"],
                num_partitions=t["num_partitions"],
                replication_factor=t["replication_factor"],
                assignments=tuple((a["partition_index"], _ints(a["broker_ids"]))
                                  for a in t["assignments"]),
                configs=tuple((c["name"], c["value"]) for c in t["configs"]
                              if c["value"] is not None),  # null: no override
            )
            for t in b["topics"]
        ),
        new_topic_ids=(),
        validate_only=b["validate_only"],
    )


def _create_topics_to(version: int, v: CreateTopicsRequest) -> Body:
    return {
        "topics": [
            {"name": t.name, "num_partitions": t.num_partitions,
             "replication_factor": t.replication_factor,
             "assignments": [{"partition_index": p, "broker_ids": list(r)}
                             for p, r in t.assignments],
             "configs": [{"name": k, "value": val} for k, val in t.configs]}
            for t in v.topics
        ],
        "validate_only": v.validate_only,
    }


def _created(name: str, topic_id: bytes, code: int, message: str | None, partitions: int,
             replication: int) -> Body:
    return {"name": name, "topic_id": topic_id, "error_code": code, "error_message": message,
            "num_partitions": partitions, "replication_factor": replication, "configs": None}


def _create_topics_response_from(version: int, b: Body) -> CreateTopicsResponse:
    return CreateTopicsResponse(tuple(
        CreatableTopicResult(
            name=t["name"],
            topic_id=t.get("topic_id", ZERO_UUID),
            error=error_code(t["error_code"]),
            error_message=t.get("error_message"),
            num_partitions=t.get("num_partitions", -1),
            replication_factor=t.get("replication_factor", -1),
        )
        for t in b["topics"]
    ))


def _create_topics_response_to(version: int, v: CreateTopicsResponse) -> Body:
    return {"topics": [_created(t.name, t.topic_id, int(t.error), t.error_message,
                                t.num_partitions, t.replication_factor) for t in v.topics]}


def _delete_topics_from(version: int, b: Body) -> DeleteTopicsRequest:
    if version < 6:
        return DeleteTopicsRequest(names=tuple(b["topic_names"]))
    names = tuple(t["name"] for t in b["topics"]
                  if t["topic_id"] == ZERO_UUID and t["name"] is not None)
    ids = tuple(t["topic_id"] for t in b["topics"] if t["topic_id"] != ZERO_UUID)
    return DeleteTopicsRequest(names=names, topic_ids=ids)


def _delete_topics_to(version: int, v: DeleteTopicsRequest) -> Body:
    if version < 6:
        if v.topic_ids:
            raise EncodeError(f"DeleteTopics v{version} has no topic_ids (v6+): "
                              f"{len(v.topic_ids)} topics named by id")
        return {"topic_names": list(v.names)}
    return {"topics": [{"name": n, "topic_id": ZERO_UUID} for n in v.names]
            + [{"name": None, "topic_id": i} for i in v.topic_ids]}


def _deleted(name: str | None, topic_id: bytes, code: int, message: str | None) -> Body:
    return {"name": name, "topic_id": topic_id, "error_code": code, "error_message": message}


def _delete_topics_response_from(version: int, b: Body) -> DeleteTopicsResponse:
    return DeleteTopicsResponse(tuple(
        DeletableTopicResult(t["name"], t.get("topic_id", ZERO_UUID), error_code(t["error_code"]),
                             t.get("error_message"))
        for t in b["responses"]
    ))


def _delete_topics_response_to(version: int, v: DeleteTopicsResponse) -> Body:
    if version < 6 and any(t.name is None for t in v.topics):
        raise EncodeError(f"DeleteTopics v{version} response: responses[].name must be set "
                          "(null only from v6)")
    return {"responses": [_deleted(t.name, t.topic_id, int(t.error), t.error_message)
                          for t in v.topics]}


def _create_partitions_from(version: int, b: Body) -> CreatePartitionsRequest:
    return CreatePartitionsRequest(
        topics=tuple(
            CreatePartitionsTopic(
                t["name"], t["count"],
                None if t["assignments"] is None
                else tuple(_ints(a["broker_ids"]) for a in t["assignments"]),
            )
            for t in b["topics"]
        ),
        validate_only=b["validate_only"],
    )


def _create_partitions_to(version: int, v: CreatePartitionsRequest) -> Body:
    return {
        "topics": [{"name": t.name, "count": t.count,
                    "assignments": None if t.assignments is None
                    else [{"broker_ids": list(r)} for r in t.assignments]}
                   for t in v.topics],
        "validate_only": v.validate_only,
    }


def _create_partitions_response_from(version: int, b: Body) -> CreatePartitionsResponse:
    return CreatePartitionsResponse(tuple(
        CreatePartitionsTopicResult(r["name"], error_code(r["error_code"]), r["error_message"])
        for r in b["results"]
    ))


def _create_partitions_response_to(version: int, v: CreatePartitionsResponse) -> Body:
    return {"results": [{"name": r.name, "error_code": int(r.error),
                         "error_message": r.error_message} for r in v.results]}


# -- ElectLeaders (43), AlterPartitionReassignments (45), ListPartitionReassignments (46) -----


def _topic_partitions_from(topics: list[Body] | None, partitions_key: str, name_key: str
                           ) -> tuple[tuple[str, int], ...] | None:
    if topics is None:
        return None
    return tuple((t[name_key], p) for t in topics for p in t[partitions_key])


def _topic_partitions_to(partitions: tuple[tuple[str, int], ...] | None, partitions_key: str,
                         name_key: str) -> list[Body] | None:
    if partitions is None:
        return None
    return [{name_key: topic, partitions_key: [p for _, p in group]}
            for topic, group in _grouped(partitions, lambda tp: tp[0])]


def _elect_from(version: int, b: Body) -> ElectLeadersRequest:
    return ElectLeadersRequest(
        election_type=b.get("election_type", 0),
        partitions=_topic_partitions_from(b["topic_partitions"], "partitions", "topic"),
    )


def _elect_to(version: int, v: ElectLeadersRequest) -> Body:
    if version < 1 and v.election_type == UNCLEAN:
        raise EncodeError("ElectLeaders v0 has no election_type: only preferred elections")
    return {"election_type": v.election_type,
            "topic_partitions": _topic_partitions_to(v.partitions, "partitions", "topic")}


def _elect_response_from(version: int, b: Body) -> ElectLeadersResponse:
    return ElectLeadersResponse(
        error=error_code(b.get("error_code", 0)),
        results=tuple(
            ElectionResult(t["topic"], p["partition_id"], error_code(p["error_code"]),
                           p["error_message"])
            for t in b["replica_election_results"] for p in t["partition_result"]
        ),
    )


def _elect_response_to(version: int, v: ElectLeadersResponse) -> Body:
    return {
        "error_code": int(v.error),
        "replica_election_results": [
            {"topic": topic, "partition_result": [
                {"partition_id": r.partition_id, "error_code": int(r.error),
                 "error_message": r.error_message} for r in group]}
            for topic, group in _grouped(v.results, lambda r: r.topic)
        ],
    }


def _reassign_from(version: int, b: Body) -> AlterPartitionReassignmentsRequest:
    return AlterPartitionReassignmentsRequest(tuple(
        ReassignablePartition(t["name"], p["partition_index"],
                              None if p["replicas"] is None else _ints(p["replicas"]))
        for t in b["topics"] for p in t["partitions"]
    ))


def _reassign_to(version: int, v: AlterPartitionReassignmentsRequest) -> Body:
    return {"topics": [
        {"name": topic, "partitions": [
            {"partition_index": p.partition_id,
             "replicas": None if p.replicas is None else list(p.replicas)} for p in group]}
        for topic, group in _grouped(v.partitions, lambda p: p.topic)
    ]}


def _reassign_response_from(version: int, b: Body) -> AlterPartitionReassignmentsResponse:
    return AlterPartitionReassignmentsResponse(
        error=error_code(b["error_code"]),
        results=tuple(
            ReassignablePartitionResult(t["name"], p["partition_index"],
                                        error_code(p["error_code"]), p["error_message"])
            for t in b["responses"] for p in t["partitions"]
        ),
    )


def _reassign_response_to(version: int, v: AlterPartitionReassignmentsResponse) -> Body:
    return {
        "error_code": int(v.error),
        "error_message": None,
        "responses": [
            {"name": topic, "partitions": [
                {"partition_index": r.partition_id, "error_code": int(r.error),
                 "error_message": r.error_message} for r in group]}
            for topic, group in _grouped(v.results, lambda r: r.topic)
        ],
    }


def _list_from(version: int, b: Body) -> ListPartitionReassignmentsRequest:
    return ListPartitionReassignmentsRequest(
        _topic_partitions_from(b["topics"], "partition_indexes", "name"))


def _list_to(version: int, v: ListPartitionReassignmentsRequest) -> Body:
    return {"topics": _topic_partitions_to(v.partitions, "partition_indexes", "name")}


def _list_response_from(version: int, b: Body) -> ListPartitionReassignmentsResponse:
    return ListPartitionReassignmentsResponse(
        error=error_code(b["error_code"]),
        reassignments=tuple(
            OngoingReassignment(t["name"], p["partition_index"], _ints(p["replicas"]),
                                _ints(p["adding_replicas"]), _ints(p["removing_replicas"]))
            for t in b["topics"] for p in t["partitions"]
        ),
    )


def _list_response_to(version: int, v: ListPartitionReassignmentsResponse) -> Body:
    return {
        "error_code": int(v.error),
        "error_message": None,
        "topics": [
            {"name": topic, "partitions": [
                {"partition_index": r.partition_id, "replicas": list(r.replicas),
                 "adding_replicas": list(r.adding_replicas),
                 "removing_replicas": list(r.removing_replicas)} for r in group]}
            for topic, group in _grouped(v.reassignments, lambda r: r.topic)
        ],
    }


# -- AlterPartition (56) ---------------------------------------------------------------------


def _by_id_only(version: int, what: str) -> None:
    if version < 2:
        raise DecodeError(f"AlterPartition v{version} {what} names topics (topic_name); the "
                          "controller works by topic_id (v2+)")


def _alter_partition_from(version: int, b: Body) -> AlterPartitionRequest:
    _by_id_only(version, "request")
    return AlterPartitionRequest(
        broker_id=b["broker_id"],
        broker_epoch=b["broker_epoch"],
        partitions=tuple(
            AlterPartitionItem(t["topic_id"], p["partition_index"], p["leader_epoch"],
                               _ints(p["new_isr"]), p["partition_epoch"])
            for t in b["topics"] for p in t["partitions"]
        ),
    )


def _no_names(version: int, what: str) -> None:
    if version < 2:
        raise EncodeError(f"AlterPartition v{version} {what}: topics[].topic_name is not "
                          "known from a topic id; send v2+")


def _alter_partition_to(version: int, v: AlterPartitionRequest) -> Body:
    _no_names(version, "request")
    return {
        "broker_id": v.broker_id,
        "broker_epoch": v.broker_epoch,
        "topics": [
            {"topic_id": topic_id, "partitions": [
                {"partition_index": p.partition_id, "leader_epoch": p.leader_epoch,
                 "new_isr": list(p.new_isr), "partition_epoch": p.partition_epoch}
                for p in group]}
            for topic_id, group in _grouped(v.partitions, lambda p: p.topic_id)
        ],
    }


def _alter_partition_response_from(version: int, b: Body) -> AlterPartitionResponse:
    _by_id_only(version, "response")
    return AlterPartitionResponse(
        error=error_code(b["error_code"]),
        partitions=tuple(
            AlterPartitionResult(t["topic_id"], p["partition_index"], error_code(p["error_code"]),
                                 p["leader_id"], p["leader_epoch"], _ints(p["isr"]),
                                 p["partition_epoch"])
            for t in b["topics"] for p in t["partitions"]
        ),
    )


def _alter_partition_response_to(version: int, v: AlterPartitionResponse) -> Body:
    if v.partitions:
        _no_names(version, "response")
    return {
        "error_code": int(v.error),
        "topics": [
            {"topic_id": topic_id, "partitions": [
                {"partition_index": r.partition_id, "error_code": int(r.error),
                 "leader_id": r.leader_id, "leader_epoch": r.leader_epoch, "isr": list(r.isr),
                 "partition_epoch": r.partition_epoch} for r in group]}
            for topic_id, group in _grouped(v.partitions, lambda r: r.topic_id)
        ],
    }


# -- DescribeCluster (60) --------------------------------------------------------------------


def _describe_from(version: int, b: Body) -> DescribeClusterRequest:
    return DescribeClusterRequest(b["include_cluster_authorized_operations"])


def _describe_to(version: int, v: DescribeClusterRequest) -> Body:
    return {"include_cluster_authorized_operations": v.include_cluster_authorized_operations}


def _describe_response_from(version: int, b: Body) -> DescribeClusterResponse:
    return DescribeClusterResponse(
        error=error_code(b["error_code"]),
        cluster_id=b["cluster_id"],
        controller_id=b["controller_id"],
        brokers=tuple(DescribeClusterBroker(x["broker_id"], x["host"], x["port"], x["rack"])
                      for x in b["brokers"]),
        error_message=b["error_message"],
    )


def _describe_response_to(version: int, v: DescribeClusterResponse) -> Body:
    return {
        "error_code": int(v.error),
        "error_message": v.error_message,
        "cluster_id": v.cluster_id,
        "controller_id": v.controller_id,
        "brokers": [{"broker_id": x.broker_id, "host": x.host, "port": x.port, "rack": x.rack}
                    for x in v.brokers],
    }


_REQUEST_FROM: dict[int, Reader] = {
    K.CREATE_TOPICS: _create_topics_from,
    K.DELETE_TOPICS: _delete_topics_from,
    K.CREATE_PARTITIONS: _create_partitions_from,
    K.ELECT_LEADERS: _elect_from,
    K.ALTER_PARTITION_REASSIGNMENTS: _reassign_from,
    K.LIST_PARTITION_REASSIGNMENTS: _list_from,
    K.ALTER_PARTITION: _alter_partition_from,
    K.DESCRIBE_CLUSTER: _describe_from,
    K.BROKER_REGISTRATION: _registration_from,
    K.BROKER_HEARTBEAT: _heartbeat_from,
    K.UNREGISTER_BROKER: _unregister_from,
}
_REQUEST_TO: dict[int, Writer] = {
    K.CREATE_TOPICS: _create_topics_to,
    K.DELETE_TOPICS: _delete_topics_to,
    K.CREATE_PARTITIONS: _create_partitions_to,
    K.ELECT_LEADERS: _elect_to,
    K.ALTER_PARTITION_REASSIGNMENTS: _reassign_to,
    K.LIST_PARTITION_REASSIGNMENTS: _list_to,
    K.ALTER_PARTITION: _alter_partition_to,
    K.DESCRIBE_CLUSTER: _describe_to,
    K.BROKER_REGISTRATION: _registration_to,
    K.BROKER_HEARTBEAT: _heartbeat_to,
    K.UNREGISTER_BROKER: _unregister_to,
}
_RESPONSE_FROM: dict[int, Reader] = {
    K.CREATE_TOPICS: _create_topics_response_from,
    K.DELETE_TOPICS: _delete_topics_response_from,
    K.CREATE_PARTITIONS: _create_partitions_response_from,
    K.ELECT_LEADERS: _elect_response_from,
    K.ALTER_PARTITION_REASSIGNMENTS: _reassign_response_from,
    K.LIST_PARTITION_REASSIGNMENTS: _list_response_from,
    K.ALTER_PARTITION: _alter_partition_response_from,
    K.DESCRIBE_CLUSTER: _describe_response_from,
    K.BROKER_REGISTRATION: _registration_response_from,
    K.BROKER_HEARTBEAT: _heartbeat_response_from,
    K.UNREGISTER_BROKER: _unregister_response_from,
}
_RESPONSE_TO: dict[int, Writer] = {
    K.CREATE_TOPICS: _create_topics_response_to,
    K.DELETE_TOPICS: _delete_topics_response_to,
    K.CREATE_PARTITIONS: _create_partitions_response_to,
    K.ELECT_LEADERS: _elect_response_to,
    K.ALTER_PARTITION_REASSIGNMENTS: _reassign_response_to,
    K.LIST_PARTITION_REASSIGNMENTS: _list_response_to,
    K.ALTER_PARTITION: _alter_partition_response_to,
    K.DESCRIBE_CLUSTER: _describe_response_to,
    K.BROKER_REGISTRATION: _registration_response_to,
    K.BROKER_HEARTBEAT: _heartbeat_response_to,
    K.UNREGISTER_BROKER: _unregister_response_to,
}
