"""Shared by the broker-process benchmarks: a cluster of real ``kcontrol broker`` processes
on its own 3-server ensemble (``adapters.cluster.Cluster``), 10,000 partitions led by one
broker, waits on conditions, a raw-ZooKeeper baseline and the machine line.

Everything started here is stopped by the caller's ``finally: cluster.down()``; the brokers
and the ensemble also die with the benchmark process (``die_with_parent``).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kazoo.client import KazooClient  # noqa: E402

from adapters.admin import elect, topics  # noqa: E402
from adapters.cluster import Cluster  # noqa: E402
from adapters.network import WireClient  # noqa: E402
from adapters.network.codec import CodecError  # noqa: E402
from adapters.zookeeper.audit import ZkState, read_zk_state  # noqa: E402

T = TypeVar("T")
HOST = "127.0.0.1"
SESSION_MS = 4000
TOPICS = 10
PER_TOPIC = 1000  # 10 x 1,000 = 10,000 partitions


def machine() -> str:
    cpus = os.cpu_count()
    return (f"{platform.node()}: {cpus} CPUs, {platform.machine()}, Linux "
            f"{platform.release()}, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}")


def load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def wait_until(cond: Callable[[], T], timeout: float, what: str, pause: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for: {what}")
        time.sleep(pause)


def start_cluster(directory: Path, brokers: int = 3, control_plane: bool = True) -> Cluster:
    cluster = Cluster.create(directory, brokers, session_timeout_ms=SESSION_MS,
                             control_plane=control_plane, die_with_parent=True,
                             log_level="INFO")
    cluster.up(timeout=120)
    return cluster


def observer(cluster: Cluster) -> KazooClient:
    client = KazooClient(hosts=cluster.zookeeper, timeout=10.0)
    client.start(timeout=30)
    return client


def zk(client: KazooClient) -> ZkState:
    client.sync("/")
    return read_zk_state(client, notifications=False)


def topic_names() -> list[str]:
    return [f"bench-{i:02d}" for i in range(TOPICS)]


def populate(client: KazooClient, leader: int, others: list[int]) -> None:
    """10 topics x 1,000 partitions, replication factor 3, every one led (preferred) by
    ``leader``; the two followers alternate their order."""
    a, b = others
    for name in topic_names():
        assignment = {p: (leader, a, b) if p % 2 == 0 else (leader, b, a)
                      for p in range(PER_TOPIC)}
        topics.create_topic(client, name, None, None, assignment)


def metadata(port: int, timeout: float = 30.0) -> dict[str, Any] | None:
    try:
        with WireClient(HOST, port, timeout=timeout) as c:
            return c.metadata(version=8)
    except (OSError, CodecError):
        return None


def cache_matches(md: dict[str, Any] | None, st: ZkState) -> bool:
    """A broker's Metadata answer names every partition with ZooKeeper's leader, leader epoch,
    ISR and replicas."""
    if md is None:
        return False
    got = {(t["name"], p["partition_index"]):
           (p["leader_id"], p["leader_epoch"], tuple(sorted(p["isr_nodes"])),
            tuple(p["replica_nodes"]))
           for t in md["topics"] for p in t["partitions"]}
    want = {}
    for topic, assignment in st.topics.items():
        for p, replicas in assignment.partitions:
            s = st.partition_states.get((topic, p))
            if s is None:
                return False
            li = s.leader_and_isr
            want[(topic, p)] = (li.leader, li.leader_epoch, tuple(sorted(li.isr)),
                                tuple(replicas))
    return got == want


def settled(cluster: Cluster, client: KazooClient, leader: int | None) -> ZkState | None:
    """Every partition has a state with its whole replica set in the ISR (and ``leader``
    leading it, if given), and every running broker's metadata says the same."""
    st = zk(client)
    if len(st.partition_states) < TOPICS * PER_TOPIC:
        return None
    running = sorted(b for b in cluster.brokers if cluster.running(b))
    if sorted(st.broker_ids) != running:
        return None
    assigned = {(t, p): r for t, a in st.topics.items() for p, r in a.partitions}
    for tp, s in st.partition_states.items():
        li = s.leader_and_isr
        replicas = assigned[tp]
        if sorted(li.isr) != sorted(replicas) or (leader is not None and li.leader != leader):
            return None
    for b in running:
        if not cache_matches(metadata(cluster.brokers[b].data_port), st):
            return None
    return st


