"""``kcontrol quorum describe`` against three real voter processes: ``--status`` names the
leader all voters agree on, its epoch, the high watermark and the voters, in Kafka's layout
and as JSON; ``--replication`` lists the leader, then its two followers, each with its log
end offset and a lag against the leader's; a follower named first is passed over for the
leader; nobody listening is exit 1 with the address in the message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.ensemble.processes import free_ports
from adapters.raft_node.launcher import LocalQuorum

pytestmark = pytest.mark.integration

WAIT_S = 20.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalQuorum, Any]]:
    q = LocalQuorum(tmp_path_factory.mktemp("quorum"), controller=True,
                    election_timeout_ms=300, fetch_timeout_ms=1200,
                    election_backoff_max_ms=300)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_high_watermark(1, WAIT_S)
        yield q, leader
    finally:
        q.stop()


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["quorum", "describe", *args])


def addresses(q: LocalQuorum, first: int) -> str:
    order = [first] + [n for n in q.voters if n != first]
    return ",".join(f"127.0.0.1:{q[n].port}" for n in order)


def test_status_names_the_leader_its_epoch_and_the_voters(quorum: Any) -> None:
    q, leader = quorum
    follower = next(n for n in q.voters if n != leader.node_id)
    r = run("--bootstrap-controller", addresses(q, follower), "--status")
    assert r.exit_code == 0, r.output
    lines = dict(line.split(":", 1) for line in r.output.splitlines())
    assert lines["LeaderId"].strip() == str(leader.node_id)
    status = leader.request("status")
    assert int(lines["LeaderEpoch"]) == status["epoch"]
    assert int(lines["HighWatermark"]) >= 1
    assert lines["CurrentVoters"].strip() == "[" + ",".join(map(str, q.voters)) + "]"
    assert lines["CurrentObservers"].strip() == "[]"
    assert int(lines["MaxFollowerLag"]) >= 0
    assert r.output.splitlines()[1].startswith("LeaderId:               ")  # Kafka's column


def test_status_as_json(quorum: Any) -> None:
    q, leader = quorum
    r = run("--bootstrap-controller", addresses(q, leader.node_id), "--status", "--json", "-")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["LeaderId"] == leader.node_id
    assert report["CurrentVoters"] == sorted(q.voters)
    assert "LeaderId:" in r.stderr  # the text goes to stderr with --json -


def test_replication_lists_leader_then_followers(quorum: Any, tmp_path: Path) -> None:
    q, leader = quorum
    out = tmp_path / "replication.json"
    r = run("--bootstrap-controller", addresses(q, leader.node_id), "--replication",
            "--json", str(out))
    assert r.exit_code == 0, r.output
    header, *rows = r.output.splitlines()
    assert header.split() == ["NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                              "LastCaughtUpTimestamp", "Status"]
    assert [row.split()[-1] for row in rows] == ["Leader", "Follower", "Follower"]
    assert int(rows[0].split()[0]) == leader.node_id
    report = json.loads(out.read_text())
    lead = report[0]
    assert lead["Lag"] == 0 and lead["LogEndOffset"] >= 1
    for row in report[1:]:
        assert row["Lag"] == lead["LogEndOffset"] - row["LogEndOffset"]
        assert row["LastFetchTimestamp"] > 1_600_000_000_000  # milliseconds since the epoch


def test_nobody_listening_is_exit_1_naming_the_address() -> None:
    (port,) = free_ports(1)
    r = run("--bootstrap-controller", f"127.0.0.1:{port}", "--status", "--timeout", "1")
    assert r.exit_code == 1
    assert f"cannot connect to 127.0.0.1:{port}" in r.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--status"], "exactly one of --bootstrap-server or --bootstrap-controller"),
    (["--bootstrap-controller", "h:1"], "exactly one of --status or --replication"),
    (["--bootstrap-controller", "nocolon", "--status"], "--bootstrap-controller"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    r = run(*args)
    assert r.exit_code == 2 and message in r.stderr, r.output
