"""The cyclic collector is off while a controller loads the cluster and handles the load, and
back on afterwards (``adapters.host.gc_tuning.CollectorPause`` in ``ControllerService``)."""

from __future__ import annotations

import gc

import pytest
from runtime_helpers import wait_until

from adapters.zookeeper.reads import ZkReader
from fsm.controller import Controller
from fsm.events import ClusterLoaded
from fsm.reads.markers import LOAD

pytestmark = pytest.mark.integration


def test_collector_off_through_the_failover_load_only(make_service, make_broker,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    read_with: list[bool] = []
    handled_with: list[bool] = []
    materialize, handle = ZkReader.materialize, Controller.handle

    def spy_read(self: ZkReader, marker, **kw):  # type: ignore[no-untyped-def]
        out = materialize(self, marker, **kw)
        if marker.kind == LOAD:
            read_with.append(gc.isenabled())
        return out

    def spy_handle(self: Controller, event):  # type: ignore[no-untyped-def]
        if isinstance(event, ClusterLoaded):
            handled_with.append(gc.isenabled())
        return handle(self, event)

    monkeypatch.setattr(ZkReader, "materialize", spy_read)
    monkeypatch.setattr(Controller, "handle", spy_handle)
    assert gc.isenabled()
    make_broker(1)
    svc = make_service(1)
    wait_until(lambda: svc.is_active and svc.last_load_s is not None, 20, "service 1 loaded")
    assert svc.wait_idle(10)
    assert read_with == [False] and handled_with == [False]
    assert gc.isenabled()
