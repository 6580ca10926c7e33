"""Hypothesis strategies of the KRaft APIs' values (``fsm.kraft.controller.requests``), and
what a value reads back as at a version (a helper, not a test)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from adapters.network.codec.kraft_registry import KRaftApiKey
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import ZERO_UUID
from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature

K = KRaftApiKey

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
