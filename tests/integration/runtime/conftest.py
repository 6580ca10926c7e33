"""Fixtures for the controller-service tests on the real 3-server ensemble."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from kazoo.client import KazooClient
from runtime_helpers import SESSION_MS

from adapters.controller import ControllerService
from adapters.network.broker_channels import LoggingChannels
from adapters.zookeeper.broker_registration import BrokerRegistrar
from fsm.values import Endpoint


@pytest.fixture
def make_service(zk_chroot: str) -> Iterator[Callable[..., ControllerService]]:
    made: list[ControllerService] = []

    def make(broker_id: int, **kw: object) -> ControllerService:
        kw.setdefault("session_timeout_ms", SESSION_MS)
        kw.setdefault("channels", LoggingChannels())
        svc = ControllerService(broker_id, zk_chroot, **kw)  # type: ignore[arg-type]
        svc.start()
        made.append(svc)
        return svc

    yield make
    for s in made:
        s.stop()


@pytest.fixture
def make_broker(zk_chroot: str) -> Iterator[Callable[[int], BrokerRegistrar]]:
    clients: list[KazooClient] = []

    def make(broker_id: int) -> BrokerRegistrar:
        c = KazooClient(hosts=zk_chroot, timeout=SESSION_MS / 1000)
        c.start(timeout=15)
        clients.append(c)
        reg = BrokerRegistrar(c, broker_id, (Endpoint("PLAINTEXT", "127.0.0.1", 9092 + broker_id),),
                              auto_reregister=True)
        reg.register()
        return reg

    yield make
    for c in clients:
        c.stop()
        c.close()
