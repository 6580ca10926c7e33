"""Shared fixtures. ZooKeeper: one real 3-server ensemble for the whole session, a fresh chroot and
a kazoo client per test.

Tests that stop a server must start it again and wait for the quorum before they end (in a
``finally``), so the session ensemble stays whole for the tests after them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from adapters.ensemble import Ensemble
from adapters.host import thread_priority
from tests.zk_chroot import new_chroot

# Short session timeouts let tests expire sessions quickly; clients ask for theirs in this range.
ZK_MIN_SESSION_TIMEOUT_MS = 1000
ZK_MAX_SESSION_TIMEOUT_MS = 10000
ZK_START_TIMEOUT_S = 60.0


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) a test file is one
    group, run whole by one worker, so a module's fixtures (a cluster of broker processes, a
    quorum) start once, as without xdist; the files whose tests use the session's Spark
    context (``sc``) form one group, so one worker starts Spark. Each worker has its own
    session fixtures (its own ensemble on free ports, its own temporary directories)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    spark_files = {item.path for item in items if "sc" in getattr(item, "fixturenames", ())}
    for item in items:
        group = "spark" if item.path in spark_files else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _normal_thread_priority() -> Iterator[None]:
    """A command run in-process (``CliRunner``) sets the process-wide control-plane priority;
    the next test starts from the library default again."""
    yield
    thread_priority.configure(thread_priority.NORMAL)


class ObserverClient(KazooClient):
    """The tests' observer: every read is preceded by a ``sync`` on the same session, so it sees
    every write another client had acknowledged, whichever server each is connected to
    (ZooKeeper only promises that reads on one server are not older than what that server
    has applied; a session's requests are served in order, so the read waits for the sync)."""

    def get_async(self, path, watch=None):  # type: ignore[no-untyped-def]
        self.sync_async(path)
        return super().get_async(path, watch)

    def exists_async(self, path, watch=None):  # type: ignore[no-untyped-def]
        self.sync_async(path)
        return super().exists_async(path, watch)

    def get_children_async(self, path, watch=None, include_data=False):  # type: ignore[no-untyped-def]
        self.sync_async(path)
        return super().get_children_async(path, watch, include_data)


@pytest.fixture(scope="session")
def zk_ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ensemble]:
    """A fresh 3-server ensemble on free loopback ports, stopped when the session ends. Its
    servers also get SIGTERM should pytest itself die (die_with_parent)."""
    ensemble = Ensemble.create(
        tmp_path_factory.mktemp("zookeeper"),
        servers=3,
        min_session_timeout_ms=ZK_MIN_SESSION_TIMEOUT_MS,
        max_session_timeout_ms=ZK_MAX_SESSION_TIMEOUT_MS,
        die_with_parent=True,
    )
    ensemble.up(timeout=ZK_START_TIMEOUT_S)
    try:
        yield ensemble
    finally:
        ensemble.stop()


@pytest.fixture
def zk_chroot(zk_ensemble: Ensemble) -> str:
    """A connect string with a chroot of its own: ``host:port,.../kcontrol-test-<uuid>``."""
    return new_chroot(zk_ensemble, "kcontrol-test")


@pytest.fixture
def zk_client(zk_chroot: str) -> Iterator[KazooClient]:
    """A started kazoo client on this test's chroot, reading only after a ``sync``
    (``ObserverClient``); stopped after the test."""
    client = ObserverClient(hosts=zk_chroot, timeout=10.0)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()
