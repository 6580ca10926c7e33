"""``adapters.host.thread_priority``: the control plane's threads at SCHED_FIFO, per thread,
only when asked, with a clear refusal for ``realtime`` and one warning for ``auto``."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.host import thread_priority as priority

PERMITTED = priority.available() is None


@pytest.fixture(autouse=True)
def _restore_mode() -> Iterator[None]:
    yield
    priority.configure(priority.NORMAL)


def on_thread(fn: Callable[[], object]) -> tuple[object, int]:
    """``fn()`` on a fresh thread: (its result, that thread's policy afterwards)."""
    out: list[tuple[object, int]] = []
    t = threading.Thread(target=lambda: out.append((fn(), os.sched_getscheduler(0))))
    t.start()
    t.join()
    return out[0]


def refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    def denied() -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(priority, "_set_fifo", denied)


def test_normal_never_asks() -> None:
    priority.configure(priority.NORMAL)
    assert on_thread(lambda: priority.raise_priority("t")) == (priority.NORMAL, os.SCHED_OTHER)


@pytest.mark.skipif(not PERMITTED, reason="real-time priority not permitted here")
@pytest.mark.parametrize("mode", [priority.AUTO, priority.REALTIME])
def test_a_thread_raises_only_itself(mode: str) -> None:
    priority.configure(mode)
    assert on_thread(lambda: priority.raise_priority("t")) == (priority.REALTIME,
                                                               os.SCHED_FIFO)
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the caller is untouched
    assert priority.available() is None and os.sched_getscheduler(0) == os.SCHED_OTHER


def test_auto_refused_falls_back_with_one_warning(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    refuse(monkeypatch)
    priority.configure(priority.AUTO)
    with caplog.at_level(logging.WARNING, "kcontrol.priority"):
        for _ in range(3):
            assert on_thread(lambda: priority.raise_priority("t")) == (priority.NORMAL,
                                                                       os.SCHED_OTHER)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "ordinary priority" in warnings[0].getMessage()


def test_realtime_refused_is_an_error_auto_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse(monkeypatch)
    reason = priority.available()
    assert reason is not None and "CAP_SYS_NICE" in reason
    with pytest.raises(priority.PriorityError, match="realtime.*use auto"):
        priority.check(priority.REALTIME)
    priority.check(priority.AUTO)
    priority.check(priority.NORMAL)


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown control-plane priority 'fast'"):
        priority.configure("fast")
    assert priority.mode() == priority.NORMAL


def test_broker_command_refuses_realtime_it_cannot_have(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse(monkeypatch)
    r = CliRunner().invoke(main, ["broker", "--id", "1", "--zookeeper", "127.0.0.1:1",
                                  "--listeners", "PLAINTEXT://127.0.0.1:0",
                                  "--control-plane-priority", "realtime"])
    assert r.exit_code == 1, r.output
    assert "--control-plane-priority realtime" in r.output and "CAP_SYS_NICE" in r.output


def test_broker_command_rejects_an_unknown_priority() -> None:
    r = CliRunner().invoke(main, ["broker", "--id", "1", "--zookeeper", "127.0.0.1:1",
                                  "--listeners", "PLAINTEXT://127.0.0.1:0",
                                  "--control-plane-priority", "fast"])
    assert r.exit_code == 2 and "--control-plane-priority" in r.output
