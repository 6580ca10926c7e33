"""A BrokerCore behind the control-plane and data-plane listeners (KIP-291)."""

from __future__ import annotations

import os
import threading

import pytest
from netserver_support import (
    EPOCH,
    GateHandler,
    broker_server,
    client,
    closed_by_peer,
    lai,
    running_core,
    stop_replica,
    wait_until,
)

from adapters.host import thread_priority
from adapters.network import ControlledShutdownRouter, Plane, SocketServer, WireClient
from adapters.network import parse_listener_config as plc
from adapters.network.codec import ApiKey
from adapters.network.codec import convert as C
from fsm.broker import ReplicaRole
from fsm.errors import ErrorCode
from fsm.events import ControlledShutdown
from fsm.requests import ControlledShutdownResponse

LAI = ApiKey.LEADER_AND_ISR


def lai_wire(**kw: object) -> dict:
    return C.leader_and_isr_request_to_wire(lai(**kw), "PLAINTEXT")  # type: ignore[arg-type]


def test_leader_and_isr_over_the_control_plane_is_applied() -> None:
    core = running_core()
    server, _ = broker_server(core)
    try:
        with client(server, "CONTROLLER") as c:
            resp = c.request(LAI, 2, lai_wire())
        assert resp["error_code"] == 0
        assert resp["partition_errors"] == [
            {"topic_name": "t", "partition_index": 0, "error_code": 0}]
        view = core.replica(("t", 0))
        assert view is not None and view.role is ReplicaRole.LEADER and view.leader_epoch == 1
        assert core.controller_epoch == 3
    finally:
        server.stop()


def test_stale_broker_epoch_is_answered_by_the_core() -> None:
    core = running_core()
    server, _ = broker_server(core)
    try:
        with client(server, "CONTROLLER") as c:
            resp = c.request(LAI, 2, lai_wire(broker_epoch=EPOCH - 1))
        assert resp["error_code"] == ErrorCode.STALE_BROKER_EPOCH
        assert core.replica(("t", 0)) is None
    finally:
        server.stop()


def test_data_plane_refuses_controller_apis_when_a_control_plane_exists() -> None:
    core = running_core()
    server, _ = broker_server(core)
    try:
        with client(server) as bad, client(server) as good:
            bad.send(LAI, 2, lai_wire())
            assert closed_by_peer(bad)  # Kafka closes a connection using a disabled API
            sr = C.stop_replica_request_to_wire(stop_replica(False))
            good.send(ApiKey.API_VERSIONS, 0, {})
            assert good.receive()["error_code"] == 0
        assert core.replica(("t", 0)) is None
        wait_until(lambda: server.metrics().get("listener_PLAINTEXT_closed_rejected_total"))
        with client(server) as c2:
            c2.send(ApiKey.STOP_REPLICA, 1, sr)
            assert closed_by_peer(c2)
    finally:
        server.stop()


def test_control_plane_accepts_only_controller_apis() -> None:
    server, _ = broker_server(running_core())
    try:
        with client(server, "CONTROLLER") as c:
            c.send(ApiKey.METADATA, 1, {"topics": None})
            assert closed_by_peer(c)
        with client(server, "CONTROLLER") as c:
            c.send(ApiKey.API_VERSIONS, 0, {})
            assert closed_by_peer(c)
    finally:
        server.stop()


def test_without_a_control_plane_controller_requests_share_the_data_plane() -> None:
    core = running_core()
    server, _ = broker_server(core, control=False)
    try:
        assert set(server.channels) == {Plane.DATA}
        with client(server) as c:
            resp = c.request(LAI, 2, lai_wire())
            assert resp["error_code"] == 0
            versions = c.request(ApiKey.API_VERSIONS, 1, {})
        keys = {e["api_key"] for e in versions["api_keys"]}
        assert {3, 4, 5, 6, 7, 18} <= keys
        assert core.replica(("t", 0)) is not None
    finally:
        server.stop()


def test_api_versions_on_the_data_plane_advertises_data_plane_apis_only() -> None:
    server, _ = broker_server(running_core())
    try:
        with client(server) as c:
            body = c.request(ApiKey.API_VERSIONS, 2, {})
        assert {e["api_key"] for e in body["api_keys"]} == {3, 7, 18}
    finally:
        server.stop()


def _echo(api_key: int, version: int, body: dict) -> dict:
    return {"error_code": 0, "partition_errors": []}


def test_control_plane_queue_capacity_20_applies_back_pressure_not_drops() -> None:
    """One handler thread holds a request; 20 more fill the queue; the next one waits in
    the listener (it is neither dropped nor refused) and is served once room is made."""
    gate = GateHandler(_echo)
    cfg = plc("CONTROLLER://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", "CONTROLLER")
    server = SocketServer(cfg, gate).start()
    clients: list[WireClient] = []
    try:
        assert server.channels[Plane.CONTROL].capacity == 20
        wire = lai_wire()
        for i in range(22):  # one request per connection: a controller has one in flight
            c = client(server, "CONTROLLER")
            clients.append(c)
            c.send(LAI, 2, wire)
            if i == 0:
                wait_until(lambda: gate.count() == 1, what="the handler to take one")
        wait_until(lambda: server.queue_size(Plane.CONTROL) == 20, what="a full queue")
        m = wait_until(lambda: (x := server.metrics())["control_plane_waiting_puts"] == 1
                       and x, what="the 22nd request to wait")
        assert m["control_plane_queue_size"] == 20
        assert gate.count() == 1 and server.queue_size(Plane.CONTROL) == 20
        gate.gate.set()
        for c in clients:
            assert c.receive()["error_code"] == 0
        assert gate.count() == 22 and gate.max_active == 1
    finally:
        gate.gate.set()
        for c in clients:
            c.close()
        server.stop()


