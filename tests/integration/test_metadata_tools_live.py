"""``kcontrol dump-log`` and ``kcontrol metadata-shell`` against three controller processes
(``LocalQuorum --controller --snapshot-every 10``) that registered brokers: dump-log over a
voter's segment and snapshot, the shell over ``--snapshot``, ``--directory`` and
``--bootstrap-controller`` (following the leader, fetching its snapshot, and again after the
leader is killed) -- every answer compared with the active controller's committed image
(admin op ``brokers``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from adapters.cli import main
from adapters.raft_log import PARTITION_DIR
from adapters.raft_node.launcher import LocalQuorum, Voter

pytestmark = pytest.mark.integration

ELECTION_MS = 500
WAIT_S = 20.0


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def committed(v: Voter) -> dict[str, Any] | None:
    try:
        got = v.request("brokers")
    except Exception:  # noqa: BLE001 -- a node still starting: polled again
        return None
    return got if got.get("active") else None


def shell_brokers(*source: str) -> dict[str, dict[str, Any]]:
    """The brokers ``kcontrol metadata-shell`` shows: id -> {epoch, fenced}."""
    ls = run("metadata-shell", *source, "ls", "/image/cluster/brokers")
    assert ls.exit_code == 0, ls.output
    out = {}
    for b in ls.stdout.split():
        cat = run("metadata-shell", *source, "cat", f"/image/cluster/brokers/{b}")
        assert cat.exit_code == 0, cat.output
        data = json.loads(cat.stdout)
        assert data["brokerId"] == int(b)
        out[b] = {"epoch": data["brokerEpoch"], "fenced": data["fenced"]}
    return out


def test_dump_log_and_the_metadata_shell_read_what_the_controllers_committed(
        tmp_path: Path) -> None:
    q = LocalQuorum(tmp_path, controller=True, election_timeout_ms=ELECTION_MS,
                    fetch_timeout_ms=4 * ELECTION_MS, election_backoff_max_ms=ELECTION_MS,
                    extra_args=("--snapshot-every", "10"))
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the active controller", lambda _: committed(leader), WAIT_S)
        for b in [*range(1, 13), 20]:
            assert leader.request("register_broker", broker_id=b)["error"] == "NONE"
        hw = leader.request("status")["high_watermark"]
        q.wait_high_watermark(hw, WAIT_S)
        image = committed(leader)
        assert image is not None and image["committed_offset"] == hw - 1
        expected = image["brokers"]
        assert len(expected) == 13
        log_dir = leader.directory / PARTITION_DIR
        q.wait_for("a snapshot on the leader", lambda _: list(log_dir.glob("*.checkpoint")),
                   WAIT_S)
        (checkpoint,) = sorted(log_dir.glob("*.checkpoint"))[-1:]
        snap_offset = int(checkpoint.name.split("-")[0])
        assert leader.request("status")["log_start_offset"] == snap_offset

        # dump-log: the segment holds every registration, the snapshot those below it
        seg = log_dir / "00000000000000000000.log"
        r = run("dump-log", "--json", "-", str(seg))
        assert r.exit_code == 0, r.output
        records = [json.loads(line) for line in r.stdout.splitlines()]
        regs = {str(x["data"]["brokerId"]): (x["offset"], x["data"]["brokerEpoch"])
                for x in records if x["type"] == "REGISTER_BROKER_RECORD" and x["offset"] < hw}
        assert {b: e for b, (_, e) in regs.items()} == {
            b: v["epoch"] for b, v in expected.items()}
        assert records[0]["type"] == "LEADER_CHANGE"
        text = run("dump-log", "--cluster-metadata-decoder", str(seg), str(checkpoint))
        assert text.exit_code == 0, text.output
        lines = text.stdout.splitlines()
        assert lines[:2] == [f"Dumping {seg}", "Log starting offset: 0"]
        assert f"Snapshot end offset: {snap_offset}, epoch: {checkpoint.name[21:31].lstrip('0')}"\
            in lines
        assert sum(" SnapshotHeader {" in x for x in lines) == 1
        assert lines[-1].endswith(' SnapshotFooter {"version":0}')
        in_snapshot = run("dump-log", "--json", "-", str(checkpoint))
        snap_ids = {str(json.loads(x)["data"]["brokerId"]) for x in in_snapshot.stdout.split("\n")
                    if '"REGISTER_BROKER_RECORD"' in x}
        assert snap_ids == {b for b, (offset, _) in regs.items() if offset < snap_offset}

        # the shell over the snapshot: the image as of the snapshot, nothing after it
        snap_view = shell_brokers("--snapshot", str(checkpoint))
        assert snap_view == {b: expected[b] for b in snap_ids}
        prov = run("metadata-shell", "--snapshot", str(checkpoint), "cat", "/image/provenance")
        assert prov.stdout.startswith(f"offset {snap_offset - 1}, epoch ")

        # over each voter's directory, live: the snapshot and the log after it
        for v in q.voters.values():
            assert shell_brokers("--directory", str(v.directory)) == expected, v.node_id

        # over the quorum: the leader found from a follower's hint, its snapshot fetched
        follower = next(v for v in q.voters.values() if v is not leader)
        by_id = f"{follower.node_id}@127.0.0.1:{follower.port}," \
                f"{leader.node_id}@127.0.0.1:{leader.port}"
        assert shell_brokers("--bootstrap-controller", by_id) == expected
        source = run("metadata-shell", "--bootstrap-controller", by_id, "cat", "/local/source")
        assert f"127.0.0.1:{leader.port} (leader in epoch" in source.stdout
        assert f"snapshot {snap_offset}-" in source.stdout  # fetched with FetchSnapshot
        prov = run("metadata-shell", "--bootstrap-controller", by_id, "cat", "/image/provenance")
        assert prov.stdout.startswith(f"offset {hw - 1}, epoch ")
        # a follower's address alone: it names the leader, its address learnt from it
        alone = run("metadata-shell", "--bootstrap-controller",
                    f"127.0.0.1:{follower.port}", "cat", "/local/source")
        assert alone.exit_code == 0, alone.output
        assert f"127.0.0.1:{leader.port} (leader in epoch" in alone.stdout

        # the leader killed: the next one answers, with the same committed image
        leader.kill()
        everyone = ",".join(f"127.0.0.1:{v.port}" for v in q.voters.values())
        new = q.wait_leader(WAIT_S, exclude=(leader.node_id,))
        q.wait_for("the new active controller", lambda _: committed(new), WAIT_S)
        after = shell_brokers("--bootstrap-controller", everyone)
        assert after == {b: v for b, v in committed(new)["brokers"].items()}  # type: ignore[index]
        assert after == expected
    finally:
        q.stop()


def test_the_quorum_shell_says_whom_it_tried_when_nothing_answers(tmp_path: Path) -> None:
    from adapters.ensemble.processes import free_ports

    (port,) = free_ports(1)
    r = run("metadata-shell", "--bootstrap-controller", f"127.0.0.1:{port}", "--timeout",
            "1", "ls")
    assert r.exit_code == 1
    assert f"error: no leader found: cannot connect to 127.0.0.1:{port}" in r.stderr
    r = run("metadata-shell", "--bootstrap-controller", "nowhere", "ls")
    assert r.exit_code == 1 and "want HOST:PORT" in r.stderr
