"""``run_node``'s parts without processes: the controller role's ``NodeArgs`` come from the
settings; in combined mode the controller starts first and the broker is handed it, and they
stop in reverse (the broker's controlled shutdown needs the controller); a broker-only node
gets no controller; the broker role not built is exit 1 with a line saying so; a part that
fails to start stops what had started and exits 1."""

from __future__ import annotations

import logging
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

from adapters.kraft_node import runtime
from adapters.kraft_node.settings import NodeSettings
from adapters.raft_node.process import Lifetime


def settings(roles: set[str], **kw: Any) -> NodeSettings:
    return NodeSettings(process_roles=frozenset(roles), node_id=1,
                        quorum_voters={1: ("127.0.0.1", 9093), 2: ("127.0.0.1", 9094)},
                        controller_listener_names=("CONTROLLER",),
                        listeners={"CONTROLLER": ("127.0.0.1", 9093)},
                        metadata_log_dir=Path("/tmp/meta"), log_dirs=(Path("/tmp/meta"),),
                        **kw)


def test_node_args_from_settings() -> None:
    args = runtime.node_args(settings({"controller"}, broker_session_timeout_ms=4000,
                                      num_partitions=3, default_replication_factor=2,
                                      controller_quorum_request_timeout_ms=1500,
                                      metadata_snapshot_every_records=100, admin_port=7),
                             "cid")
    assert args.controller and args.cluster_id == "cid" and args.node_id == 1
    assert args.voters == {1: ("127.0.0.1", 9093), 2: ("127.0.0.1", 9094)}
    assert args.directory == Path("/tmp/meta") and args.admin_port == 7
    assert (args.session_timeout_ms, args.default_partitions, args.default_replication_factor,
            args.request_timeout_ms, args.snapshot_every) == (4000, 3, 2, 1500, 100)


class FakeNode:
    def __init__(self, calls: list[str], args: Any, on_halt: Any = None) -> None:
        self.calls = calls
        self.args = args

    def start(self) -> None:
        self.calls.append("controller start")

    def stop(self, *, resign: bool) -> None:
        self.calls.append(f"controller stop resign={resign}")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    out: list[str] = []
    monkeypatch.setattr(runtime, "QuorumNode", lambda args, on_halt=None:
                        FakeNode(out, args, on_halt))

    def start_broker(s: NodeSettings, cluster_id: str, controller_node: Any = None) -> Any:
        out.append(f"broker start with {type(controller_node).__name__}")
        return types.SimpleNamespace(stop=lambda: out.append("broker stop"))

    module = types.ModuleType("adapters.kraft_broker")
    module.start_broker = start_broker  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adapters.kraft_broker", module)
    return out


def test_combined_starts_the_controller_first_and_stops_it_last(calls: list[str]) -> None:
    parts = runtime._Parts(settings({"controller", "broker"}), "cid", Lifetime())
    parts.start()
    parts.stop(True)
    assert calls == ["controller start", "broker start with FakeNode", "broker stop",
                     "controller stop resign=True"]


def test_a_broker_alone_gets_no_controller(calls: list[str]) -> None:
    parts = runtime._Parts(settings({"broker"}), "cid", Lifetime())
    parts.start()
    parts.stop(False)
    assert calls == ["broker start with NoneType", "broker stop"]


def test_a_failed_start_stops_what_started_and_exits_1(
        calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise OSError("port taken")

    monkeypatch.setattr(sys.modules["adapters.kraft_broker"], "start_broker", broken)
    assert runtime.run_node(settings({"controller", "broker"}), "cid") == 1
    assert calls == ["controller start", "controller stop resign=False"]


def test_the_broker_role_not_built_is_exit_1(monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "adapters.kraft_broker", None)  # import fails
    with caplog.at_level(logging.ERROR):
        assert runtime.run_node(settings({"broker"}), "cid") == 1
    assert "the broker role is not built yet" in caplog.text


def test_run_node_gives_the_signal_handlers_back(calls: list[str]) -> None:
    import signal

    before = signal.getsignal(signal.SIGTERM)
    lifetime = Lifetime()
    lifetime.done.set()  # as a signal would
    status = runtime.run_until_stopped(lambda: None, lambda graceful: calls.append(
        f"stop graceful={graceful}"), lifetime, "node 1")
    assert status == 0 and calls == ["stop graceful=True"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_broker_that_exits_by_itself_ends_the_process_as_halted(
        calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def start_broker(s: NodeSettings, cluster_id: str, controller_node: Any = None, *,
                     on_exit: Any = None) -> Any:
        seen["on_exit"] = on_exit
        return types.SimpleNamespace(stop=lambda: calls.append("broker stop"))

    monkeypatch.setattr(sys.modules["adapters.kraft_broker"], "start_broker", start_broker)
    lifetime = Lifetime()
    parts = runtime._Parts(settings({"broker"}), "cid", lifetime)
    parts.start()
    seen["on_exit"]("initial registration timed out")
    assert lifetime.done.is_set() and lifetime.halted == ["initial registration timed out"]


def test_a_halted_node_whose_parts_do_not_stop_exits_anyway(
        caplog: pytest.LogCaptureFixture) -> None:
    lifetime = Lifetime()
    lifetime.on_halt("metadata log I/O error in /d: errno 28 ENOSPC (No space left on device)")
    exited: list[int] = []
    released = threading.Event()

    def exit_now(code: int) -> None:
        exited.append(code)
        released.set()  # a real os._exit never returns; here the stuck stop is let go

    def stuck_stop(graceful: bool) -> None:
        assert released.wait(20), "the watchdog never fired"

    with caplog.at_level(logging.ERROR):
        status = runtime.run_until_stopped(lambda: None, stuck_stop, lifetime, "node 1",
                                           halt_grace_s=0.2, exit_now=exit_now)
    assert status == 3 and exited == [3]
    assert "halted: metadata log I/O error in /d: errno 28 ENOSPC" in caplog.text
    assert "did not stop within 0.2 s of its halt" in caplog.text


def test_a_halted_node_that_stops_in_time_is_not_cut_short() -> None:
    lifetime = Lifetime()
    lifetime.on_halt("boom")
    exited: list[int] = []
    status = runtime.run_until_stopped(lambda: None, lambda graceful: None, lifetime,
                                       "node 1", halt_grace_s=0.05, exit_now=exited.append)
    assert status == 3
    deadline = time.monotonic() + 20
    while any(t.name == "kcontrol-halt-watchdog" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the cancelled watchdog is still alive"
        time.sleep(0.01)
    assert exited == []  # its thread ended without firing: it never will