def test_a_blocked_data_plane_does_not_delay_the_control_plane() -> None:
    gate = GateHandler(lambda k, v, b: {"error_code": 0, "api_keys": [], "throttle_time_ms": 0})
    core_handler = GateHandler(_echo, gated=False)
    cfg = plc("CONTROLLER://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", "CONTROLLER")
    server = SocketServer(cfg, gate, control_handler=core_handler, data_handler_threads=1,
                          data_queue_capacity=2).start()
    clients = []
    try:
        for _ in range(4):  # 1 in the handler, 2 queued, 1 blocking the PLAINTEXT listener
            c = client(server)
            c.send(ApiKey.API_VERSIONS, 1, {})
            clients.append(c)
        wait_until(lambda: server.metrics()["data_plane_waiting_puts"] == 1)
        with client(server, "CONTROLLER") as ctl:
            assert ctl.request(LAI, 2, lai_wire())["error_code"] == 0
        gate.gate.set()
        for c in clients:
            assert c.receive()["error_code"] == 0
        m = server.metrics()
        assert m["data_plane_requests_total"] == 4 and m["control_plane_requests_total"] == 1
        assert 0.0 <= m["control_plane_handler_idle_ratio"] <= 1.0
    finally:
        gate.gate.set()
        for c in clients:
            c.close()
        server.stop()


def test_metrics_sample_idle_ratio_and_rate() -> None:
    server, _ = broker_server(running_core())
    try:
        server.metrics()
        with client(server) as c:
            for _ in range(5):
                c.request(ApiKey.API_VERSIONS, 0, {})
        m = server.metrics()
        assert m["data_plane_requests_total"] == 5 and m["data_plane_requests_per_sec"] > 0
        assert 0.5 < m["data_plane_handler_idle_ratio"] <= 1.0
        assert m["control_plane_queue_capacity"] == 20
        assert m["control_plane_queue_size"] == 0
        assert m["listener_PLAINTEXT_accepted_total"] == 1
    finally:
        server.stop()


# ---------------------------------------------------------------- ControlledShutdown


def cs_wire(broker_id: int = 3, epoch: int = 77) -> dict:
    return {"broker_id": broker_id, "broker_epoch": epoch}


def test_controlled_shutdown_at_a_broker_without_controller_is_not_controller() -> None:
    server, _ = broker_server(running_core())  # no router
    try:
        with client(server) as c:
            resp = c.request(ApiKey.CONTROLLED_SHUTDOWN, 2, cs_wire())
        assert resp == {"error_code": ErrorCode.NOT_CONTROLLER, "remaining_partitions": []}
    finally:
        server.stop()


def test_controlled_shutdown_is_routed_to_the_local_controller_and_back() -> None:
    router = ControlledShutdownRouter(timeout_s=5)
    submitted: list[ControlledShutdown] = []
    got = threading.Event()

    def submit(ev: object) -> bool:
        assert isinstance(ev, ControlledShutdown)
        submitted.append(ev)
        got.set()
        return True

    active = [False]
    router.attach(submit, lambda: active[0])
    server, _ = broker_server(running_core(), router=router)
    try:
        with client(server) as c:
            # not the active controller: NOT_CONTROLLER at once
            assert c.request(ApiKey.CONTROLLED_SHUTDOWN, 2, cs_wire())["error_code"] == 41
            active[0] = True
            c.send(ApiKey.CONTROLLED_SHUTDOWN, 2, cs_wire())
            assert got.wait(5)
            ev = submitted[0]
            assert (ev.request.broker_id, ev.request.broker_epoch) == (3, 77)
            reply = ControlledShutdownResponse(ErrorCode.NONE, (("t", 0),))
            assert router.reply(3, ev.correlation, reply)
            resp = c.receive()
        assert resp == {"error_code": 0,
                        "remaining_partitions": [{"topic_name": "t", "partition_index": 0}]}
        assert router.pending == 0
    finally:
        server.stop()


@pytest.mark.parametrize("error", [ErrorCode.NOT_CONTROLLER])
def test_controlled_shutdown_pending_when_controller_resigns(error: ErrorCode) -> None:
    router = ControlledShutdownRouter(timeout_s=5)
    router.attach(lambda ev: True, lambda: True)
    server, _ = broker_server(running_core(), router=router)
    try:
        with client(server) as c:
            c.send(ApiKey.CONTROLLED_SHUTDOWN, 1, {"broker_id": 3})
            wait_until(lambda: router.pending == 1)
            router.fail_all(error)
            assert c.receive()["error_code"] == error
    finally:
        server.stop()


@pytest.mark.skipif(thread_priority.available() is not None,
                    reason="real-time priority not permitted")
def test_only_the_control_plane_threads_ask_for_real_time_priority() -> None:
    thread_priority.configure(thread_priority.AUTO)
    cfg = plc("CONTROLLER://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", "CONTROLLER")
    server = SocketServer(cfg, GateHandler(_echo, gated=False)).start()
    try:
        with client(server, "CONTROLLER") as c:  # the listener has run: its policy is set
            assert c.request(LAI, 2, lai_wire())["error_code"] == 0
        control = [server.listeners["CONTROLLER"]._thread,
                   *server.channels[Plane.CONTROL]._threads]
        data = [server.listeners["PLAINTEXT"]._thread, *server.channels[Plane.DATA]._threads]
        assert len(control) == 2 and all(t is not None and t.native_id for t in control)
        assert {os.sched_getscheduler(t.native_id) for t in control  # type: ignore[union-attr]
                } == {os.SCHED_FIFO}
        assert {os.sched_getscheduler(t.native_id) for t in data
                if t is not None and t.native_id is not None} == {os.SCHED_OTHER}
    finally:
        server.stop()
