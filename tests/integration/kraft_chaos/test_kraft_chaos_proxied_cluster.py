"""A ``ProxiedKRaftCluster`` of real processes -- 3 controllers and a broker dialing the
controllers through the proxy mesh, controller 3001's data on a small tmpfs:

- the active controller cut off by the mesh: the other two elect a leader in a higher epoch
  and the broker follows it; healed, one leader again, the old one a follower;
- 3001's disk full, then read-only: 3001 halts (exit status 3, the ERROR line naming its
  metadata directory and the errno) while the quorum keeps committing; the disk restored
  and 3001 restarted, it rejoins and catches up.

One cluster for the module (its start is most of the cost); each test heals the mesh and
waits for an agreed leader first. The disk tests are skipped, with the reason, where this
process cannot mount a tmpfs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from adapters.cluster.kraft_launcher import QuorumView, has_broker_role
from adapters.kraft_chaos.disk import mount_problem
from adapters.kraft_chaos.proxied_cluster import ProxiedKRaftCluster

pytestmark = pytest.mark.integration

PROBLEM = mount_problem()
DISK_NODE = 3001
SNAPSHOT_EVERY = 40  # a read-only disk fails the next snapshot (open files stay writable)
WAIT_S = 60.0  # generous: the machine is shared and loaded
T = TypeVar("T")


def poll_until(what: str, probe: Callable[[], T | None], timeout: float = WAIT_S) -> T:
    """``probe()`` until truthy; AssertionError naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxiedKRaftCluster]:
    if not has_broker_role():
        pytest.skip("this checkout has no broker role")
    c = ProxiedKRaftCluster(tmp_path_factory.mktemp("proxied") / "k", 3, 1,
                            small_disks=[DISK_NODE] if PROBLEM is None else [], disk_mib=16,
                            snapshot_every_records=SNAPSHOT_EVERY)
    try:
        c.up(timeout=WAIT_S)
        yield c
    finally:
        c.stop()


def _settled(c: ProxiedKRaftCluster) -> QuorumView:
    c.mesh.heal()
    return c.wait_leader(WAIT_S)


def test_an_isolated_active_controller_is_replaced_and_rejoins_as_a_follower(
        cluster: ProxiedKRaftCluster) -> None:
    c = cluster
    first = _settled(c)
    old = c.controllers[first.leader]
    others = [i for i in c.controllers if i != first.leader]
    c.mesh.isolate(old.name)
    try:
        def successor() -> tuple[int, int] | None:
            st = c.statuses()
            views = {(st[i]["leader_id"], st[i]["epoch"]) for i in others if i in st}
            if len(views) != 1 or any(i not in st for i in others):
                return None
            ((leader, epoch),) = views
            ok = leader in others and epoch > first.epoch and st[leader]["role"] == "leader"
            return (leader, epoch) if ok else None

        leader, epoch = poll_until("the two others agree on a new leader", successor)

        def broker_follows() -> bool:
            b = c.brokers[1].ask("status") or {}
            image = c.controllers[leader].ask("brokers") or {}
            return (b.get("active_controller") == leader and bool(image.get("active"))
                    and image.get("brokers", {}).get("1", {}).get("fenced") is False)

        poll_until(f"broker 1 follows controller {leader}", broker_follows)
        to_leader = c.mesh.stats()[(c.brokers[1].name, c.controllers[leader].name)]
        assert to_leader["requests_forwarded"] > 0  # the broker reaches it through the mesh
        dropped = sum(s["frames_dropped"] for k, s in c.mesh.stats().items() if old.name in k)
        assert dropped > 0
    finally:
        c.mesh.heal()
    after = c.wait_leader(WAIT_S, min_epoch=epoch)
    st = c.statuses()
    assert [i for i, s in st.items() if s["role"] == "leader"] == [after.leader]
    assert st[old.node_id]["role"] == "follower" and st[old.node_id]["epoch"] == after.epoch


def _commit_one(c: ProxiedKRaftCluster, broker_id: int, among: list[int]) -> bool:
    """Register a made-up broker through whichever of ``among`` leads; whether it committed."""
    for i in among:
        s = c.controllers[i].ask("status")
        if s is not None and s.get("role") == "leader":
            got = c.controllers[i].ask("register_broker", broker_id=broker_id)
            return got is not None and got.get("error") == "NONE"
    return False


def _disk_fault_stops_and_restart_recovers(c: ProxiedKRaftCluster, fault: str,
                                           errno_name: str, first_id: int) -> dict[str, Any]:
    _settled(c)
    x = c.controllers[DISK_NODE]
    disk = c.disks[DISK_NODE]
    others = [i for i in c.controllers if i != DISK_NODE]
    getattr(disk, fault)()
    faulted = time.monotonic()
    ids = iter(range(first_id, first_id + 10_000))

    def x_exited() -> bool:  # keep the quorum writing until x meets its disk
        if x.proc is not None and x.proc.poll() is not None:
            return True
        _commit_one(c, next(ids), list(c.controllers))
        return False

    poll_until(f"controller {DISK_NODE} exits on its {fault} disk", x_exited)
    exited_after = time.monotonic() - faulted
    x.stopped = True  # its exit is the point, not a failure of the cluster
    assert x.proc is not None and x.proc.returncode == 3, x.log_tail()
    line = f"halted: metadata log I/O error in {x.metadata_dir}: errno"
    assert line in x.log_tail(200) and errno_name in x.log_tail(200), x.log_tail()
    poll_until("the other two commit without it",
               lambda: _commit_one(c, next(ids), others))
    disk.restore()
    c.restart(DISK_NODE)
    view = c.wait_leader(WAIT_S)
    poll_until(f"controller {DISK_NODE} catches up", lambda: (
        (c.controllers[DISK_NODE].ask("status") or {}).get("high_watermark", -1)
        >= view.high_watermark))
    c.wait_brokers((1,), timeout=WAIT_S)
    return {"exited_after_s": exited_after}


@pytest.mark.skipif(PROBLEM is not None, reason=f"no small disk here: {PROBLEM}")
def test_a_full_disk_halts_its_controller_and_a_restart_recovers(
        cluster: ProxiedKRaftCluster) -> None:
    got = _disk_fault_stops_and_restart_recovers(cluster, "fill", "ENOSPC", 1000)
    assert got["exited_after_s"] < WAIT_S


@pytest.mark.skipif(PROBLEM is not None, reason=f"no small disk here: {PROBLEM}")
def test_a_read_only_disk_halts_its_controller_and_a_restart_recovers(
        cluster: ProxiedKRaftCluster) -> None:
    got = _disk_fault_stops_and_restart_recovers(cluster, "read_only", "EROFS", 20_000)
    assert got["exited_after_s"] < WAIT_S


def test_the_tmpfs_is_gone_after_stop(tmp_path: Path) -> None:
    if PROBLEM is not None:
        pytest.skip(f"no small disk here: {PROBLEM}")
    c = ProxiedKRaftCluster(tmp_path / "k", 3, 0, small_disks=[3000], disk_mib=4)
    c.prepare()
    assert Path(c.controllers[3000].data_dir).is_mount()
    c.stop()
    assert not Path(c.controllers[3000].data_dir).is_mount()
    assert c.disks[3000].state == "unmounted"
