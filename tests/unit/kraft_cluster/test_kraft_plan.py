"""The local KRaft cluster's plan, without starting anything: node ids and ports, each node's
properties (a controller's listener is its own voter entry, a broker has a client listener),
the cluster id's format, the run directory's guard, and ``cluster up``'s refusal of options
that belong to the other mode."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.cluster import kraft_launcher
from adapters.cluster.kraft_launcher import (
    NODE,
    PLAN_FILE,
    KRaftCluster,
    KRaftClusterError,
    random_cluster_id,
)
from adapters.raft_node.args import parse_voters


def _plan(tmp_path: Path, controllers: int = 3, brokers: int = 3) -> KRaftCluster:
    return KRaftCluster(tmp_path / "k", controllers, brokers, backend=NODE,
                        snapshot_every_records=7)


def test_controllers_from_3000_and_brokers_from_1_on_distinct_ports(tmp_path: Path) -> None:
    c = _plan(tmp_path, 3, 4)
    assert sorted(c.controllers) == [3000, 3001, 3002]
    assert sorted(c.brokers) == [1, 2, 3, 4]
    ports = [p for n in c.nodes() for p in (n.port, n.admin_port)]
    assert len(set(ports)) == len(ports) == 14
    assert c.bootstrap_servers == ",".join(f"127.0.0.1:{c.brokers[b].port}" for b in (1, 2, 3, 4))


def test_a_controllers_listener_is_its_voter_entry(tmp_path: Path) -> None:
    c = _plan(tmp_path)
    voters = parse_voters(c.quorum_voters)
    assert set(voters) == set(c.controllers)
    for node_id, n in c.controllers.items():
        p = n.props
        assert p["process.roles"] == "controller"
        assert p["node.id"] == str(node_id)
        assert p["listeners"] == f"CONTROLLER://127.0.0.1:{voters[node_id][1]}"
        assert p["controller.listener.names"] == "CONTROLLER"
        assert p["kcontrol.metadata.snapshot.every.records"] == "7"
        assert p["kcontrol.admin.port"] == str(n.admin_port)
        assert p["metadata.log.dir"] == str(n.data_dir)


def test_a_broker_has_a_client_listener_and_no_controller_listener(tmp_path: Path) -> None:
    c = _plan(tmp_path)
    for node_id, n in c.brokers.items():
        p = n.props
        assert p["process.roles"] == "broker"
        assert p["node.id"] == str(node_id)
        assert p["listeners"] == f"PLAINTEXT://127.0.0.1:{n.port}"
        assert p["advertised.listeners"] == p["listeners"]
        assert p["controller.quorum.voters"] == c.quorum_voters
        assert "CONTROLLER://" not in p["listeners"]


def test_overrides_win_and_the_files_are_written(tmp_path: Path) -> None:
    c = KRaftCluster(tmp_path / "k", 1, 1, backend=NODE,
                     overrides={"broker.session.timeout.ms": "4000"})
    c.prepare()
    text = (tmp_path / "k" / "broker-1.properties").read_text()
    assert "broker.session.timeout.ms=4000\n" in text
    assert "node.id=1\n" in text
    assert (tmp_path / "k" / "controller-3000.properties").exists()
    assert (tmp_path / "k" / PLAN_FILE).exists()


def test_the_cluster_id_is_22_url_safe_characters_of_16_bytes() -> None:
    for _ in range(200):
        cid = random_cluster_id()
        assert len(cid) == 22 and not cid.startswith("-")
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16


def test_a_cluster_id_starting_with_a_dash_or_reserved_is_drawn_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter([b"\xfb" + bytes(15), bytes(16), bytes(15) + b"\x01", b"\x01" * 16])
    monkeypatch.setattr(kraft_launcher.os, "urandom", lambda n: next(draws))
    assert random_cluster_id() == base64.urlsafe_b64encode(b"\x01" * 16).rstrip(b"=").decode()


def test_a_directory_it_did_not_make_is_refused_its_own_is_cleared(tmp_path: Path) -> None:
    foreign = tmp_path / "k"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("x")
    with pytest.raises(KRaftClusterError, match="not empty"):
        _plan(tmp_path).prepare()
    assert (foreign / "precious.txt").exists()
    (foreign / "precious.txt").unlink()
    c = _plan(tmp_path)
    c.prepare()
    (foreign / "controller-3000" / "leftover").parent.mkdir(exist_ok=True)
    (foreign / "controller-3000" / "leftover").write_text("old run")
    _plan(tmp_path).prepare()
    assert not (foreign / "controller-3000" / "leftover").exists()


@pytest.mark.parametrize(("controllers", "brokers", "named"),
                         [(0, 3, "--controllers"), (10, 3, "--controllers"), (3, 10, "--brokers")])
def test_bad_counts_are_refused_by_name(tmp_path: Path, controllers: int, brokers: int,
                                        named: str) -> None:
    with pytest.raises(KRaftClusterError, match=named):
        KRaftCluster(tmp_path, controllers, brokers, backend=NODE)


@pytest.mark.parametrize(("args", "named"), [
    (["--mode", "kraft", "--zookeeper", "127.0.0.1:2181"], "--zookeeper"),
    (["--mode", "kraft", "--session-timeout-ms", "5000"], "--session-timeout-ms"),
    (["--mode", "kraft", "--no-control-plane"], "--control-plane"),
    (["--controllers", "3"], "--controllers"),
])
def test_cluster_up_refuses_the_other_modes_options(args: list[str], named: str) -> None:
    result = CliRunner().invoke(main, ["cluster", "up", *args])
    assert result.exit_code == 2
    assert named in result.output and "only" in result.output


def test_a_directory_whose_cluster_still_runs_is_refused(tmp_path: Path) -> None:
    c = _plan(tmp_path)
    c.prepare()
    plan = json.loads((tmp_path / "k" / PLAN_FILE).read_text())
    config = plan["nodes"][0]["config"]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", config])
    try:
        plan["nodes"][0]["pid"] = sleeper.pid
        (tmp_path / "k" / PLAN_FILE).write_text(json.dumps(plan))
        with pytest.raises(KRaftClusterError, match=f"still runs \\(pids {sleeper.pid}\\)"):
            _plan(tmp_path).prepare()
        assert Path(config).exists()
        plan["nodes"][0]["pid"] = os.getpid()  # alive, but not that node's command line
        (tmp_path / "k" / PLAN_FILE).write_text(json.dumps(plan))
        _plan(tmp_path).prepare()
    finally:
        sleeper.kill()
        sleeper.wait()
