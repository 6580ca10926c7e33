"""``--zookeeper-auth`` on ``kcontrol cluster up|status|down`` and on the ``kcontrol broker``
processes it starts: the broker's registration and its controller's znodes are world-readable
and writable by that identity only; the identity reaches the brokers through the environment
(not their command lines), is recorded in the private state file for ``status``/``down``, and
is never printed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from kazoo.exceptions import NoAuthError

from adapters.cluster import Cluster
from adapters.ensemble import Ensemble
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth, make_client, secure_acl
from fsm import zk_paths as P

pytestmark = pytest.mark.integration

AUTH = ZkAuth("kcontrol", f"pw-{uuid.uuid4().hex[:12]}")


def kcontrol(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    env.pop(AUTH_ENV, None)
    return subprocess.run([sys.executable, "-m", "adapters.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def shape(acl: list) -> list[tuple[int, str, str]]:
    """An ACL as an outsider sees it (digest ids shown as ``user:x``)."""
    return sorted((a.perms, a.id.scheme, a.id.id.split(":")[0]) for a in acl)


def test_broker_with_zookeeper_auth_creates_its_znodes_with_the_acl(
        zk_ensemble: Ensemble, tmp_path: Path) -> None:
    hosts = f"{zk_ensemble.connect_string}/kcontrol-acl-{uuid.uuid4().hex}"  # made by `up`
    directory = tmp_path / "cluster"
    anon = make_client(hosts, timeout=10.0)
    own = make_client(hosts, auth=AUTH, timeout=10.0)
    try:
        up = kcontrol("cluster", "up", "--brokers", "1", "--zookeeper", hosts,
                      "--dir", str(directory), "--session-timeout-ms", "4000",
                      "--zookeeper-auth", AUTH.credential)
        assert up.returncode == 0, up.stderr
        assert AUTH.password not in up.stdout + up.stderr

        # recorded for status/down in a private state file; not on any command line
        state_file = directory / "cluster.json"
        assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
        state = json.loads(state_file.read_text())
        assert state["zookeeper_auth"] == AUTH.credential
        pid = state["brokers"][0]["pid"]
        assert AUTH.password not in Path(f"/proc/{pid}/cmdline").read_text()
        assert AUTH.password not in json.dumps(state["brokers"])
        assert Cluster.load(directory).zookeeper_auth == AUTH

        anon.start(timeout=15)
        own.start(timeout=15)
        for path in ("/", P.BROKER_IDS, P.broker(1), P.CONTROLLER, P.CONTROLLER_EPOCH):
            anon.sync(path)
            assert shape(anon.get_acls(path)[0]) == shape(secure_acl(AUTH)), path
            assert sorted(own.get_acls(path)[0], key=str) == sorted(secure_acl(AUTH),
                                                                     key=str), path
            anon.get(path)  # world-readable
        for change in (lambda: anon.delete(P.broker(1)),
                       lambda: anon.set(P.broker(1), b"{}"),
                       lambda: anon.create(P.broker(9), b"{}", ephemeral=True),
                       lambda: anon.delete(P.CONTROLLER),
                       lambda: anon.set(P.CONTROLLER, b"{}"),
                       lambda: anon.delete(P.CONTROLLER_EPOCH),
                       lambda: anon.set(P.CONTROLLER_EPOCH, b"99")):
            with pytest.raises(NoAuthError):
                change()
        assert anon.exists(P.broker(1)) is not None

        status = kcontrol("cluster", "status", "--dir", str(directory))
        assert status.returncode == 0, status.stdout + status.stderr
        assert AUTH.password not in status.stdout + status.stderr
    finally:
        for c in (anon, own):
            c.stop()
            c.close()
        down = kcontrol("cluster", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stdout + down.stderr
    assert "broker 1" in down.stdout and AUTH.password not in down.stdout + down.stderr
