"""The broker core's shell on its event thread, with a controller channel that answers from
the pure quorum controller (committed at once) and a metadata feed that hands its log over:
registration with a fresh incarnation id, unfencing, replica directories, Metadata from the
image, SIGTERM through heartbeats to Exit, and a failure halting it."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from adapters.kraft_broker.broker_shell import BrokerShell
from adapters.kraft_broker.replica_dirs import ReplicaDirs
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.broker.events import ControllerResponse, ControllerUnreachable, MetadataFetched
from fsm.kraft.controller.requests import BrokerRegistrationRequest
from fsm.kraft.records.values import BrokerEndpoint
from tests.unit.kraft.controller.harness import CLUSTER, Harness

WAIT_S = 10.0


class HarnessChannel:
    """Answers each request from the harness's controller on its own thread (as the wire
    channel does), then hands the committed log to the shell (as the observer does)."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.shell: BrokerShell | None = None
        self.sent: list[Any] = []
        self.lock = threading.Lock()
        self.fetched = 0
        self.unreachable = False

    def send(self, request: Any) -> None:
        self.sent.append(request)
        threading.Thread(target=self._answer, args=(request,), daemon=True).start()

    def _answer(self, request: Any) -> None:
        assert self.shell is not None
        with self.lock:
            if self.unreachable:
                self.shell.submit(ControllerUnreachable(request))
                return
            response = self.h.ask(request)
            self.shell.submit(ControllerResponse(request, response))
            end = len(self.h.log)
            if end > self.fetched:
                self.shell.submit(MetadataFetched(self.fetched, tuple(self.h.log[self.fetched:])))
                self.fetched = end


def _shell(tmp_path: Path, h: Harness, broker_id: int = 1, **kw: Any) -> tuple[BrokerShell,
                                                                                 HarnessChannel]:
    core = KRaftBroker(KRaftBrokerConfig(
        broker_id, CLUSTER, (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9000 + broker_id),),
        heartbeat_interval_ms=50))
    channel = HarnessChannel(h)
    dirs = ReplicaDirs(tmp_path / f"b{broker_id}",
                       broker_id, lambda tid: core.image.topics[tid].name)
    shell = BrokerShell(core, channel, dirs, **kw)
    channel.shell = shell
    return shell, channel


def test_a_broker_registers_is_unfenced_leads_answers_metadata_and_shuts_down(
        tmp_path: Path) -> None:
    h = Harness()
    exits: list[str] = []
    exited = threading.Event()
    shell, channel = _shell(tmp_path, h, on_exit=lambda why: (exits.append(why), exited.set()))
    try:
        shell.start()
        st = shell.wait_for(lambda s: s.state == "RUNNING" and s.fenced is False, WAIT_S)
        reg = channel.sent[0]
        assert isinstance(reg, BrokerRegistrationRequest)
        assert len(reg.incarnation_id) == 16 and reg.incarnation_id != bytes(16)
        assert st.incarnation_id == reg.incarnation_id.hex() and st.broker_epoch is not None
        assert not h.ctl.committed.brokers[1].fenced

        topic = h.create("orders", partitions=2, factor=1)
        shell.submit(MetadataFetched(channel.fetched, tuple(h.log[channel.fetched:])))
        channel.fetched = len(h.log)
        shell.wait_for(lambda s: s.leaders == 2, WAIT_S)
        props = (tmp_path / "b1" / "orders-0" / "replica.properties").read_text()
        assert "role=leader" in props and "isr=1" in props
        answer = shell.metadata(("orders", "nope")).result(WAIT_S)
        assert [b.broker_id for b in answer.live_brokers] == [1]
        assert answer.controller_id == 1
        assert [(t.topic, len(t.partitions)) for t in answer.topics] == [("orders", 2),
                                                                          ("nope", 0)]
        assert shell.call(lambda core: core.image.topic("orders").topic_id).result(WAIT_S) \
            == topic.topic_id

        assert shell.sig_term()
        assert exited.wait(WAIT_S), shell.status
        assert shell.status.state == "SHUTTING_DOWN"
        assert any(getattr(r, "want_shut_down", False) for r in channel.sent)
        assert h.ctl.committed.brokers[1].fenced or \
            h.ctl.committed.brokers[1].in_controlled_shutdown
        assert exits == ["the core exited"]
    finally:
        shell.stop()
    assert not shell.alive
    with pytest.raises(RuntimeError):
        shell.metadata(None).result(1)


