"""Controller <-> broker requests and responses, as values (the fields of the wire versions
that carry the broker epoch: LeaderAndIsr v2, StopReplica v1, UpdateMetadata v5,
ControlledShutdown v2; reference/kafka-wire-protocol.md sections 2-5).

Every controller request is stamped with the controller's id and epoch and with
the *target broker's* epoch (KIP-380); a broker rejects a request for another
incarnation of itself with STALE_BROKER_EPOCH and one from an older controller
with STALE_CONTROLLER_EPOCH.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsm.errors import ErrorCode
from fsm.values import BrokerInfo, TopicPartition


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartition:
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    is_new: bool = False

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partitions: tuple[LeaderAndIsrPartition, ...]
    live_leaders: tuple[BrokerInfo, ...]
    api = "LeaderAndIsr"


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartition:
    topic: str
    partition: int
    controller_epoch: int
    leader: int  # LEADER_DURING_DELETE (-2) announces a partition being deleted
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partitions: tuple[UpdateMetadataPartition, ...]
    live_brokers: tuple[BrokerInfo, ...]
    api = "UpdateMetadata"


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    delete_partitions: bool
    partitions: tuple[TopicPartition, ...]
    api = "StopReplica"


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    """Broker -> controller: move my leaderships away (v2 carries my epoch)."""

    broker_id: int
    broker_epoch: int
    api = "ControlledShutdown"


ControllerRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


@dataclass(frozen=True, slots=True)
class ControllerResponse:
    """A broker's answer to LeaderAndIsr, StopReplica (with per-partition errors) or
    UpdateMetadata (top-level error only)."""

    api: str
    error: ErrorCode
    partition_errors: tuple[tuple[TopicPartition, ErrorCode], ...] = ()


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    error: ErrorCode
    remaining: tuple[TopicPartition, ...] = ()
