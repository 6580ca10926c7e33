"""``BrokerNode`` in-process (no control-plane listener: the old shared data plane), its
re-registration after a session expiry, and ``kcontrol broker``'s argument and port errors."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from click.testing import CliRunner
from cluster_helpers import SESSION_MS, metadata, wait_until
from kazoo.client import KazooClient

from adapters.broker import BrokerNode, BrokerSettings
from adapters.cli import main
from adapters.network import WireClient, parse_listener_config
from adapters.network.codec import ApiKey
from adapters.network.codec import convert as C
from fsm import zk_paths as P
from fsm.broker_states import BrokerState
from fsm.requests import UpdateMetadataRequest

pytestmark = pytest.mark.integration


def expire_session(client: KazooClient, hosts: str) -> None:
    """Expire ``client``'s session on the ensemble: a second connection to the same session
    (id and password), closed."""
    sid, pwd = client._session_id, client._session_passwd
    other = KazooClient(hosts=hosts, client_id=(sid, pwd), timeout=SESSION_MS / 1000)
    other.start(timeout=15)
    other.stop()
    other.close()


def test_shared_data_plane_and_session_expiry(zk_chroot: str, zk_client: KazooClient) -> None:
    settings = BrokerSettings(5, zk_chroot, parse_listener_config("PLAINTEXT://127.0.0.1:0"),
                              session_timeout_ms=SESSION_MS, metrics_port=0)
    node = BrokerNode(settings).start()
    try:
        assert node.state is BrokerState.RUNNING
        first = node.epoch
        zk_client.sync(P.broker(5))
        assert zk_client.exists(P.broker(5)).czxid == first
        wait_until(lambda: node.is_controller, 30, "the only broker becomes controller")
        port = node.port("PLAINTEXT")
        wait_until(lambda: (metadata(port) or {}).get("controller_id") == 5, 30,
                   "the broker's metadata names itself controller")
        # no control plane: controller APIs are served on the data plane, and fenced there
        with WireClient("127.0.0.1", port) as c:
            keys = {k["api_key"] for k in c.request(ApiKey.API_VERSIONS, 0, {})["api_keys"]}
            assert ApiKey.LEADER_AND_ISR in keys
            stale = C.update_metadata_request_to_wire(UpdateMetadataRequest(9, 1000, 1, (), ()))
            assert c.request(ApiKey.UPDATE_METADATA, 5, stale)["error_code"] == 77
        url = f"http://127.0.0.1:{node.metrics.port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
        assert "kafka_network_RequestChannel_RequestQueueSize" in text
        assert "ControlPlane" not in text

        assert node.client is not None
        expire_session(node.client, zk_chroot)
        wait_until(lambda: node.state is BrokerState.RUNNING and node.epoch not in (None, first),
                   30, "re-registration with a new epoch")
        second = node.epoch
        assert second is not None and first is not None and second > first
        zk_client.sync(P.broker(5))
        assert zk_client.exists(P.broker(5)).czxid == second
    finally:
        node.close()
    assert node.exited.is_set() and node.state is BrokerState.NOT_RUNNING
    zk_client.sync(P.broker(5))
    assert zk_client.exists(P.broker(5)) is None


@pytest.mark.parametrize("args, message", [
    (["--id", "-1"], "--id"),
    (["--id", "1", "--listeners", "PLAINTEXT://10.1.2.3:9092"], "loopback"),
    (["--id", "1", "--listeners", "PLAINTEXT://127.0.0.1:0", "--control-plane-listener",
      "CONTROLLER"], "--control-plane-listener"),
    (["--id", "1", "--zookeeper", "no port:x"], "--zookeeper"),
])
def test_bad_arguments_exit_2(args: list[str], message: str) -> None:
    base = {"--zookeeper": "127.0.0.1:2181", "--listeners": "PLAINTEXT://127.0.0.1:0"}
    for flag, value in base.items():
        if flag not in args:
            args = [*args, flag, value]
    r = CliRunner().invoke(main, ["broker", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_busy_port_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = CliRunner().invoke(main, ["broker", "--id", "1", "--zookeeper", "127.0.0.1:1",
                                      "--listeners", f"PLAINTEXT://127.0.0.1:{port}"])
    assert r.exit_code == 1, r.output
    assert f"cannot bind listener PLAINTEXT 127.0.0.1:{port}" in r.output
    assert "in use" in r.output
