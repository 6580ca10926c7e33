"""The KRaft tools through a broker (``--bootstrap-server``), on a cluster of ``kcontrol
node`` processes (one controller, one broker): ``cluster-id`` is answered by the broker
itself; ``unregister`` is forwarded by the broker to the active controller and the broker it
names disappears from the controller's image; unregistering an id nobody registered is not
an error (Kafka's controller answers it NONE too)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.cluster.kraft_launcher import KRaftCluster, has_broker_role
from adapters.kraft_node.wire_client import WireClient
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not has_broker_role(), reason="the broker role is not built")]

WAIT_S = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    c = KRaftCluster(Path(tmp_path_factory.mktemp("kraft")), controllers=1, brokers=1)
    c.up(WAIT_S)
    try:
        yield c
    finally:
        c.stop()


def test_cluster_id_through_a_broker(cluster: KRaftCluster) -> None:
    r = CliRunner().invoke(main, ["cluster-id", "--bootstrap-server", cluster.bootstrap_servers])
    assert r.exit_code == 0, r.output
    assert r.output == f"Cluster ID: {cluster.cluster_id}\n"


def test_unregister_is_forwarded_to_the_active_controller(cluster: KRaftCluster) -> None:
    host, port = cluster.bootstrap_controllers.split(",")[0].rsplit(":", 1)
    with WireClient(host, int(port)) as c:
        reg = c.call_value(rq.BrokerRegistrationRequest(42, cluster.cluster_id, b"4" * 16))
    assert reg.error is ErrorCode.NONE, reg
    assert 42 in (cluster.registered_brokers() or {})  # committed before the answer
    r = CliRunner().invoke(main, ["unregister", "--id", "42", "--bootstrap-server",
                                  cluster.bootstrap_servers])
    assert r.exit_code == 0, r.output
    assert r.output == "Broker 42 is no longer registered.\n"
    deadline = time.monotonic() + WAIT_S
    while 42 in (cluster.registered_brokers() or {}):
        assert time.monotonic() < deadline, cluster.registered_brokers()
        time.sleep(0.05)


def test_unregistering_an_unknown_id_is_not_an_error(cluster: KRaftCluster) -> None:
    r = CliRunner().invoke(main, ["unregister", "--id", "4242", "--bootstrap-server",
                                  cluster.bootstrap_servers])
    assert r.exit_code == 0 and r.output == "Broker 4242 is no longer registered.\n", r.output
