"""Fixtures for the broker-process tests: one 3-broker cluster of real ``kcontrol broker``
processes per module, on the session ensemble, in a chroot of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cluster_helpers import SESSION_MS
from kazoo.client import KazooClient

from adapters.cluster import Cluster
from adapters.ensemble import Ensemble
from tests.zk_chroot import new_chroot, rooted_client


@pytest.fixture(scope="module")
def module_chroot(zk_ensemble: Ensemble) -> str:
    """A connect string with a chroot for this module's cluster (created here)."""
    return new_chroot(zk_ensemble, "kcontrol-cluster")


@pytest.fixture(scope="module")
def cluster(module_chroot: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three brokers (control-plane listeners on), stopped after the module -- and killed with
    pytest should it die (die_with_parent)."""
    c = Cluster.create(tmp_path_factory.mktemp("cluster"), 3, zookeeper=module_chroot,
                       session_timeout_ms=SESSION_MS, die_with_parent=True)
    c.up(timeout=90)
    try:
        yield c
    finally:
        c.down()


@pytest.fixture(scope="module")
def observer(module_chroot: str) -> Iterator[KazooClient]:
    with rooted_client(module_chroot) as client:
        yield client


@pytest.fixture
def ready(cluster: Cluster) -> Cluster:
    """The module's cluster, every broker running and agreeing (a test that stops a broker
    starts it again before it ends)."""
    for b in sorted(cluster.brokers):
        if not cluster.running(b):
            cluster.forget(b)
            cluster.start_broker(b)
    cluster.wait_ready(60)
    return cluster
