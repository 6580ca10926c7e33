"""ControllerChannelManager against real listeners on loopback sockets."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from netserver_support import (
    EPOCH,
    LOCAL,
    GateHandler,
    broker_server,
    info,
    lai,
    running_core,
    stop_replica,
    um,
    ump,
    wait_until,
)

from adapters.network import (
    Backoff,
    ControlledShutdownRouter,
    ControllerChannelManager,
    SocketServer,
    parse_listener_config,
)
from adapters.network.codec import ApiKey
from fsm.errors import ErrorCode
from fsm.events import BrokerResponseReceived
from fsm.requests import ControlledShutdownResponse, ControllerResponse
from fsm.values import BrokerInfo, Endpoint

FAST = Backoff(initial_s=0.01, max_s=0.05, jitter=0.0)


class Events:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[BrokerResponseReceived] = []

    def __call__(self, ev: object) -> bool:
        assert isinstance(ev, BrokerResponseReceived)
        with self.lock:
            self.items.append(ev)
        return True

    def of(self, broker_id: int) -> list[BrokerResponseReceived]:
        with self.lock:
            return [e for e in self.items if e.broker_id == broker_id]

    def __len__(self) -> int:
        with self.lock:
            return len(self.items)


def answer(api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    if api_key == ApiKey.UPDATE_METADATA:
        return {"error_code": 0}
    return {"error_code": 0, "partition_errors": []}


def fake_broker(gated: bool = False, port: int = 0) -> tuple[SocketServer, GateHandler]:
    handler = GateHandler(answer, gated=gated)
    cfg = parse_listener_config(f"CONTROLLER://{LOCAL}:{port},PLAINTEXT://{LOCAL}:0",
                                "CONTROLLER")
    return SocketServer(cfg, handler).start(), handler


def info_of(broker_id: int, server: SocketServer, epoch: int = EPOCH) -> BrokerInfo:
    return BrokerInfo(broker_id, epoch, server.endpoints())


def manager(**kw: Any) -> tuple[ControllerChannelManager, Events]:
    m = ControllerChannelManager(0, backoff=FAST, request_timeout_s=5, **kw)
    events = Events()
    m.start(events)
    return m, events


def test_requests_reach_real_brokers_on_the_control_plane_and_answers_come_back() -> None:
    cores = {1: running_core(1), 2: running_core(2)}
    servers = {b: broker_server(c)[0] for b, c in cores.items()}
    m, events = manager()
    try:
        m.brokers(tuple(info_of(b, s) for b, s in servers.items()))
        live = (info(1, servers[1].port("PLAINTEXT")), info(2, servers[2].port("PLAINTEXT")))
        m.send(1, lai(replicas=(1, 2), leader=1))
        m.send(2, lai(replicas=(1, 2), leader=1))
        m.send(1, um((ump("t", 0, 1, (1, 2)),), live, controller_id=0))
        m.send(1, stop_replica(delete=True))
        wait_until(lambda: len(events) == 4, what="4 answers")
        one = events.of(1)
        assert [(e.api, e.broker_epoch, e.delete_partitions) for e in one] == [
            ("LeaderAndIsr", EPOCH, None), ("UpdateMetadata", EPOCH, None),
            ("StopReplica", EPOCH, True)]
        assert one[0].response == ControllerResponse("LeaderAndIsr", ErrorCode.NONE,
                                                     ((("t", 0), ErrorCode.NONE),))
        assert events.of(2)[0].response.error == ErrorCode.NONE
        assert cores[2].replica(("t", 0)) is not None
        assert cores[1].replica(("t", 0)) is None  # stopped and deleted
        assert cores[1].metadata_cache.controller_id == 0
        for s in servers.values():  # the controller used CONTROLLER, never PLAINTEXT
            mt = s.metrics()
            assert mt["listener_CONTROLLER_accepted_total"] == 1
            assert mt["listener_PLAINTEXT_accepted_total"] == 0
        assert m.metrics()["broker_1_sent_total"] == 3
    finally:
        m.close()
        for s in servers.values():
            s.stop()


def test_stale_epoch_answer_carries_the_epoch_the_request_was_stamped_with() -> None:
    server, _ = broker_server(running_core(1))
    m, events = manager()
    try:
        m.brokers((info_of(1, server),))
        m.send(1, stop_replica(delete=False, broker_epoch=EPOCH - 7))
        wait_until(lambda: len(events) == 1)
        ev = events.of(1)[0]
        assert (ev.broker_epoch, ev.delete_partitions) == (EPOCH - 7, False)
        assert ev.response.error == ErrorCode.STALE_BROKER_EPOCH
    finally:
        m.close()
        server.stop()


def test_falls_back_to_plaintext_when_the_broker_has_no_control_plane() -> None:
    core = running_core(1)
    server, _ = broker_server(core, control=False)
    m, events = manager()
    try:
        m.brokers((info_of(1, server),))
        assert [e.listener for e in server.endpoints()] == ["PLAINTEXT"]
        m.send(1, lai())
        wait_until(lambda: len(events) == 1)
        assert events.of(1)[0].response.error == ErrorCode.NONE
    finally:
        m.close()
        server.stop()


def test_one_in_flight_per_broker_and_a_slow_broker_does_not_block_another() -> None:
    slow, slow_h = fake_broker(gated=True)
    fast, fast_h = fake_broker()
    m, events = manager()
    try:
        m.brokers((info_of(1, slow), info_of(2, fast)))
        m.send(1, lai(topic="a"))
        m.send(1, lai(topic="b"))
        m.send(2, lai(topic="c"))
        wait_until(lambda: len(events.of(2)) == 1, what="the fast broker's answer")
        wait_until(lambda: slow_h.count() == 1)
        assert events.of(1) == [] and m.queue_size(1) == 1
        assert m.in_flight(1) is not None and m.in_flight(1).partitions[0].topic == "a"
        assert m.metrics()["broker_1_queue_size"] == 1
        slow_h.gate.set()
        wait_until(lambda: len(events.of(1)) == 2)
        assert [b["topic_states"][0]["topic_name"] for _, _, b in slow_h.received] == ["a", "b"]
        assert slow_h.max_active == 1 and m.queue_size(1) == 0
    finally:
        slow_h.gate.set()
        m.close()
        slow.stop()
        fast.stop()


def test_reconnects_with_backoff_after_a_listener_restart_and_resends_in_flight() -> None:
    first, first_h = fake_broker(gated=True)
    port = first.port("CONTROLLER")
    m, events = manager()
    second = None
    try:
        m.brokers((BrokerInfo(1, EPOCH, (Endpoint("CONTROLLER", LOCAL, port),)),))
        m.send(1, lai(topic="x"))
        wait_until(lambda: first_h.count() == 1, what="the first attempt")
        first.listeners["CONTROLLER"].stop()  # the broker goes away with the request
        wait_until(lambda: m.metrics()["broker_1_reconnects_total"] >= 2,
                   what="failed reconnects while the listener is down")
        first_h.gate.set()
        first.stop()
        assert events.of(1) == []  # the first answer never left
        second, second_h = fake_broker(port=port)
        wait_until(lambda: len(events.of(1)) == 1, what="the resent request's answer")
        assert second_h.count() == 1
        assert second_h.received[0][2] == first_h.received[0][2]  # the same request
        assert events.of(1)[0].broker_epoch == EPOCH
    finally:
        first_h.gate.set()
        m.close()
        first.stop()
        if second is not None:
            second.stop()


def test_remove_broker_drops_its_queue_and_connection() -> None:
    server, handler = fake_broker(gated=True)
    m, events = manager()
    try:
        m.brokers((info_of(1, server),))
        for t in "abc":
            m.send(1, lai(topic=t))
        wait_until(lambda: handler.count() == 1)
        assert m.queue_size(1) == 2
        m.remove_broker(1)
        assert m.channel_ids() == [] and m.queue_size(1) == 0
        assert "broker_1_queue_size" not in m.metrics()
        wait_until(lambda: server.listeners["CONTROLLER"].connection_count == 0,
                   what="the connection to close")
        handler.gate.set()
        m.send(1, lai(topic="d"))  # the broker is gone: dropped, not queued
        assert m.dropped == 1 and m.channel_ids() == []
        m.close()
        assert handler.count() == 1 and len(events) == 0
    finally:
        handler.gate.set()
        m.close()
        server.stop()


def test_reset_drops_every_queue_and_fails_pending_controlled_shutdowns() -> None:
    server, handler = fake_broker(gated=True)
    router = ControlledShutdownRouter(timeout_s=5)
    router.attach(lambda ev: True, lambda: True)
    m, events = manager(router=router)
    from fsm.requests import ControlledShutdownRequest
    result: list[ControlledShutdownResponse] = []
    t = threading.Thread(target=lambda: result.append(
        router.request(ControlledShutdownRequest(3, 9))))
    try:
        m.brokers((info_of(1, server),))
        m.send(1, lai(topic="a"))
        m.send(1, lai(topic="b"))
        t.start()
        wait_until(lambda: handler.count() == 1 and router.pending == 1)
        m.reset()
        t.join(5)
        assert result == [ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)]
        assert m.channel_ids() == []
        handler.gate.set()
        m.close()
        assert len(events) == 0
        m.brokers((info_of(1, server),))  # elected again: channels come back
        m.send(1, lai(topic="c"))
        wait_until(lambda: len(events) == 1)
    finally:
        handler.gate.set()
        m.close()
        server.stop()


def test_reply_controlled_shutdown_goes_to_the_waiting_request() -> None:
    router = ControlledShutdownRouter(timeout_s=5)
    seen: list[Any] = []
    router.attach(lambda ev: seen.append(ev) or True, lambda: True)
    m, _ = manager(router=router)
    from fsm.requests import ControlledShutdownRequest
    out: list[ControlledShutdownResponse] = []
    t = threading.Thread(target=lambda: out.append(router.request(ControlledShutdownRequest(3,
                                                                                            9))))
    t.start()
    wait_until(lambda: seen)
    m.reply_controlled_shutdown(3, seen[0].correlation, ControlledShutdownResponse(
        ErrorCode.NONE))
    t.join(5)
    assert out == [ControlledShutdownResponse(ErrorCode.NONE)]
    m.close()


@pytest.mark.parametrize("attempt", [1, 2, 3, 10])
def test_backoff_is_exponential_and_capped(attempt: int) -> None:
    b = Backoff(initial_s=0.05, max_s=1.0, jitter=0.0)
    assert b.delay(attempt) == min(1.0, 0.05 * 2 ** (attempt - 1))
    jittered = Backoff(jitter=0.2).delay(attempt)
    assert 0.8 * b.delay(attempt) <= jittered <= 1.2 * b.delay(attempt)
