"""Fixtures for the stock-client tests: one 3-broker cluster of real ``kcontrol broker``
processes for the module (on the session ensemble, in a chroot of its own) with two topics
whose leaders and ISRs every broker agrees on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from adapters.admin import topics
from adapters.cluster import Cluster
from adapters.ensemble import Ensemble
from tests.integration.cluster.cluster_helpers import (
    SESSION_MS,
    has_topic,
    settled,
    wait_until,
)
from tests.zk_chroot import new_chroot, rooted_client

TOPICS = {"orders": (6, 3), "events": (3, 2)}  # name -> (partitions, replication factor)


@pytest.fixture(scope="module")
def client_topics() -> dict[str, tuple[int, int]]:
    return dict(TOPICS)


@pytest.fixture(scope="module")
def cluster_chroot(zk_ensemble: Ensemble) -> str:
    return new_chroot(zk_ensemble, "kcontrol-clients")


@pytest.fixture(scope="module")
def observer(cluster_chroot: str) -> Iterator[KazooClient]:
    with rooted_client(cluster_chroot) as client:
        yield client


@pytest.fixture(scope="module")
def cluster(cluster_chroot: str, observer: KazooClient,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three brokers with the topics of ``TOPICS`` settled; stopped after the module (and
    killed with pytest should it die)."""
    c = Cluster.create(tmp_path_factory.mktemp("clients"), 3, zookeeper=cluster_chroot,
                       session_timeout_ms=SESSION_MS, die_with_parent=True)
    c.up(timeout=90)
    try:
        for name, (partitions, rf) in TOPICS.items():
            topics.create_topic(observer, name, partitions, rf)
        wait_until(lambda: (st := settled(c, observer)) and all(has_topic(st, t) for t in TOPICS),
                   60,
                   "the topics' leaders and ISRs in every broker's metadata")
        yield c
    finally:
        c.down()
