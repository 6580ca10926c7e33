"""Election, failover and fencing among ControllerServices on the real 3-server ensemble (the
metrics endpoint: ``test_runtime_metrics``)."""

from __future__ import annotations

import threading

import pytest
from kazoo.client import KazooClient
from runtime_helpers import active, controller_znode, expire_on_server, wait_until

from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.effects import ZkWrite
from fsm.values import LeaderAndIsr, TopicAssignment

pytestmark = pytest.mark.integration


def test_one_controller_then_failover(make_service, zk_client: KazooClient) -> None:
    services = [make_service(i) for i in (1, 2, 3)]
    wait_until(lambda: len(active(services)) == 1, 20, "one active controller")
    first = active(services)[0]
    cid, epoch, version = controller_znode(zk_client)
    assert cid == first.broker_id
    assert epoch == first.epoch == 1
    for s in services:
        assert s.wait_idle(10)
    assert len(active(services)) == 1

    # the active controller's session ends: another candidate wins with epoch + 1
    first.stop()
    rest = [s for s in services if s is not first]
    wait_until(lambda: len(active(rest)) == 1, 20, "a new controller")
    second = active(rest)[0]
    assert second.epoch == 2
    cid, epoch, version2 = controller_znode(zk_client)
    assert (cid, epoch) == (second.broker_id, 2)
    assert version2 == version + 1
    for s in rest:
        assert s.wait_idle(10)
    assert len(active(rest)) == 1


def test_zombie_controller_is_fenced(make_service, zk_client: KazooClient, zk_chroot: str,
                                     make_broker) -> None:
    make_broker(1)
    a = make_service(1)
    wait_until(lambda: a.is_active, 20, "service 1 active")
    b = make_service(2)
    assert a.wait_idle(10) and b.wait_idle(10)
    assert not b.is_active

    # a "GC pause" in the middle of an event: the zombie decided a write and stalls
    stalled, release = threading.Event(), threading.Event()

    def pause(write: ZkWrite) -> None:
        if write.fence_version is not None and not stalled.is_set():
            stalled.set()
            release.wait(60)

    a.before_write = pause
    old_session = a.client.client_id[0]
    path = P.topic("zombie")
    zk_client.create(path, codec.encode(path, TopicAssignment.of({0: [1]})))
    wait_until(stalled.is_set, 20, "the zombie about to write")

    expire_on_server(a.client, zk_chroot)
    wait_until(lambda: b.is_active, 30, "service 2 takes over")
    assert b.epoch == 2
    # the zombie's client opens a new session by itself; let it resume then
    wait_until(lambda: a.client.connected and a.client.client_id
               and a.client.client_id[0] != old_session, 30, "the zombie reconnects")
    release.set()
    wait_until(lambda: any("fenced" in r for r in a.resignations), 20, "the zombie resigns")
    assert not a.is_active
    assert b.wait_idle(20) and a.wait_idle(20)

    # the zombie wrote nothing: the partition was created by the new controller
    state = P.partition_state("zombie", 0)
    wait_until(lambda: zk_client.exists(state), 20, "partition state created by service 2")
    li = codec.decode(state, zk_client.get(state)[0])
    assert isinstance(li, LeaderAndIsr)
    assert li.controller_epoch == 2 and li.leader == 1
    cid, epoch, _ = controller_znode(zk_client)
    assert (cid, epoch) == (2, 2)
    assert [s.broker_id for s in (a, b) if s.is_active] == [2]
