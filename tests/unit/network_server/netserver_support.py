"""Shared helpers for the listener / channel-manager tests (real loopback sockets)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from adapters.network import (
    BrokerRequestHandler,
    SocketServer,
    WireClient,
    advertised_apis,
    parse_listener_config,
)
from adapters.network.codec import RequestHeader
from fsm.broker import BrokerConfig, BrokerCore
from fsm.events import BrokerMetadataLoaded, BrokerRegistered, BrokerStarted
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint

EPOCH = 100  # broker epoch of the broker under test
CE = 3  # controller epoch
LOCAL = "127.0.0.1"


def wait_until(cond: Callable[[], object], timeout: float = 5.0, what: str = "condition") -> Any:
    """Polls ``cond`` until truthy; fails the test at the deadline (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        pause.wait(0.005)


def running_core(broker_id: int = 1, epoch: int = EPOCH) -> BrokerCore:
    core = BrokerCore(BrokerConfig(broker_id))
    core.handle(BrokerStarted())
    core.handle(BrokerMetadataLoaded((), ()))
    core.handle(BrokerRegistered(epoch))
    assert core.is_serving
    return core


def info(broker_id: int, port: int = 9092, epoch: int = 10,
         control_port: int | None = None) -> BrokerInfo:
    eps = [Endpoint("PLAINTEXT", LOCAL, port)]
    if control_port is not None:
        eps.insert(0, Endpoint("CONTROLLER", LOCAL, control_port))
    return BrokerInfo(broker_id, epoch, tuple(eps))


def lai(topic: str = "t", partition: int = 0, leader: int = 1, leader_epoch: int = 1,
        replicas: tuple[int, ...] = (1, 2), broker_epoch: int = EPOCH,
        controller_epoch: int = CE) -> LeaderAndIsrRequest:
    part = LeaderAndIsrPartition(topic, partition, controller_epoch, leader, leader_epoch,
                                 replicas, 1, replicas, True)
    return LeaderAndIsrRequest(0, controller_epoch, broker_epoch, (part,),
                               tuple(info(b) for b in sorted(set(replicas))))


def um(partitions: tuple[UpdateMetadataPartition, ...], live: tuple[BrokerInfo, ...],
       controller_id: int = 2, broker_epoch: int = EPOCH) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(controller_id, CE, broker_epoch, partitions, live)


def ump(topic: str, partition: int, leader: int, replicas: tuple[int, ...],
        isr: tuple[int, ...] | None = None, leader_epoch: int = 4,
        offline: tuple[int, ...] = ()) -> UpdateMetadataPartition:
    return UpdateMetadataPartition(topic, partition, CE, leader, leader_epoch,
                                   replicas if isr is None else isr, 1, replicas, offline)


def stop_replica(delete: bool, broker_epoch: int = EPOCH) -> StopReplicaRequest:
    return StopReplicaRequest(0, CE, broker_epoch, delete, (("t", 0),))


def broker_server(core: BrokerCore, *, control: bool = True, **kw: Any
                  ) -> tuple[SocketServer, BrokerRequestHandler]:
    listeners = (f"CONTROLLER://{LOCAL}:0,PLAINTEXT://{LOCAL}:0" if control
                 else f"PLAINTEXT://{LOCAL}:0")
    cfg = parse_listener_config(listeners, "CONTROLLER" if control else None)
    router = kw.pop("router", None)
    handler = BrokerRequestHandler(core, advertised=advertised_apis(cfg), router=router,
                                   cluster_id="kc-test")
    return SocketServer(cfg, handler, **kw).start(), handler


def client(server: SocketServer, listener: str = "PLAINTEXT", timeout: float = 5.0
           ) -> WireClient:
    return WireClient(LOCAL, server.port(listener), timeout=timeout).connect()


def closed_by_peer(c: WireClient) -> bool:
    """True when the server closed this connection (EOF or reset)."""
    try:
        c.recv_frame()
    except TimeoutError:
        return False
    except (ConnectionError, OSError):
        return True
    return False


class GateHandler:
    """A ``RequestHandler`` that records requests and holds each one until ``gate`` opens;
    answers with ``answer(api_key, version, body)``."""

    def __init__(self, answer: Callable[[int, int, dict[str, Any]], dict[str, Any] | None],
                 gated: bool = True) -> None:
        self.answer = answer
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        self.lock = threading.Lock()
        self.received: list[tuple[int, int, dict[str, Any]]] = []
        self.active = 0
        self.max_active = 0

    def handle(self, api_key: int, version: int, header: RequestHeader,
               body: dict[str, Any]) -> dict[str, Any] | None:
        with self.lock:
            self.received.append((api_key, version, body))
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            self.gate.wait(10)
            return self.answer(api_key, version, body)
        finally:
            with self.lock:
                self.active -= 1

    def count(self) -> int:
        with self.lock:
            return len(self.received)
