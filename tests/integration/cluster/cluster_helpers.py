"""Helpers for the broker-process and cluster tests (imported as a top-level module: the
test directory is on sys.path)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from kazoo.client import KazooClient

from adapters.broker.metadata_audit import broker_metadata_check
from adapters.cluster import Cluster
from adapters.network import WireClient
from adapters.network.codec import CodecError
from adapters.zookeeper.audit import ZkState, audit, read_zk_state

T = TypeVar("T")
SESSION_MS = 4000


def wait_until(cond: Callable[[], T], timeout: float, what: str) -> T:
    """Poll ``cond`` until truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {what}")
        time.sleep(0.05)


def zk_state(client: KazooClient) -> ZkState:
    """A bulk read after a ``sync`` (the client may sit on another server than the writers)."""
    client.sync("/")
    return read_zk_state(client, notifications=False)


def metadata(port: int, version: int = 8) -> dict[str, Any] | None:
    try:
        with WireClient("127.0.0.1", port, timeout=3.0) as wc:
            return wc.metadata(version=version)
    except (OSError, CodecError):
        return None


def partitions_in_metadata(md: dict[str, Any]) -> dict[tuple[str, int], tuple]:
    return {(t["name"], p["partition_index"]):
            (p["leader_id"], p["leader_epoch"], tuple(sorted(p["isr_nodes"])),
             tuple(p["replica_nodes"]))
            for t in md["topics"] for p in t["partitions"]}


def partitions_in_zk(st: ZkState) -> dict[tuple[str, int], tuple]:
    out = {}
    for topic, assignment in st.topics.items():
        for p, replicas in assignment.partitions:
            s = st.partition_states.get((topic, p))
            if s is not None:
                li = s.leader_and_isr
                out[(topic, p)] = (li.leader, li.leader_epoch, tuple(sorted(li.isr)),
                                   tuple(replicas))
    return out


def brokers_agree_with_zk(cluster: Cluster, client: KazooClient) -> ZkState | None:
    """The ZooKeeper state when every running broker's Metadata (v8) names exactly the
    partitions, leaders, leader epochs, ISRs and replicas ZooKeeper holds, every running
    broker and the controller; else None."""
    st = zk_state(client)
    want = partitions_in_zk(st)
    running = sorted(b for b in cluster.brokers if cluster.running(b))
    controller = st.controller.broker_id if st.controller else None
    if controller is None or sorted(st.broker_ids) != running:
        return None
    for b in running:
        md = metadata(cluster.brokers[b].data_port)
        if md is None or md["controller_id"] != controller:
            return None
        if sorted(x["node_id"] for x in md["brokers"]) != running:
            return None
        if partitions_in_metadata(md) != want:
            return None
    return st


def settled(cluster: Cluster, client: KazooClient) -> ZkState | None:
    """Agreement, and every partition led by a live broker with its full replica set in ISR."""
    st = brokers_agree_with_zk(cluster, client)
    if st is None:
        return None
    live = set(st.broker_ids)
    for leader, _, isr, replicas in partitions_in_zk(st).values():
        if leader not in live or sorted(isr) != sorted(replicas):
            return None
    return st


def audit_rows(client: KazooClient) -> list:
    """The live audit's violations: ZooKeeper's invariants and every registered broker's
    Metadata answer (over the wire) against the same read."""
    client.sync("/")
    _, rows = audit(client, checks=[broker_metadata_check()])
    return rows


def assert_audit_passes(client: KazooClient, timeout: float = 30.0) -> None:
    """Until the audit finds nothing (a broker lags a change by one UpdateMetadata); fails
    naming the violations left at the deadline."""
    last: list = []

    def clean() -> bool:
        nonlocal last
        last = audit_rows(client)
        return not last

    try:
        wait_until(clean, timeout, "the live audit to pass")
    except AssertionError:
        raise AssertionError("audit violations: " + "; ".join(
            f"{r.invariant} {r.entity}: {r.detail}" for r in last)) from None


def scrape(port: int) -> dict[str, float]:
    """A broker's Prometheus metrics: ``name{labels}`` -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def has_topic(st: ZkState, topic: str) -> bool:
    """The topic's znode and a state for every one of its partitions (the controller has
    elected their leaders)."""
    assignment = st.topics.get(topic)
    return assignment is not None and all((topic, p) in st.partition_states
                                          for p, _ in assignment.partitions)