def restore_leader(cluster: Cluster, client: KazooClient, leader: int,
                   timeout: float = 240.0) -> ZkState:
    """Back to the starting point: every broker runs and has rejoined every ISR (the leaders'
    ISR expansion), then a preferred election moves every partition back to ``leader``."""
    wait_until(lambda: settled(cluster, client, None), timeout,
               "every broker back in every ISR", pause=0.5)
    st = zk(client)
    if any(s.leader_and_isr.leader != leader for s in st.partition_states.values()):
        elect.start_election(client, tuple(sorted(st.partition_states)))
    return wait_until(lambda: settled(cluster, client, leader), timeout,
                      f"broker {leader} leading every partition again", pause=0.5)


def scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def raw_zookeeper_write(client: KazooClient, n: int = TOPICS * PER_TOPIC,
                        batch: int = 1000, runs: int = 3) -> float:
    """The baseline: the ZooKeeper floor of a controller's round -- ``n`` znodes of a scratch
    tree, each set to a partition-state-sized value, with ``transaction()`` batches of
    ``batch`` ops all committed asynchronously then gathered (best of ``runs``)."""
    root = "/bench-scratch"
    client.ensure_path(root)
    existing = set(client.get_children(root))
    value = (b'{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":1,'
             b'"isr":[2,3,1]}')
    pending = []
    for start in range(0, n, batch):
        tx = client.transaction()
        for i in range(start, min(n, start + batch)):
            if f"z{i}" not in existing:
                tx.create(f"{root}/z{i}", value)
        pending.append(tx.commit_async())
    for p in pending:
        p.get(timeout=60)
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        pending = []
        for start in range(0, n, batch):
            tx = client.transaction()
            for i in range(start, min(n, start + batch)):
                tx.set_data(f"{root}/z{i}", value)
            pending.append(tx.commit_async())
        for p in pending:
            p.get(timeout=60)
        best = min(best, time.perf_counter() - t0)
    return best


def parse_args() -> argparse.Namespace:
    """``--runs`` and ``--dir``, the options both victim benchmarks take."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None,
                    help="keep the cluster's directory (logs) here instead of a temporary one")
    return ap.parse_args()


@dataclass
class Bench:
    cluster: Cluster
    client: KazooClient
    controller: int
    victim: int
    others: list[int]


@contextmanager
def victim_cluster(name: str, directory: Path | None) -> Iterator[Bench]:
    """3 brokers with 10,000 partitions all led by one broker that is not the controller
    (the victim), settled in every broker's metadata; stopped at the end (logs kept in
    ``directory`` when given)."""
    print(f"# {name}  {machine()}")
    print(f"# load before: {load()}")
    with tempfile.TemporaryDirectory(prefix=f"kcontrol-{name}-") as tmp:
        cluster = start_cluster(directory or Path(tmp))
        client = None
        try:
            client = observer(cluster)
            st = zk(client)
            assert st.controller is not None
            controller = st.controller.broker_id
            victim = next(b for b in sorted(cluster.brokers) if b != controller)
            others = [b for b in sorted(cluster.brokers) if b != victim]
            t0 = time.perf_counter()
            populate(client, victim, others)
            wait_until(lambda: settled(cluster, client, victim), 300,
                       "10,000 partitions led by the victim, in every broker's metadata",
                       pause=0.5)
            print(f"# setup: 10,000 partitions created and settled in "
                  f"{time.perf_counter() - t0:.1f} s; controller {controller}, "
                  f"victim {victim}")
            yield Bench(cluster, client, controller, victim, others)
        finally:
            if client is not None:
                client.stop()
                client.close()
            for line in cluster.down():
                print(f"# {line}")
