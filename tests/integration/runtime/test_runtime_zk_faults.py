"""A ZooKeeper server (the leader, then a follower) stopped and restarted while topics are
being created: the controller keeps working, never two controllers in one epoch, and the end
state is consistent."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NodeExistsError
from runtime_helpers import active, controller_znode, wait_until

from adapters.ensemble import Ensemble
from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.values import LeaderAndIsr, TopicAssignment

pytestmark = pytest.mark.integration


def server_with_mode(ensemble: Ensemble, mode: str) -> int:
    for row in ensemble.status().servers:
        if row.mode == mode:
            return row.id
    raise AssertionError(f"no {mode} in {ensemble.status()}")


def grows(items: list[str], by: int = 5) -> Callable[[], bool]:
    n = len(items)
    return lambda: len(items) >= n + by


def test_server_restarts_under_load(zk_ensemble: Ensemble, make_service, make_broker,
                                    zk_client: KazooClient) -> None:
    for b in (1, 2, 3):
        make_broker(b)
    services = [make_service(i) for i in (1, 2, 3)]
    wait_until(lambda: len(active(services)) == 1, 20, "one active controller")

    created: list[str] = []
    stop = threading.Event()
    violations: list[str] = []

    def load() -> None:
        i = 0
        while not stop.is_set():
            name = f"load-{i:04d}"
            path = P.topic(name)
            data = codec.encode(path, TopicAssignment.of({p: [1 + (p + k) % 3 for k in range(3)]
                                                           for p in range(3)}))
            try:
                zk_client.create(path, data)
            except NodeExistsError:
                pass
            except KazooException:
                time.sleep(0.1)
                continue  # the ensemble is electing: try the same topic again
            created.append(name)
            i += 1
            time.sleep(0.02)

    def watch_epochs() -> None:
        while not stop.is_set():
            by_epoch: dict[int, list[int]] = {}
            for s in services:
                if s.is_active:
                    by_epoch.setdefault(s.epoch, []).append(s.broker_id)
            for e, ids in by_epoch.items():
                if len(ids) > 1:
                    violations.append(f"epoch {e}: {ids} all active")
            time.sleep(0.01)

    threads = [threading.Thread(target=load, daemon=True),
               threading.Thread(target=watch_epochs, daemon=True)]
    for t in threads:
        t.start()
    try:
        for mode in ("leader", "follower"):
            wait_until(grows(created), 30, "topics being created")
            victim = server_with_mode(zk_ensemble, mode)
            zk_ensemble.stop_server(victim)
            wait_until(grows(created), 60,
                       f"topics created with server {victim} ({mode}) down")
            zk_ensemble.start_server(victim)
            zk_ensemble.wait_for_quorum(timeout=60)
        wait_until(grows(created), 30, "topics after restarts")
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        if any(not zk_ensemble.is_running(i) for i in (1, 2, 3)):
            for i in (1, 2, 3):
                if not zk_ensemble.is_running(i):
                    zk_ensemble.start_server(i)
            zk_ensemble.wait_for_quorum(timeout=60)

    assert not violations, violations[:5]
    wait_until(lambda: len(active(services)) == 1, 30, "one active controller at the end")
    ctl = active(services)[0]
    cid, epoch, _ = controller_znode(zk_client)
    assert (cid, epoch) == (ctl.broker_id, ctl.epoch)

    def all_created() -> bool:
        return all(zk_client.exists(P.partition_state(t, p)) for t in created for p in range(3))

    wait_until(all_created, 60, f"partition states of all {len(created)} topics")
    for s in services:
        assert s.wait_idle(30)
    for t in created:
        for p in range(3):
            path = P.partition_state(t, p)
            li = codec.decode(path, zk_client.get(path)[0])
            assert isinstance(li, LeaderAndIsr)
            assert li.leader in li.isr and set(li.isr) <= {1, 2, 3}, (t, p, li)
            assert li.controller_epoch <= epoch
    assert len(created) >= 20
