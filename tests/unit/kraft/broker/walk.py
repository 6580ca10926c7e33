"""Builders for the KRaft broker tests: a config, records, and a broker walked to a state
the way the controller would answer it."""

from __future__ import annotations

from typing import Any

from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.broker.effects import SendToController
from fsm.kraft.broker.events import (
    ControllerResponse,
    HeartbeatDue,
    MetadataFetched,
    SigTerm,
    Start,
)
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller.requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    BrokerEndpoint,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)

S = KRaftBrokerState
ME = 1
INCARNATION = uuid_of(1001)
T1, T2 = uuid_of(1), uuid_of(2)


def config(broker_id: int = ME) -> KRaftBrokerConfig:
    return KRaftBrokerConfig(broker_id, "cluster-a",
                             (BrokerEndpoint("PLAINTEXT", f"b{broker_id}", 9092),),
                             heartbeat_interval_ms=3000)


def register(broker_id: int, epoch: int, fenced: bool = False) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id, uuid_of(1000 + broker_id), epoch,
                                (BrokerEndpoint("PLAINTEXT", f"b{broker_id}", 9092),),
                                fenced=fenced)


def cluster_records() -> list[Any]:
    """Brokers 1-3 registered and unfenced at offsets 0-5; topic t1 (partition 0 led by 1,
    partition 1 led by 2, partition 2 on 2 and 3 only) and t2 (led by 3, follower 1)."""
    return [
        register(1, 0, fenced=True), register(2, 1, fenced=True), register(3, 2, fenced=True),
        UnfenceBrokerRecord(1, 0), UnfenceBrokerRecord(2, 1), UnfenceBrokerRecord(3, 2),
        TopicRecord("t1", T1),
        PartitionRecord(0, T1, (1, 2, 3), (1, 2, 3), leader=1),
        PartitionRecord(1, T1, (2, 1, 3), (2, 1, 3), leader=2),
        PartitionRecord(2, T1, (2, 3), (2, 3), leader=2),
        TopicRecord("t2", T2),
        PartitionRecord(0, T2, (3, 1), (3, 1), leader=3),
    ]


def sent(effects: list[Any]) -> Any:
    """The one request among ``effects``."""
    requests = [e.request for e in effects if isinstance(e, SendToController)]
    assert len(requests) == 1, effects
    return requests[0]


def of(effects: list[Any], kind: type) -> list[Any]:
    return [e for e in effects if isinstance(e, kind)]


def answer(core: KRaftBroker, request: Any, response: Any) -> list[Any]:
    return core.handle(ControllerResponse(request, response))


def started(local: tuple = ()) -> tuple[KRaftBroker, Any]:
    core = KRaftBroker(config())
    return core, sent(core.handle(Start(INCARNATION, 0, local)))


def registered(epoch: int = 0, local: tuple = ()) -> tuple[KRaftBroker, Any]:
    """STARTING, registered; returns the heartbeat in flight."""
    core, reg = started(local)
    assert isinstance(reg, BrokerRegistrationRequest)
    hb = sent(answer(core, reg, BrokerRegistrationResponse(ErrorCode.NONE, epoch)))
    assert isinstance(hb, BrokerHeartbeatRequest)
    return core, hb


def running(records: list[Any] | None = None, local: tuple = ()) -> tuple[KRaftBroker, list[Any]]:
    """RUNNING with ``records`` replayed from offset 0 (the cluster by default); returns the
    effects of entering RECOVERY."""
    core, hb = registered(0, local)
    core.handle(MetadataFetched(0, tuple(cluster_records() if records is None else records)))
    recovery = answer(core, hb, BrokerHeartbeatResponse(ErrorCode.NONE, is_caught_up=True))
    assert core.state is S.RECOVERY
    unfence(core)
    assert core.state is S.RUNNING
    return core, recovery


def unfence(core: KRaftBroker, now_ms: int = 10) -> list[Any]:
    hb = sent(core.handle(HeartbeatDue(now_ms)))
    assert hb.want_fence is False
    return answer(core, hb, BrokerHeartbeatResponse(ErrorCode.NONE, True, is_fenced=False))


def sigterm(core: KRaftBroker) -> list[Any]:
    return core.handle(SigTerm())
