"""Three voter processes hosting the quorum controller (``--controller``): a broker registered
through the active controller (the Raft leader) is committed and replayed by the standbys; a
standby answers NOT_CONTROLLER; after ``kill -9`` of the leader the new active controller
holds the registration (its image was built by replay) and registers another broker; the old
leader, restarted, replays both as a standby."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.raft_node.launcher import LocalQuorum, Voter

pytestmark = pytest.mark.integration

ELECTION_MS = 500
WAIT_S = 30.0


def brokers(v: Voter) -> dict[str, Any] | None:
    try:
        return v.request("brokers")
    except Exception:  # noqa: BLE001 -- a node still starting: polled again
        return None


def wait_active(q: LocalQuorum, leader: Voter) -> dict[str, Any]:
    return q.wait_for(f"node {leader.node_id}'s controller active",
                      lambda _: (b := brokers(leader)) is not None and b["active"] and b, WAIT_S)


def wait_holds(q: LocalQuorum, v: Voter, broker_id: int, epoch: int) -> dict[str, Any]:
    def holds(_: object) -> dict[str, Any] | None:
        b = brokers(v)
        reg = None if b is None else b["brokers"].get(str(broker_id))
        return b if reg is not None and reg["epoch"] == epoch else None

    return q.wait_for(f"node {v.node_id} holds broker {broker_id}", holds, WAIT_S)


def test_registration_survives_failover(tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path, controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        wait_active(q, leader)
        reg = leader.request("register_broker", broker_id=7)
        assert reg["error"] == "NONE" and reg["broker_epoch"] >= 0, reg
        standbys = [v for v in q.voters.values() if v is not leader]
        for v in standbys:
            b = wait_holds(q, v, 7, reg["broker_epoch"])
            assert not b["active"]
        refused = standbys[0].request("register_broker", broker_id=9)
        assert refused["error"] == "NOT_CONTROLLER"

        old_epoch = leader.request("status")["epoch"]
        leader.kill()
        new = q.wait_leader(WAIT_S, min_epoch=old_epoch + 1)
        active = wait_active(q, new)
        assert active["brokers"]["7"]["epoch"] == reg["broker_epoch"]  # built by replay
        reg8 = new.request("register_broker", broker_id=8)
        assert reg8["error"] == "NONE" and reg8["broker_epoch"] > reg["broker_epoch"], reg8

        leader.start()
        wait_holds(q, leader, 8, reg8["broker_epoch"])
        back = wait_holds(q, leader, 7, reg["broker_epoch"])
        assert not back["active"]
    finally:
        q.stop()

