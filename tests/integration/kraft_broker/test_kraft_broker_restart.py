"""A broker restarted right after a clean shutdown registers at once, on real processes: its
controlled shutdown fenced it, and a fenced broker has no valid session (Kafka's
``BrokerHeartbeatManager.hasValidSession``), so the active controller accepts the new
incarnation although the old one's lease (30 s here) still runs. Before the fix it answered
DUPLICATE_BROKER_REGISTRATION until that lease ended: 30 s after the broker's last heartbeat."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.cluster.kraft_launcher import KRaftCluster, has_broker_role

pytestmark = [pytest.mark.integration]

SESSION_S = 30
BROKER = 2


@pytest.fixture
def kraft(tmp_path: Path) -> Iterator[KRaftCluster]:
    if not has_broker_role():
        pytest.skip("the broker role is not reachable through kcontrol node in this checkout")
    c = KRaftCluster(tmp_path / "k", 1, 2, overrides={
        "broker.heartbeat.interval.ms": "200",
        "broker.session.timeout.ms": str(SESSION_S * 1000)})
    try:
        c.up(timeout=60)
        yield c
    except BaseException:
        for n in c.nodes():
            print(f"--- {n.name}\n" + "\n".join(
                n.log_path.read_text(errors="replace").splitlines()[-20:]))
        raise
    finally:
        c.stop()


def test_a_broker_restarted_after_sigterm_is_registered_and_unfenced_at_once(
        kraft: KRaftCluster) -> None:
    c = kraft
    old_epoch = c.wait_brokers((1, BROKER))[BROKER]
    assert c.terminate(BROKER) == "stopped"
    assert c.node(BROKER).proc.returncode == 0  # type: ignore[union-attr]
    c.wait_brokers((BROKER,), fenced=True, timeout=5)  # fenced by its controlled shutdown

    t0 = time.monotonic()
    c.start_node(BROKER)

    def registered_again() -> int | None:
        got = c.registered_brokers()
        reg = None if got is None else got.get(BROKER)
        if reg is None or reg["fenced"] or int(reg["epoch"]) == old_epoch:
            return None
        return int(reg["epoch"])

    new_epoch = c.wait_for(f"broker {BROKER} registered anew and unfenced", registered_again,
                           timeout=SESSION_S)
    took = time.monotonic() - t0
    assert new_epoch > old_epoch
    # refused until the old lease ends, it would have taken about the whole session
    assert took < SESSION_S / 2, f"registered and unfenced {took:.1f} s after the restart"
    log = c.node(BROKER).log_path.read_text(errors="replace")
    assert "DUPLICATE_BROKER_REGISTRATION" not in log
    assert c.wait_brokers((1, BROKER))[BROKER] == new_epoch  # and both stay unfenced
