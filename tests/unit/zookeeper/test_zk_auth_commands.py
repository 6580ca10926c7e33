"""``--zookeeper-auth`` on ``kcontrol broker``, ``audit`` and ``cluster ...``: a bad value is a
usage error (exit 2) naming the option, without the password; ``Cluster`` records a good one
in its private state file, and hands it to brokers only through the environment (no server
needed: tests/integration/cluster/test_cluster_acl.py runs them)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.cluster import Cluster
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth

COMMANDS = [
    ["broker", "--id", "1", "--zookeeper", "127.0.0.1:1", "--listeners",
     "PLAINTEXT://127.0.0.1:0"],
    ["audit", "--zookeeper", "127.0.0.1:1"],
    ["cluster", "up", "--zookeeper", "127.0.0.1:1"],
    ["cluster", "status"],
    ["cluster", "down"],
    ["cluster", "demo"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(("value", "message"), [
    ("bad", "expected USER:PASSWORD"),
    ("us er:s3cret", "spaces or control characters"),
])
def test_a_bad_value_is_a_usage_error(command: list[str], value: str, message: str,
                                      tmp_path: Path) -> None:
    r = CliRunner().invoke(main, [*command, "--zookeeper-auth", value], env={AUTH_ENV: None})
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--zookeeper-auth'" in r.output and message in r.output, r.output
    assert "s3cret" not in r.output


@pytest.mark.parametrize("command", [["broker"], ["audit"], ["cluster", "up"],
                                     ["cluster", "status"], ["cluster", "down"],
                                     ["cluster", "demo"]])
def test_the_option_is_documented(command: list[str]) -> None:
    r = CliRunner().invoke(main, [*command, "--help"])
    assert r.exit_code == 0 and "--zookeeper-auth USER:PASSWORD" in r.output, r.output


def test_the_cluster_records_the_identity_privately_and_off_command_lines(
        tmp_path: Path) -> None:
    auth = ZkAuth("kcontrol", "s3cret")
    c = Cluster.create(tmp_path / "c", 1, zookeeper="127.0.0.1:1/kc", zookeeper_auth=auth)
    c._save()
    assert stat.S_IMODE(c.state_path.stat().st_mode) == 0o600
    assert all("s3cret" not in arg for b in c.brokers.values() for arg in b.argv)
    assert Cluster.load(c.directory).zookeeper_auth == auth
    plain = Cluster.create(tmp_path / "p", 1, zookeeper="127.0.0.1:1/kc")
    plain._save()
    assert Cluster.load(plain.directory).zookeeper_auth is None
    assert "zookeeper_auth" in plain.state_path.read_text()