def test_the_process_end_is_the_cores_last_move_after_an_exit_only(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``end()`` after ``stop()``: a broker that exited moves SHUTTING_DOWN -> NOT_RUNNING (the
    state-change log's last line, the status); one stopped while RUNNING stays RUNNING."""
    caplog.set_level(logging.INFO, logger="kcontrol.broker.state.change")
    exited = threading.Event()
    shell, _ = _shell(tmp_path, Harness(), on_exit=lambda why: exited.set())
    try:
        shell.start()
        shell.wait_for(lambda s: s.state == "RUNNING", WAIT_S)
        shell.end()  # the event thread runs: nothing happens
        assert shell.status.state == "RUNNING"
        assert shell.sig_term() and exited.wait(WAIT_S)
    finally:
        shell.stop()
    assert shell.status.state == "SHUTTING_DOWN"
    shell.end()
    assert (shell.status.state, shell.status.broker_epoch) == ("NOT_RUNNING", None)
    moves = [r.getMessage() for r in caplog.records if r.name == "kcontrol.broker.state.change"]
    assert "lifecycle SHUTTING_DOWN -> NOT_RUNNING" in moves[-1], moves

    other, _ = _shell(tmp_path, Harness(), broker_id=2)
    try:
        other.start()
        other.wait_for(lambda s: s.state == "RUNNING", WAIT_S)
    finally:
        other.stop()
    other.end()
    assert other.status.state == "RUNNING"


def test_a_lost_registration_is_retried_after_the_interval(tmp_path: Path) -> None:
    h = Harness()
    shell, channel = _shell(tmp_path, h)
    channel.unreachable = True
    try:
        shell.start()
        shell.wait_for(lambda s: len(channel.sent) >= 3, WAIT_S)
        assert all(r == channel.sent[0] for r in channel.sent)  # the same incarnation
        assert shell.status.state == "STARTING"
        channel.unreachable = False
        shell.wait_for(lambda s: s.state == "RUNNING", WAIT_S)
    finally:
        shell.stop()


def test_an_exception_in_an_effect_halts_the_broker(tmp_path: Path) -> None:
    h = Harness()
    halted = threading.Event()
    shell, channel = _shell(tmp_path, h, on_exit=lambda why: halted.set())
    channel.send = lambda request: (_ for _ in ()).throw(OSError("disk gone"))  # type: ignore
    shell.start()
    try:
        assert halted.wait(WAIT_S)
        assert shell.status.failure == "OSError: disk gone"
        assert not shell.submit(MetadataFetched(0, ()))
    finally:
        shell.stop()


def test_the_isr_expander_on_the_shell_takes_a_returning_broker_back(tmp_path: Path) -> None:
    """The expander's thread woken by the shell's image listener, reading the core through
    ``call`` and asking through ``submit``: broker 2, fenced and back, rejoins the ISR."""
    from adapters.kraft_broker.isr_expander import IsrExpander

    h = Harness()
    shell, channel = _shell(tmp_path, h)
    offsets: list[int] = []
    shell.on_image_change(lambda: offsets.append(shell.core.metadata_offset))
    expander = IsrExpander(1, shell.call, shell.submit, interval_s=60.0, min_gap_s=0.0)
    shell.on_image_change(expander.wake)

    def publish() -> None:
        with channel.lock:
            shell.submit(MetadataFetched(channel.fetched, tuple(h.log[channel.fetched:])))
            channel.fetched = len(h.log)

    def isr() -> tuple[int, ...]:
        with channel.lock:
            return h.partition("t").isr

    try:
        shell.start()
        expander.start()
        shell.wait_for(lambda s: s.state == "RUNNING" and s.fenced is False, WAIT_S)
        with channel.lock:
            h.start_brokers(2)
            h.create("t", assignments=((0, (1, 2)),))
            assert h.heartbeat(2, want_fence=True).is_fenced
        publish()
        shell.wait_for(lambda s: s.leaders == 1, WAIT_S)
        assert isr() == (1,)
        with channel.lock:
            assert not h.heartbeat(2).is_fenced  # back: the next image wakes the expander
        publish()
        deadline = time.monotonic() + WAIT_S
        while isr() != (1, 2):
            assert time.monotonic() < deadline, f"ISR {isr()}"
            time.sleep(0.01)
        assert offsets == sorted(offsets) and offsets[-1] >= 0
    finally:
        expander.stop()
        shell.stop()
