"""Snapshots on a quorum of controller nodes (``--controller --snapshot-every``): while one
voter is down the others commit enough to snapshot and drop the log below it; the voter,
started again behind the leader's log start, fetches the snapshot (FetchSnapshot), installs
it and its standby controller holds everything the snapshot held and what came after."""

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


def test_a_voter_behind_the_log_start_installs_the_leaders_snapshot(tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path, controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS,
                    extra_args=("--snapshot-every", "10"))
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the active controller", lambda _: (b := brokers(leader)) and b["active"],
                   WAIT_S)
        behind = next(v for v in q.voters.values() if v is not leader)
        behind.kill()
        epochs = {}
        for b in range(40):
            r = leader.request("register_broker", broker_id=100 + b)
            assert r["error"] == "NONE", r
            epochs[str(100 + b)] = r["broker_epoch"]
        q.wait_for("the leader's log start past the stopped voter's end", lambda s: s.get(
            leader.node_id, {}).get("log_start_offset", 0) > 0, WAIT_S)
        behind.start()

        def caught_up(_: object) -> bool:
            got = brokers(behind)
            return got is not None and {k: v["epoch"] for k, v in got["brokers"].items()} \
                == epochs

        q.wait_for("the restarted voter's controller holds every broker", caught_up, WAIT_S)
        st = behind.request("status")
        assert st["snapshots_installed"] >= 1 and st["log_start_offset"] > 0, st
        assert st["snapshot_loaded_offset"] == -1, st  # installed, not loaded at its start
        # started again, its log begins with that snapshot: the image is loaded from it at
        # start (said in the status, issue 26) and it replays to the high watermark
        behind.kill()
        r = leader.request("register_broker", broker_id=200)
        assert r["error"] == "NONE", r
        epochs["200"] = r["broker_epoch"]
        hw = leader.request("status")["high_watermark"]
        behind.start()
        q.wait_for("the restarted voter replayed to the high watermark", lambda s: s.get(
            behind.node_id, {}).get("replayed_offset", 0) >= hw, WAIT_S)
        st = behind.request("status")
        assert st["snapshot_loaded_offset"] == st["log_start_offset"] > 0, st
        assert st["snapshot_loaded_at"] > 0 and st["snapshots_installed"] == 0, st
        q.wait_for("its controller holds every broker", caught_up, WAIT_S)
    finally:
        q.stop()
