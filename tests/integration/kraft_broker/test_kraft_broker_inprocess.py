"""``start_broker`` in this process next to three voter processes: ``status()`` follows it to
RUNNING, unfenced, at the controllers' offset; with every controller gone, ``stop()`` (the
SIGTERM path) still returns, bounded by the session timeout -- the controlled shutdown never
answered -- and leaves no thread of the broker running."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from adapters.ensemble.processes import free_ports
from adapters.kraft_broker import start_broker
from adapters.kraft_broker.args import broker_settings
from adapters.raft_node.args import DEFAULT_CLUSTER_ID
from adapters.raft_node.launcher import LocalQuorum

pytestmark = pytest.mark.integration

ELECTION_MS = 500
SESSION_MS = 3000


def test_status_to_running_and_a_bounded_stop_without_controllers(tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path / "q", controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS)
    settings = broker_settings(
        50, {n: ("127.0.0.1", v.port) for n, v in q.voters.items()}, ("127.0.0.1", 0),
        tmp_path / "b50", broker_heartbeat_interval_ms=200, broker_session_timeout_ms=SESSION_MS,
        admin_port=free_ports(1)[0])
    exits: list[str] = []
    before = {t.ident for t in threading.enumerate()}
    q.start()
    broker = None
    try:
        q.wait_leader(20)
        broker = start_broker(settings, DEFAULT_CLUSTER_ID, on_exit=exits.append)
        assert broker.shell is not None
        broker.shell.wait_for(lambda s: s.state == "RUNNING" and s.fenced is False, 20)
        st = broker.status()
        assert st["broker_epoch"] is not None and st["active_controller"] in q.voters
        assert st["listeners"]["PLAINTEXT"].startswith("127.0.0.1:")
        assert st["metadata_offset"] == st["metadata_high_watermark"] - 1
        q.kill_all()
        t0 = time.monotonic()
        broker.stop()
        took = time.monotonic() - t0
        assert SESSION_MS / 1000 - 0.5 <= took <= SESSION_MS / 1000 + 5, took
        assert broker.status()["state"] == "PENDING_CONTROLLED_SHUTDOWN"
        assert exits == []  # stopped, not exited by itself
        broker = None
    finally:
        if broker is not None:
            broker.stop(timeout=1)
        q.kill_all()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [t.name for t in threading.enumerate()
                if t.ident not in before and t.is_alive()
                and ("broker" in t.name or t.name.endswith("-50") or "admin" in t.name)]
        if not left:
            break
        time.sleep(0.05)
    assert not left, left
