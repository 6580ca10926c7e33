"""NOT_CONTROLLER answers: what a standby answers to every request, and what the active
controller answers to requests still waiting when it loses leadership."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq

NOT_CONTROLLER = ErrorCode.NOT_CONTROLLER


def _create_topics(r: rq.CreateTopicsRequest) -> rq.CreateTopicsResponse:
    return rq.CreateTopicsResponse(tuple(rq.CreatableTopicResult(t.name, tid, NOT_CONTROLLER)
                                         for t, tid in zip(r.topics, r.new_topic_ids,
                                                           strict=False)))


def _delete_topics(r: rq.DeleteTopicsRequest) -> rq.DeleteTopicsResponse:
    from fsm.kraft.records.uuid import ZERO_UUID

    return rq.DeleteTopicsResponse(
        tuple(rq.DeletableTopicResult(n, ZERO_UUID, NOT_CONTROLLER) for n in r.names)
        + tuple(rq.DeletableTopicResult(None, t, NOT_CONTROLLER) for t in r.topic_ids))


_FOR_REQUEST: dict[type, Callable[[Any], Any]] = {
    rq.BrokerRegistrationRequest: lambda r: rq.BrokerRegistrationResponse(NOT_CONTROLLER),
    rq.BrokerHeartbeatRequest: lambda r: rq.BrokerHeartbeatResponse(NOT_CONTROLLER),
    rq.UnregisterBrokerRequest: lambda r: rq.UnregisterBrokerResponse(NOT_CONTROLLER),
    rq.CreateTopicsRequest: _create_topics,
    rq.DeleteTopicsRequest: _delete_topics,
    rq.CreatePartitionsRequest: lambda r: rq.CreatePartitionsResponse(tuple(
        rq.CreatePartitionsTopicResult(t.name, NOT_CONTROLLER) for t in r.topics)),
    rq.AlterPartitionRequest: lambda r: rq.AlterPartitionResponse(NOT_CONTROLLER),
    rq.AlterPartitionReassignmentsRequest:
        lambda r: rq.AlterPartitionReassignmentsResponse(NOT_CONTROLLER),
    rq.ListPartitionReassignmentsRequest:
        lambda r: rq.ListPartitionReassignmentsResponse(NOT_CONTROLLER),
    rq.ElectLeadersRequest: lambda r: rq.ElectLeadersResponse(NOT_CONTROLLER),
}


def not_controller_for(request: Any) -> Any:
    return _FOR_REQUEST[type(request)](request)


_FROM_RESPONSE: dict[type, Callable[[Any], Any]] = {
    rq.BrokerRegistrationResponse: lambda r: rq.BrokerRegistrationResponse(NOT_CONTROLLER),
    rq.BrokerHeartbeatResponse: lambda r: rq.BrokerHeartbeatResponse(NOT_CONTROLLER),
    rq.UnregisterBrokerResponse: lambda r: rq.UnregisterBrokerResponse(NOT_CONTROLLER),
    rq.CreateTopicsResponse: lambda r: rq.CreateTopicsResponse(tuple(
        rq.CreatableTopicResult(t.name, t.topic_id, NOT_CONTROLLER) for t in r.topics)),
    rq.DeleteTopicsResponse: lambda r: rq.DeleteTopicsResponse(tuple(
        rq.DeletableTopicResult(t.name, t.topic_id, NOT_CONTROLLER) for t in r.topics)),
    rq.CreatePartitionsResponse: lambda r: rq.CreatePartitionsResponse(tuple(
        rq.CreatePartitionsTopicResult(t.name, NOT_CONTROLLER) for t in r.results)),
    rq.AlterPartitionResponse: lambda r: rq.AlterPartitionResponse(NOT_CONTROLLER),
    rq.AlterPartitionReassignmentsResponse:
        lambda r: rq.AlterPartitionReassignmentsResponse(NOT_CONTROLLER),
    rq.ListPartitionReassignmentsResponse:
        lambda r: rq.ListPartitionReassignmentsResponse(NOT_CONTROLLER),
    rq.ElectLeadersResponse: lambda r: rq.ElectLeadersResponse(NOT_CONTROLLER),
}


def not_controller(response: Any) -> Any:
    """``response``, decided on records now lost, turned into NOT_CONTROLLER."""
    return _FROM_RESPONSE[type(response)](response)
