"""What the KRaft campaign sees of the cluster, over the nodes' admin sockets and the brokers'
client listeners -- never asking a paused process (its socket would hold the question until
the timeout).

- ``ClusterView``: one reading: every answering controller's status, the active controller
  (the leader that a majority of the controllers follows in its epoch), its committed topics
  and broker registrations, and every live broker's Metadata (v8) leaders;
- ``leaderless``: the partitions not yet recovered -- with an in-sync replica on a live broker
  (running, not paused, registered and unfenced) but not led by a live broker in the
  committed image, or whose leader a live broker's Metadata does not show yet;
- ``unsettled``: why the cluster is not settled (empty: settled): every node running, one
  active controller every controller follows, every broker registered and unfenced, every
  partition led with its whole replica set in sync, every broker's Metadata equal to the
  committed image's leaders.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from adapters.cluster.kraft_launcher import KRaftCluster
from adapters.cluster.kraft_nodes import HOST, KRaftNode
from adapters.network.client import WireClient
from adapters.network.codec import CodecError
from adapters.raft_node.admin import AdminError

METADATA_TIMEOUT_S = 3.0
Partition = tuple[str, int]


@dataclass
class ClusterView:
    statuses: dict[int, dict[str, Any]] = field(default_factory=dict)
    active: int | None = None
    epoch: int = -1
    topics: dict[str, Any] | None = None
    """The committed image's topics (``image_view.topics_view``), None without an active
    controller that answered."""
    registrations: dict[int, dict[str, Any]] | None = None
    metadata: dict[int, dict[Partition, int] | None] = field(default_factory=dict)
    """Live broker -> partition -> the leader its Metadata names (None: no answer)."""

    def partitions(self) -> dict[Partition, dict[str, Any]]:
        out = {}
        for name, t in (self.topics or {}).items():
            for i, p in t["partitions"].items():
                out[(name, int(i))] = p
        return out

    def unfenced(self) -> set[int]:
        return {b for b, r in (self.registrations or {}).items() if not r.get("fenced")}


def ask(node: KRaftNode, op: str, **args: Any) -> dict[str, Any] | None:
    """The node's answer, None if it does not answer (down, busy, refusing)."""
    if not node.running:
        return None
    try:
        return node.request(op, **args)
    except (OSError, ConnectionError, AdminError, ValueError):
        return None


def active_of(statuses: dict[int, dict[str, Any]], voters: int) -> tuple[int, int] | None:
    """(leader, epoch): the highest-epoch leader that a majority of ``voters`` names (itself
    included) in that epoch; None if there is none."""
    leaders = sorted(((s["epoch"], n) for n, s in statuses.items()
                      if s.get("role") == "leader"), reverse=True)
    for epoch, n in leaders:
        following = sum(1 for s in statuses.values()
                        if s.get("epoch") == epoch and s.get("leader_id") == n)
        if following > voters // 2:
            return n, epoch
    return None


def broker_leaders(port: int, timeout: float = METADATA_TIMEOUT_S
                   ) -> dict[Partition, int] | None:
    """The leaders a broker's Metadata v8 names, or None if it does not answer."""
    try:
        with WireClient(HOST, port, timeout=timeout) as wc:
            md = wc.metadata(None, version=8)
    except (OSError, CodecError, ConnectionError, ValueError, KeyError):
        return None
    out = {}
    for t in md.get("topics", []):
        if t.get("error_code"):
            continue
        for p in t["partitions"]:
            out[(t["name"], p["partition_index"])] = p["leader_id"]
    return out


def read_view(cluster: KRaftCluster, skip: Iterable[int], *, metadata: bool = True
              ) -> ClusterView:
    """One reading of the cluster; nodes in ``skip`` (paused) are not asked."""
    skipped = set(skip)
    view = ClusterView()
    for n, node in cluster.controllers.items():
        if n in skipped:
            continue
        s = ask(node, "status")
        if s is not None:
            view.statuses[n] = s
    found = active_of(view.statuses, len(cluster.controllers))
    if found is not None:
        view.active, view.epoch = found
        node = cluster.controllers[view.active]
        topics = ask(node, "topics")
        brokers = ask(node, "brokers")
        if topics is not None and topics.get("active") and brokers is not None \
                and brokers.get("active"):
            view.topics = topics["topics"]
            view.registrations = {int(b): r for b, r in brokers["brokers"].items()}
    if metadata:
        for b, node in cluster.brokers.items():
            if b not in skipped and node.running:
                view.metadata[b] = broker_leaders(node.port)
    return view


def live_brokers(view: ClusterView, running: set[int]) -> set[int]:
    return running & view.unfenced()


def leaderless(view: ClusterView, live: set[int]) -> list[str]:
    """The partitions not recovered (see the module's documentation); a reason for each,
    or one for the whole view."""
    if view.topics is None or view.registrations is None:
        return ["no active controller answered with its committed image"]
    out = []
    for (t, i), p in sorted(view.partitions().items()):
        if not set(p["isr"]) & live:
            continue
        leader = p["leader"]
        if leader not in live:
            out.append(f"{t}-{i}: leader {leader}, ISR {p['isr']}, live brokers "
                       f"{sorted(live)}")
            continue
        for b in sorted(live):
            seen = view.metadata.get(b)
            if seen is None:
                out.append(f"broker {b}'s Metadata does not answer")
                return out
            if seen.get((t, i)) != leader:
                out.append(f"{t}-{i}: broker {b}'s Metadata names leader "
                           f"{seen.get((t, i))}, the committed image {leader}")
    return out


def unsettled(cluster: KRaftCluster, view: ClusterView, *, full_isr: bool = True
              ) -> list[str]:
    out = [f"{n.name} is not running" for n in cluster.nodes() if not n.running]
    if view.active is None:
        return [*out, "no active controller"]
    for n in cluster.controllers:
        s = view.statuses.get(n)
        if s is None:
            out.append(f"controller {n} does not answer")
        elif (s.get("epoch"), s.get("leader_id")) != (view.epoch, view.active):
            out.append(f"controller {n} is in epoch {s.get('epoch')} following "
                       f"{s.get('leader_id')}, not {view.active} in {view.epoch}")
    if view.registrations is None:
        return [*out, "the active controller's image did not answer"]
    for b in cluster.brokers:
        reg = view.registrations.get(b)
        if reg is None or reg.get("fenced"):
            out.append(f"broker {b} is {'fenced' if reg else 'not registered'}")
    out += leaderless(view, set(cluster.brokers) & view.unfenced())
    for (t, i), p in sorted(view.partitions().items()):
        if p["leader"] < 0:
            out.append(f"{t}-{i} has no leader (replicas {p['replicas']}, ISR {p['isr']})")
        elif full_isr and sorted(p["isr"]) != sorted(p["replicas"]):
            out.append(f"{t}-{i}: ISR {p['isr']} of replicas {p['replicas']}")
    return out


def close_all(cluster: KRaftCluster) -> None:
    for n in cluster.nodes():
        with contextlib.suppress(Exception):
            n.close_client()


__all__ = ["ClusterView", "active_of", "broker_leaders", "leaderless", "live_brokers",
           "read_view", "unsettled"]
