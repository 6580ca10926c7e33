"""What clients and brokers ask the quorum controller, and what it answers: plain values,
Kafka's field names in snake_case (BrokerRegistration 62, BrokerHeartbeat 63,
UnregisterBroker 64, CreateTopics 19, DeleteTopics 20, CreatePartitions 37, ElectLeaders 43,
AlterPartitionReassignments 45, ListPartitionReassignments 46, AlterPartition 56), and the one
clients' request a broker answers itself (DescribeCluster 60). The wire codec
(``adapters.network.codec.kraft_convert``) maps them to bytes; the core never sees bytes."""

from __future__ import annotations

from dataclasses import dataclass

from fsm.errors import ErrorCode
from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature, Replicas

# -- brokers ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    broker_id: int
    cluster_id: str
    incarnation_id: Uuid
    listeners: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerRegistrationResponse:
    error: ErrorCode
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest:
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatResponse:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRequest:
    broker_id: int


@dataclass(frozen=True, slots=True)
class UnregisterBrokerResponse:
    error: ErrorCode


# -- topics ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreatableTopic:
    name: str
    num_partitions: int = -1  # -1: the controller's default
    replication_factor: int = -1  # -1: the controller's default
    assignments: tuple[tuple[int, Replicas], ...] = ()  # (partition, replicas), explicit
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CreateTopicsRequest:
    topics: tuple[CreatableTopic, ...]
    new_topic_ids: tuple[Uuid, ...]
    """One fresh id per topic, in order: the shell draws them (the core has no randomness)."""
    validate_only: bool = False


@dataclass(frozen=True, slots=True)
class CreatableTopicResult:
    name: str
    topic_id: Uuid
    error: ErrorCode
    error_message: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1


@dataclass(frozen=True, slots=True)
class CreateTopicsResponse:
    topics: tuple[CreatableTopicResult, ...]


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest:
    names: tuple[str, ...] = ()
    topic_ids: tuple[Uuid, ...] = ()


@dataclass(frozen=True, slots=True)
class DeletableTopicResult:
    name: str | None
    topic_id: Uuid
    error: ErrorCode
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class DeleteTopicsResponse:
    topics: tuple[DeletableTopicResult, ...]


@dataclass(frozen=True, slots=True)
class CreatePartitionsTopic:
    name: str
    count: int
    assignments: tuple[Replicas, ...] | None = None


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest:
    topics: tuple[CreatePartitionsTopic, ...]
    validate_only: bool = False


@dataclass(frozen=True, slots=True)
class CreatePartitionsTopicResult:
    name: str
    error: ErrorCode
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class CreatePartitionsResponse:
    results: tuple[CreatePartitionsTopicResult, ...]


# -- partitions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlterPartitionItem:
    topic_id: Uuid
    partition_id: int
    leader_epoch: int
    new_isr: Replicas
    partition_epoch: int


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    broker_id: int
    broker_epoch: int
    partitions: tuple[AlterPartitionItem, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionResult:
    topic_id: Uuid
    partition_id: int
    error: ErrorCode
    leader_id: int = -1
    leader_epoch: int = -1
    isr: Replicas = ()
    partition_epoch: int = -1


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    error: ErrorCode
    partitions: tuple[AlterPartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class ReassignablePartition:
    topic: str
    partition_id: int
    replicas: Replicas | None  # None cancels the reassignment


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsRequest:
    partitions: tuple[ReassignablePartition, ...]


@dataclass(frozen=True, slots=True)
class ReassignablePartitionResult:
    topic: str
    partition_id: int
    error: ErrorCode
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsResponse:
    error: ErrorCode
    results: tuple[ReassignablePartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsRequest:
    partitions: tuple[tuple[str, int], ...] | None = None  # None: every ongoing one


@dataclass(frozen=True, slots=True)
class OngoingReassignment:
    topic: str
    partition_id: int
    replicas: Replicas
    adding_replicas: Replicas
    removing_replicas: Replicas


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsResponse:
    error: ErrorCode
    reassignments: tuple[OngoingReassignment, ...] = ()


PREFERRED, UNCLEAN = 0, 1
"""ElectLeaders' ``election_type``, Kafka's numbers."""


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest:
    election_type: int
    partitions: tuple[tuple[str, int], ...] | None = None  # None: every partition


@dataclass(frozen=True, slots=True)
class ElectionResult:
    topic: str
    partition_id: int
    error: ErrorCode
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ElectLeadersResponse:
    error: ErrorCode
    results: tuple[ElectionResult, ...] = ()


# -- clients' requests a broker answers itself -----------------------------------------------


@dataclass(frozen=True, slots=True)
class DescribeClusterRequest:
    include_cluster_authorized_operations: bool = False


@dataclass(frozen=True, slots=True)
class DescribeClusterBroker:
    broker_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeClusterResponse:
    error: ErrorCode
    cluster_id: str
    controller_id: int  # -1: no active controller known
    brokers: tuple[DescribeClusterBroker, ...] = ()
    error_message: str | None = None
