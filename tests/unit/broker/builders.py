"""Small builders for the broker-core tests."""

from __future__ import annotations

from fsm.broker import BrokerConfig, BrokerCore
from fsm.effects import Respond
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerStarted,
    RequestReceived,
)
from fsm.requests import (
    ControllerResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import (
    BrokerInfo,
    Endpoint,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)

TP = ("t", 0)
EPOCH = 100  # the broker epoch (czxid) of the broker under test
CE = 5  # the controller epoch of the requests


def config(broker_id: int = 1, **kw: object) -> BrokerConfig:
    return BrokerConfig(broker_id, **kw)  # type: ignore[arg-type]


def loaded(topics: dict[str, dict[int, tuple[int, ...]]] | None = None,
           states: dict[tuple[str, int], tuple[int, int, tuple[int, ...], int]] | None = None,
           ) -> BrokerMetadataLoaded:
    """``states``: tp -> (leader, leader_epoch, isr, zk_version), controller epoch 1."""
    topics = topics or {}
    states = states or {}
    return BrokerMetadataLoaded(
        tuple(sorted((t, TopicAssignment.of(dict(a))) for t, a in topics.items())),
        tuple(sorted((tp, PartitionStateZk(LeaderAndIsr(s[0], s[1], s[2], 1), s[3]))
                     for tp, s in states.items())),
    )


def running(broker_id: int = 1, epoch: int = EPOCH, meta: BrokerMetadataLoaded | None = None,
            **kw: object) -> BrokerCore:
    core = BrokerCore(config(broker_id, **kw))
    core.handle(BrokerStarted())
    core.handle(meta or loaded())
    core.handle(BrokerRegistered(epoch))
    return core


def lai(tp: tuple[str, int] = TP, leader: int = 1, leader_epoch: int = 1,
        isr: tuple[int, ...] = (1, 2, 3), zk_version: int = 1,
        replicas: tuple[int, ...] = (1, 2, 3), controller_epoch: int = CE) -> LeaderAndIsrPartition:
    return LeaderAndIsrPartition(tp[0], tp[1], controller_epoch, leader, leader_epoch, isr,
                                 zk_version, replicas)


def lai_request(*parts: LeaderAndIsrPartition, broker_epoch: int = EPOCH,
                controller_epoch: int = CE) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(0, controller_epoch, broker_epoch, tuple(parts), ())


def stop_request(*tps: tuple[str, int], delete: bool = False, broker_epoch: int = EPOCH,
                 controller_epoch: int = CE) -> StopReplicaRequest:
    return StopReplicaRequest(0, controller_epoch, broker_epoch, delete, tuple(tps))


def um(tp: tuple[str, int] = TP, leader: int = 1, leader_epoch: int = 1,
       isr: tuple[int, ...] = (1, 2, 3), replicas: tuple[int, ...] = (1, 2, 3),
       offline: tuple[int, ...] = ()) -> UpdateMetadataPartition:
    return UpdateMetadataPartition(tp[0], tp[1], CE, leader, leader_epoch, isr, 1, replicas,
                                   offline)


def broker_info(broker_id: int, epoch: int = 10) -> BrokerInfo:
    return BrokerInfo(broker_id, epoch, (Endpoint("PLAINTEXT", f"b{broker_id}", 9092),))


def um_request(*parts: UpdateMetadataPartition, live: tuple[int, ...] = (1, 2, 3),
               controller_id: int = 0, broker_epoch: int = EPOCH,
               controller_epoch: int = CE) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(controller_id, controller_epoch, broker_epoch, tuple(parts),
                                 tuple(broker_info(b) for b in live))


def send(core: BrokerCore, request: object, correlation: int = 7) -> ControllerResponse:
    """Deliver a request; return the (single) answer."""
    effects = core.handle(RequestReceived(request, correlation))  # type: ignore[arg-type]
    assert len(effects) == 1 and isinstance(effects[0], Respond), effects
    assert effects[0].correlation == correlation
    return effects[0].response


def errors(response: ControllerResponse) -> dict[tuple[str, int], ErrorCode]:
    return dict(response.partition_errors)
