"""``setWatches`` data watches on the real 3-server ensemble: they fire for every change after
the relative zxid -- at once for a change made before the request arrived, later for the
others -- and a topic changed while the failover's bulk read sets its watches is seen."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import EventType

from adapters.zookeeper import reads as zk_reads
from adapters.zookeeper.reads import KazooReadPort
from adapters.zookeeper.set_watches import set_data_watches
from fsm import zk_paths as P
from fsm.reads import markers as M

pytestmark = pytest.mark.integration


class Events:
    """Notifications received, by (path, type); ``wait`` for one."""

    def __init__(self) -> None:
        self.got: list[tuple[str, str]] = []
        self.cond = threading.Condition()

    def watcher(self, event: Any) -> None:
        with self.cond:
            self.got.append((event.path, event.type))
            self.cond.notify_all()

    def wait(self, item: tuple[str, str], timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: item in self.got, timeout)


@pytest.fixture
def other(zk_chroot: str) -> Iterator[KazooClient]:
    """A second session: another writer of the cluster's znodes."""
    c = KazooClient(hosts=zk_chroot, timeout=10.0)
    c.start(timeout=15)
    yield c
    c.stop()
    c.close()


def test_watches_fire_on_later_changes_and_at_once_on_earlier_ones(
        zk_client: KazooClient, other: KazooClient) -> None:
    for name in ("a", "b", "c", "gone"):
        zk_client.create(f"/w/{name}", b"0", makepath=True)
    zk_client.get("/w/a")  # a reply: last_zxid is now at least the creations
    relative = zk_client.last_zxid
    other.set("/w/b", b"1")  # after the relative zxid, before the watches arrive
    other.delete("/w/gone")
    zk_client.sync("/w")  # this session's server has applied both before the watches arrive
    ev = Events()
    paths = ["/w/a", "/w/b", "/w/c", "/w/gone"]
    results = set_data_watches(zk_client, relative, [zk_client.chroot + p for p in paths],
                               [ev.watcher] * len(paths))
    assert [r.get(timeout=10) for r in results] == [True]
    assert ev.wait(("/w/b", EventType.CHANGED)), ev.got
    assert ev.wait(("/w/gone", EventType.DELETED)), ev.got
    other.set("/w/c", b"1")  # after: the watch is set
    assert ev.wait(("/w/c", EventType.CHANGED)), ev.got
    other.set("/w/a", b"1")
    assert ev.wait(("/w/a", EventType.CHANGED)), ev.got
    other.set("/w/b", b"2")  # b's watch fired at once and is gone: nothing more
    other.set("/w/a", b"2")  # a's too
    other.create("/w/gone", b"")
    other.set("/w/c", b"2")
    zk_client.sync("/w")
    zk_client.get("/w/c")  # notifications come before the replies that follow them
    assert sorted(ev.got) == sorted([("/w/b", EventType.CHANGED), ("/w/gone", EventType.DELETED),
                                     ("/w/c", EventType.CHANGED), ("/w/a", EventType.CHANGED)])


def test_requests_cut_under_the_bound_set_every_watch(zk_client: KazooClient) -> None:
    paths = [f"/many/node-{i:04d}" for i in range(600)]
    for p in paths:
        zk_client.create(p, b"", makepath=True)
    zk_client.get(paths[-1])
    ev = Events()
    results = set_data_watches(zk_client, zk_client.last_zxid,
                               [zk_client.chroot + p for p in paths], [ev.watcher] * len(paths),
                               max_request_bytes=4096)
    assert len(results) > 5 and all(r.get(timeout=10) is True for r in results)
    for p in paths[::50]:
        zk_client.set(p, b"x")
        assert ev.wait((p, EventType.CHANGED)), p
    assert len(ev.got) == len(paths[::50])


@pytest.mark.parametrize("set_watches", [True, False], ids=["setWatches", "exists"])
def test_a_topic_changed_while_the_bulk_read_sets_its_watches_is_seen(
        zk_client: KazooClient, other: KazooClient, monkeypatch: pytest.MonkeyPatch,
        set_watches: bool) -> None:
    """The failover's topic read (``get_many`` with watches): a topic changed by another
    session between the last reply before the read and the watch request, one changed after
    the read, and one untouched: the first two fire (``topic`` markers), the third does not."""
    names = ["t0", "t1", "t2"]
    for t in names:
        zk_client.create(P.topic(t), b'{"version":1,"partitions":{"0":[1]}}', makepath=True)
    markers: list[tuple[str, str]] = []
    fired = threading.Condition()

    def watch(kind: str, arg: str = "") -> Any:
        def w(event: Any) -> None:
            if event.type == EventType.CHANGED:
                with fired:
                    markers.append((kind, arg))
                    fired.notify_all()
        return w

    original = zk_reads.set_data_watches

    def changed_first(client: KazooClient, *args: Any, **kw: Any) -> Any:
        other.set(P.topic("t0"), b'{"version":1,"partitions":{"0":[1],"1":[1]}}')
        client.sync("/")  # applied by the reading session's server before the watches arrive
        return original(client, *args, **kw)

    monkeypatch.setattr(zk_reads, "set_data_watches", changed_first)
    port = KazooReadPort(zk_client, 10.0, watch)
    port.set_watches = set_watches
    if not set_watches:  # the exists path: the change right before the reads
        other.set(P.topic("t0"), b'{"version":1,"partitions":{"0":[1],"1":[1]}}')
    zk_client.sync("/")
    nodes = port.get_many([P.topic(t) for t in names], watch=True)
    assert all(n is not None for n in nodes)
    other.set(P.topic("t1"), b'{"version":1,"partitions":{"0":[1],"1":[1]}}')
    with fired:
        assert fired.wait_for(lambda: (M.TOPIC, "t1") in markers, 10), markers
    if set_watches or nodes[0].version == 0:  # type: ignore[union-attr]
        # setWatches: t0 changed after the relative zxid fires at once; exists: only if the
        # read did not see the change (the watch was set after it)
        with fired:
            assert fired.wait_for(lambda: (M.TOPIC, "t0") in markers, 10), markers
    zk_client.get(P.topic("t2"))
    assert (M.TOPIC, "t2") not in markers
