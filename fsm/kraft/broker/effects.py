"""What a KRaft broker asks its shell to do (effects out)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
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


def _setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    if names != tuple(f.name for f in fields(cls)):
        raise AssertionError(f"{cls.__name__}: the builder's fields {names} are not its own")
    return tuple(cls.__dict__[n].__set__ for n in names)


_BL = _setters(BecomeLeader, ("topic_id", "partition_id", "leader_epoch", "isr"))
_BF = _setters(BecomeFollower, ("topic_id", "partition_id", "leader", "leader_epoch"))


def new_become_leader(topic_id: Uuid, partition_id: int, leader_epoch: int, isr: Replicas, *,
                      _new: Callable[[type], Any] = object.__new__,
                      _s: tuple[Callable[[Any, Any], None], ...] = _BL) -> BecomeLeader:
    """``BecomeLeader(...)``, the slots set through their descriptors (~2x cheaper than the
    frozen dataclass's ``__init__``; a broker taking 3,333 leaderships makes 3,333). The
    same immutable value."""
    self = _new(BecomeLeader)
    _s[0](self, topic_id)
    _s[1](self, partition_id)
    _s[2](self, leader_epoch)
    _s[3](self, isr)
    return self  # type: ignore[no-any-return]


def new_become_follower(topic_id: Uuid, partition_id: int, leader: int, leader_epoch: int, *,
                        _new: Callable[[type], Any] = object.__new__,
                        _s: tuple[Callable[[Any, Any], None], ...] = _BF) -> BecomeFollower:
    """``BecomeFollower(...)``, built as ``new_become_leader`` builds its value."""
    self = _new(BecomeFollower)
    _s[0](self, topic_id)
    _s[1](self, partition_id)
    _s[2](self, leader)
    _s[3](self, leader_epoch)
    return self  # type: ignore[no-any-return]


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
