"""The ZooKeeper launcher against real servers: quorum, failover, refusals, the CLI."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient

from adapters.cli.zookeeper_cmd import zookeeper
from adapters.ensemble import (
    STATE_FILE,
    AlreadyRunningError,
    Ensemble,
    EnsembleStatus,
    JarsNotFoundError,
    JavaNotFoundError,
    PortInUseError,
    QuorumError,
    ServerStatus,
    four_letter,
    is_server_process,
    process_alive,
    wait_for,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def connected(hosts: str) -> Iterator[KazooClient]:
    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def chroot_of(connect_string: str) -> str:
    return "/" + connect_string.split("/", 1)[1]


def row(status: EnsembleStatus, server_id: int) -> ServerStatus:
    return next(r for r in status.servers if r.id == server_id)


def recorded_pids(directory: Path) -> list[int | None]:
    state = json.loads((directory / STATE_FILE).read_text())
    return [server["pid"] for server in state["servers"]]


def stop_leftovers(directory: Path) -> None:
    if (directory / STATE_FILE).exists():
        Ensemble.load(directory).stop()


# --- the session ensemble ---------------------------------------------------------------------


def test_fixture_is_a_three_server_quorum(zk_ensemble: Ensemble, zk_chroot: str) -> None:
    modes = sorted(
        four_letter.srvr("127.0.0.1", server.client_port).mode for server in zk_ensemble.servers
    )
    assert modes == ["follower", "follower", "leader"]

    chroot = chroot_of(zk_chroot)
    first, second = zk_ensemble.servers[0], zk_ensemble.servers[1]
    with connected(first.address + chroot) as writer, connected(second.address + chroot) as reader:
        writer.create("/written-on-one", b"read on another")
        reader.sync("/written-on-one")
        assert reader.get("/written-on-one")[0] == b"read on another"


def test_zk_client_works_in_its_own_chroot(zk_client: KazooClient, zk_chroot: str) -> None:
    zk_client.create("/mine", b"x")
    with connected(zk_chroot.rsplit("/", 1)[0]) as root:  # the same ensemble, no chroot
        assert root.exists(chroot_of(zk_chroot) + "/mine")


def test_survives_losing_the_leader_which_rejoins_and_catches_up(
    zk_ensemble: Ensemble, zk_chroot: str
) -> None:
    chroot = chroot_of(zk_chroot)
    leader = zk_ensemble.status().leader
    assert leader is not None and leader.pid is not None
    try:
        assert zk_ensemble.stop_server(leader.id).outcome == "stopped"
        assert not process_alive(leader.pid)
        status = zk_ensemble.wait_for_quorum()  # the two left elect a new leader
        assert row(status, leader.id).mode == "stopped"
        survivors = ",".join(s.address for s in zk_ensemble.servers if s.id != leader.id)
        with connected(survivors + chroot) as client:
            client.create("/while-down", b"2 of 3")

        zk_ensemble.start_server(leader.id)
        status = zk_ensemble.wait_for_quorum()
        assert row(status, leader.id).mode == "follower"
        with connected(zk_ensemble.connect_string + chroot) as client:
            client.create("/after-restart", b"3 of 3")

        def caught_up() -> bool:
            now = zk_ensemble.status()
            return now.leader is not None and row(now, leader.id).zxid == now.leader.zxid

        assert wait_for(caught_up, timeout=15), zk_ensemble.status()
        with connected(zk_ensemble.server(leader.id).address + chroot) as client:
            assert client.get("/while-down")[0] == b"2 of 3"
            assert client.get("/after-restart")[0] == b"3 of 3"
    finally:
        if not zk_ensemble.is_running(leader.id):
            zk_ensemble.start_server(leader.id)
        zk_ensemble.wait_for_quorum()


# --- refusals and failures --------------------------------------------------------------------


def test_refuses_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        ensemble = Ensemble.create(tmp_path / "zk", servers=1, base_port=port)
        try:
            with pytest.raises(PortInUseError) as refused:
                ensemble.start()
        finally:
            ensemble.stop()
    message = str(refused.value)
    assert f"port {port}" in message and "server 1" in message
    assert not (tmp_path / "zk" / STATE_FILE).exists()


def test_missing_java_and_missing_jars_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(JavaNotFoundError, match="KCONTROL_JAVA"):
        Ensemble.create(tmp_path / "a", servers=1, java=str(tmp_path / "no-java")).start()
    with pytest.raises(JarsNotFoundError, match="apt-get install -y zookeeper"):
        Ensemble.create(tmp_path / "b", servers=1, jar_dir=tmp_path).start()


def test_a_server_that_dies_fails_fast_with_its_output(tmp_path: Path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    with zipfile.ZipFile(jars / "zookeeper.jar", "w") as empty:  # a jar without ZooKeeper in it
        empty.writestr("README", "not ZooKeeper")
    ensemble = Ensemble.create(tmp_path / "zk", servers=1, jar_dir=jars, die_with_parent=True)
    with pytest.raises(QuorumError) as failed:
        ensemble.up(timeout=30)
    message = str(failed.value)
    assert "exited" in message and "NOT running" in message
    assert "QuorumPeerMain" in message  # the JVM's complaint, from stdout.log


def test_timeout_names_each_server_and_stops_them(tmp_path: Path) -> None:
    ensemble = Ensemble.create(tmp_path / "zk", servers=1, die_with_parent=True)
    with pytest.raises(QuorumError, match=r"no quorum after 0\.01 s") as failed:
        ensemble.up(timeout=0.01)  # a JVM is not serving after 10 ms
    assert "server 1 (client port" in str(failed.value)
    assert recorded_pids(tmp_path / "zk") == [None]


def test_down_stops_recorded_pids_and_spares_a_reused_pid(tmp_path: Path) -> None:
    directory = tmp_path / "zk"
    ensemble = Ensemble.create(directory, servers=1, die_with_parent=True)
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        ensemble.up()
        with pytest.raises(AlreadyRunningError, match="down"):
            Ensemble.create(directory, servers=1).start()
        server = ensemble.servers[0]
        real_pid = server.pid
        assert real_pid is not None and is_server_process(real_pid, server.config_path)

        state_path = directory / STATE_FILE
        state = json.loads(state_path.read_text())
        state["servers"][0]["pid"] = bystander.pid  # as if the pid had been reused
        state_path.write_text(json.dumps(state))
        assert [r.outcome for r in Ensemble.load(directory).stop()] == ["not ours"]
        assert bystander.poll() is None
        assert is_server_process(real_pid, server.config_path)

        state["servers"][0]["pid"] = real_pid
        state_path.write_text(json.dumps(state))
        assert [r.outcome for r in Ensemble.load(directory).stop()] == ["stopped"]
        assert not process_alive(real_pid)
        assert recorded_pids(directory) == [None]
    finally:
        bystander.kill()
        bystander.wait()
        ensemble.stop()


# --- the CLI ----------------------------------------------------------------------------------


def test_cli_up_status_down(tmp_path: Path) -> None:
    directory = tmp_path / "zk"
    runner = CliRunner()
    try:
        up = runner.invoke(zookeeper, ["up", "--servers", "1", "--dir", str(directory)])
        assert up.exit_code == 0, up.output
        connect_string = up.stdout.splitlines()[-1]
        assert connect_string == Ensemble.load(directory).connect_string
        pids = recorded_pids(directory)
        assert all(pid is not None and process_alive(pid) for pid in pids)

        again = runner.invoke(zookeeper, ["up", "--servers", "1", "--dir", str(directory)])
        assert again.exit_code == 1 and "kcontrol zookeeper down" in again.stderr

        status = runner.invoke(zookeeper, ["status", "--dir", str(directory), "--json"])
        assert status.exit_code == 0, status.output
        report = json.loads(status.stdout)
        assert report["quorum"] and report["servers"][0]["mode"] == "standalone"
        table = runner.invoke(zookeeper, ["status", "--dir", str(directory)])
        assert table.exit_code == 0 and "standalone" in table.stdout

        down = runner.invoke(zookeeper, ["down", "--dir", str(directory)])
        assert down.exit_code == 0 and f"stopped server 1 (pid {pids[0]})" in down.stdout
        assert not any(process_alive(pid) for pid in pids if pid is not None)

        after = runner.invoke(zookeeper, ["status", "--dir", str(directory)])
        assert after.exit_code == 1
        quiet = runner.invoke(zookeeper, ["down", "--dir", str(directory)])
        assert quiet.exit_code == 0 and "nothing was running" in quiet.stdout
    finally:
        stop_leftovers(directory)


@pytest.mark.parametrize("servers", ["0", "10"])
def test_cli_rejects_a_bad_server_count(tmp_path: Path, servers: str) -> None:
    result = CliRunner().invoke(zookeeper, ["up", "--servers", servers, "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "--servers" in result.output


def test_cli_up_names_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        try:
            result = CliRunner().invoke(
                zookeeper,
                ["up", "--servers", "1", "--base-port", str(port), "--dir", str(tmp_path)],
            )
        finally:
            stop_leftovers(tmp_path)
    assert result.exit_code == 1
    assert f"port {port}" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_cli_run_stops_its_servers_on_a_signal(tmp_path: Path, signum: int) -> None:
    directory = tmp_path / "zk"
    command = "from adapters.cli.zookeeper_cmd import zookeeper; zookeeper()"
    run = subprocess.Popen(
        [sys.executable, "-c", command, "run", "--servers", "1", "--dir", str(directory)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )

    def serving() -> bool:
        with suppress(Exception):
            return Ensemble.load(directory).status().has_quorum
        return False

    try:
        assert wait_for(serving, timeout=30), "`run` did not bring up a serving ensemble"
        pids = recorded_pids(directory)
        run.send_signal(signum)
        output, _ = run.communicate(timeout=30)
        assert run.returncode == 0, output.decode()
        assert b"stopped server 1" in output
        assert not any(process_alive(pid) for pid in pids if pid is not None)
        assert recorded_pids(directory) == [None]
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        stop_leftovers(directory)
