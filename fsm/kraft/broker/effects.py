"""What a KRaft broker asks its shell to do (effects out)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from fsm.broker.metadata_cache import TopicMetadata
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import Replicas
from fsm.values import BrokerInfo


@dataclass(frozen=True, slots=True)
class SendToController:
    """Send ``request`` (BrokerRegistration, BrokerHeartbeat or AlterPartition) to the active
    controller; answer with ``ControllerResponse(request, ...)`` or
    ``ControllerUnreachable(request)``."""

    request: Any


@dataclass(frozen=True, slots=True)
class ScheduleHeartbeat:
    """(Re)arm the broker's one communication timer: ``HeartbeatDue`` in ``delay_ms``. An armed
    timer is replaced."""

    delay_ms: int


@dataclass(frozen=True, slots=True)
class BecomeLeader:
    """Lead the partition in ``leader_epoch`` with this ISR (a new role or a new epoch)."""

    topic_id: Uuid
    partition_id: int
    leader_epoch: int
    isr: Replicas


@dataclass(frozen=True, slots=True)
class BecomeFollower:
    """Follow ``leader`` (-1: none yet) in ``leader_epoch`` (a new role or a new epoch)."""

    topic_id: Uuid
    partition_id: int
    leader: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class UpdateIsr:
    """The leader's committed ISR changed within its leader epoch (an AlterPartition answer,
    a follower fenced, a reassignment finished): the high watermark counts these replicas."""

    topic_id: Uuid
    partition_id: int
    leader_epoch: int
    partition_epoch: int
    isr: Replicas


@dataclass(frozen=True, slots=True)
class DeleteReplica:
    """Stop the local replica and delete its log (topic removed or replica reassigned away)."""

    topic_id: Uuid
    partition_id: int


@dataclass(frozen=True, slots=True)
class MetadataAnswer:
    """A Metadata answer from the replayed (committed) image, in the values of the ZooKeeper
    mode's answer (``fsm.broker``): ``live_brokers`` are the registered, unfenced brokers,
    ``controller_id`` what clients are told to send controller requests to (KIP-590: any
    live broker, which forwards). A partition whose leader is not live shows leader -1 (the
    wire answer makes that LEADER_NOT_AVAILABLE); ``offline_replicas`` are its replicas on
    brokers that are fenced or not registered."""

    cluster_id: str
    controller_id: int | None
    live_brokers: tuple[BrokerInfo, ...]
    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True, slots=True)
class ReplyMetadata:
    token: Hashable
    response: MetadataAnswer


@dataclass(frozen=True, slots=True)
class Exit:
    """The broker is SHUTTING_DOWN: stop the replicas, close the logs and end the process."""


@dataclass(frozen=True, slots=True)
class LifecycleChange:
    """The lifecycle moved (checked against ``KRAFT_BROKER_TABLE``): the state-change log."""

    source: KRaftBrokerState
    target: KRaftBrokerState


KRaftBrokerEffect = (
    SendToController | ScheduleHeartbeat | BecomeLeader | BecomeFollower | UpdateIsr
    | DeleteReplica | ReplyMetadata | Exit | LifecycleChange
)
