"""Three voter processes on loopback ports, each on a real fsync'd log in its own directory:
one leader is elected, records appended on it are committed and read back identically from
every voter's log on disk, a ``kill -9`` of the leader leads to a new leader in a higher epoch
that commits, the old leader rejoins as a follower with the same log, and a voter whose
log's tail was torn while it was down recovers and catches up.

Every wait is on a condition with a deadline (``LocalQuorum.wait_*``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.raft_node.describe import describe_quorum
from adapters.raft_node.launcher import LocalQuorum, Voter
from adapters.raft_node.node import open_metadata_log
from adapters.raft_node.record_bytes import to_values
from fsm.errors import ErrorCode
from fsm.kraft.records.values import ConfigRecord

pytestmark = pytest.mark.integration

ELECTION_MS = 500
WAIT_S = 30.0


def quorum(root: Path, **kw: Any) -> LocalQuorum:
    return LocalQuorum(root, election_timeout_ms=ELECTION_MS, fetch_timeout_ms=4 * ELECTION_MS,
                       election_backoff_max_ms=ELECTION_MS, **kw)


def on_disk(voter: Voter, to: int) -> list[tuple[int, int, bool, tuple[Any, ...]]]:
    """The batches of ``voter``'s log below ``to``, as its directory holds them (the voter
    is down: the log is opened -- recovered -- by this test)."""
    assert not voter.running
    log = open_metadata_log(voter.directory)
    try:
        out = []
        at = 0
        while at < to:
            got = log.read(at, to, 1024)
            assert got, f"node {voter.node_id}: no batch at {at} (want up to {to})"
            out += [(b.base_offset, b.epoch, b.control, to_values(b).records) for b in got]
            at = got[-1].end_offset
        return out
    finally:
        log.close()


def appended_keys(batches: list[tuple[int, int, bool, tuple[Any, ...]]]) -> list[str]:
    return [r.name for _, _, control, records in batches if not control for r in records
            if isinstance(r, ConfigRecord)]


def test_election_commit_failover_and_rejoin(tmp_path: Path) -> None:
    q = quorum(tmp_path)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        first = leader.request("append", records=100, batch=10, size=100)
        assert first["end_offset"] - first["base_offset"] == 100
        q.wait_high_watermark(first["end_offset"], WAIT_S)
        digests = {n: v.request("digest", to=first["end_offset"]) for n, v in q.voters.items()}
        assert len({d["sha256"] for d in digests.values()}) == 1, digests
        assert all(d["end_offset"] == first["end_offset"] for d in digests.values())
        dq = describe_quorum("127.0.0.1", leader.port)  # the transport's client path
        assert dq.error is ErrorCode.NONE and dq.leader_id == leader.node_id
        assert dq.high_watermark >= first["end_offset"]
        assert sorted(r.replica_id for r in dq.current_voters) == [1, 2, 3]
        follower = next(v for v in q.voters.values() if v is not leader)
        assert describe_quorum("127.0.0.1", follower.port).error is not ErrorCode.NONE

        old, old_epoch = leader, first["epoch"]
        old.kill()
        new = q.wait_leader(WAIT_S, min_epoch=old_epoch + 1)
        assert new.node_id != old.node_id
        second = new.request("append", records=1, batch=1, size=100)
        assert second["epoch"] > old_epoch and second["base_offset"] > first["end_offset"]
        q.wait_high_watermark(second["end_offset"], WAIT_S)

        old.start()
        q.wait_leader(WAIT_S, min_epoch=second["epoch"])
        st = q.wait_high_watermark(second["end_offset"], WAIT_S, nodes=(old.node_id,))
        assert st[old.node_id]["role"] == "follower"
        end = second["end_offset"]
        q.wait_for("every log at the same end", lambda s: len(s) == 3 and all(
            x["log_end_offset"] >= end for x in s.values()), WAIT_S)
        digests = {n: v.request("digest", to=end) for n, v in q.voters.items()}
        assert len({d["sha256"] for d in digests.values()}) == 1, digests
    finally:
        q.stop()
    logs = {n: on_disk(v, end) for n, v in q.voters.items()}
    assert logs[1] == logs[2] == logs[3]
    keys = appended_keys(logs[1])
    assert len(keys) == 101  # 10 batches of k0..k9, then the one record of the new leader
    assert keys[:10] == [f"k{i}" for i in range(10)]
    epochs = [e for _, e, _, _ in logs[1]]
    assert epochs == sorted(epochs) and epochs[-1] == second["epoch"]


def _last_segment(directory: Path) -> Path:
    segments = sorted(p for p in directory.rglob("*.log") if p.stat().st_size > 0)
    assert segments, f"no log segment under {directory}"
    return segments[-1]


def test_a_voter_with_a_torn_tail_recovers_and_catches_up(tmp_path: Path) -> None:
    q = quorum(tmp_path)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        follower = next(v for v in q.voters.values() if v is not leader)
        first = leader.request("append", records=50, batch=5, size=100)
        q.wait_high_watermark(first["end_offset"], WAIT_S)
        q.wait_for("the follower's log holds everything", lambda s: s.get(
            follower.node_id, {}).get("flushed_offset", 0) >= first["end_offset"], WAIT_S)
        follower.kill()
        segment = _last_segment(follower.directory)
        size = segment.stat().st_size
        with open(segment, "r+b") as f:  # the tail of the last batch torn
            f.truncate(size - 7)
        more = leader.request("append", records=20, batch=5, size=100)
        follower.start()
        end = more["end_offset"]
        q.wait_high_watermark(end, WAIT_S, nodes=(follower.node_id,))
        q.wait_for("the follower caught up", lambda s: s.get(follower.node_id, {}).get(
            "log_end_offset", 0) >= end, WAIT_S)
        d = {n: v.request("digest", to=end)["sha256"] for n, v in q.voters.items()}
        assert len(set(d.values())) == 1, d
    finally:
        q.stop()
    assert on_disk(follower, end) == on_disk(leader, end)


def test_a_leader_stopped_gracefully_hands_over_before_any_timeout(tmp_path: Path) -> None:
    """SIGTERM: the leader resigns (EndQuorumEpoch) and exits 0; a new leader is elected
    without waiting for a fetch timeout (set long here, so only the resignation can do it)."""
    q = LocalQuorum(tmp_path, election_timeout_ms=ELECTION_MS, fetch_timeout_ms=30_000,
                    election_backoff_max_ms=ELECTION_MS)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        epoch = leader.request("status")["epoch"]
        assert leader.stop() == 0
        new = q.wait_leader(20.0, min_epoch=epoch + 1)
        assert new is not leader
    finally:
        q.stop()
