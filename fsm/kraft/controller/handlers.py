"""Request class -> its handler: the quorum controller's one table of requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.kraft.controller import brokers, partitions, topics
from fsm.kraft.controller import requests as rq

HANDLERS: dict[type, Callable[[Any, Any, Any], None]] = {
    rq.BrokerRegistrationRequest: brokers.register,
    rq.BrokerHeartbeatRequest: brokers.heartbeat,
    rq.UnregisterBrokerRequest: brokers.unregister,
    rq.CreateTopicsRequest: topics.create_topics,
    rq.DeleteTopicsRequest: topics.delete_topics,
    rq.CreatePartitionsRequest: topics.create_partitions,
    rq.AlterPartitionRequest: partitions.alter_partition,
    rq.AlterPartitionReassignmentsRequest: partitions.alter_reassignments,
    rq.ListPartitionReassignmentsRequest: partitions.list_reassignments,
    rq.ElectLeadersRequest: partitions.elect_leaders,
}
