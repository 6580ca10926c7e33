"""The explored state graph (networkx), its GraphML export, and recoverability.

With ``kcontrol check SCENARIO --graph FILE`` the search keeps every state it finds (a node
named by its fingerprint) and every step between two states (an edge labelled with the
action), and afterwards asks the question users ask of Kafka's controller when it is stuck:
*from every reachable state, can the cluster still get back to a quiescent, healthy state?*
(``healthy``: nothing in flight; a controller when some broker is up; a leader for every
partition with a live in-sync replica; no topic deletion pending that nothing waits for.)

A state that cannot -- every path from it stays among explored states that are never
healthy -- is reported like a violation of the pseudo-invariant ``CANNOT_RECOVER``, with the
shortest trace to it. Two kinds of states count as "may recover" without being judged:

* the states at the depth bound, whose successors were not explored (the answer lies
  beyond the bound);
* states after a connection drop lost messages for good: the world does not resend as
  Kafka's RequestSendThread does, so a controller waiting for a lost answer waits forever
  here and would not in Kafka.

The graph lives in memory (a few hundred bytes per state and edge): it is meant for small
scenarios and is bounded by ``limit`` states (``GraphTooLarge`` above it).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from invariants.view import NO_LEADER, GlobalView

CANNOT_RECOVER = "cannot_recover"
"""Pseudo-invariant: no quiescent, healthy state is reachable from a reachable state."""

DEFAULT_LIMIT = 250_000


def _networkx() -> ModuleType:
    """``networkx``, imported when a graph is first made: only ``--graph`` runs need it, and
    every ``kcontrol`` command imports the search."""
    import networkx

    return networkx


class GraphTooLarge(RuntimeError):
    """The explored graph outgrew its bound."""


def unhealthy(view: GlobalView) -> str | None:
    """Why ``view`` is not a quiescent, healthy cluster (None: it is)."""
    if view.pending:
        return "something is in flight"
    zk = view.zk
    if zk is None:
        return None
    up = [b.broker_id for b in view.brokers or () if b.up]
    if up:
        active = {c.broker_id for c in view.controllers or () if c.up and c.active}
        if zk.controller is None or zk.controller not in active:
            return f"brokers {up} are up but no controller is active"
    for tp, st in zk.partitions:
        if tp[0] in zk.deleting:
            continue
        live = [m for m in st.isr if m in zk.registered]
        if live and (st.leader == NO_LEADER or st.leader not in zk.registered):
            return f"{tp[0]}-{tp[1]} has live ISR replicas {live} but no live leader"
    for t in sorted(zk.deleting):
        hosts = {b for (topic, _), replicas in zk.assignments if topic == t for b in replicas}
        if hosts and hosts <= set(zk.registered):
            return f"the deletion of {t} is pending though every replica's broker is live"
    return None


@dataclass
class Unrecoverable:
    fp: int
    reason: str  # why it is not healthy once quiescent (or, if it never is, why not now)
    reachable: int  # states reachable from it (all unhealthy)


class StateGraph:
    """States (by fingerprint) and steps, filled in by the search (``bfs(graph=...)``)."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self.g = _networkx().DiGraph()
        self.order: list[int] = []  # states in discovery (BFS) order
        self._position: dict[int, int] = {}
        self.expanded: set[int] = set()

    def add_state(self, fp: int, depth: int, view: GlobalView) -> None:
        if len(self.order) >= self.limit:
            raise GraphTooLarge(
                f"the explored graph has more than {self.limit} states: --graph is meant for "
                f"small scenarios (lower --depth, or raise --graph-limit)")
        reason = unhealthy(view)
        self.g.add_node(fp, depth=depth, healthy=reason is None, reason=reason or "",
                        quiescent=not view.pending)
        self._position[fp] = len(self.order)
        self.order.append(fp)

    def add_step(self, src: int, dst: int, action: str) -> None:
        if not self.g.has_edge(src, dst):
            self.g.add_edge(src, dst, action=action)

    def mark_expanded(self, fp: int) -> None:
        self.expanded.add(fp)

    # ------------------------------------------------------------ analysis

    def may_recover(self) -> set[int]:
        """States from which a healthy state -- or a state not judged (not expanded) -- is
        reachable."""
        nodes = self.g.nodes
        targets = [fp for fp in self.order
                   if nodes[fp]["healthy"] or fp not in self.expanded]
        seen = set(targets)
        todo = deque(targets)
        pred = self.g.pred
        while todo:
            fp = todo.popleft()
            for p in pred[fp]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return seen

    def first_unrecoverable(self) -> Unrecoverable | None:
        """The first state (in BFS order: at the smallest depth) that cannot recover."""
        ok = self.may_recover()
        nodes = self.g.nodes
        for fp in self.order:
            if fp not in ok:
                reach = _networkx().descendants(self.g, fp)
                reason = nodes[fp]["reason"]
                settled = [x for x in [fp, *sorted(reach, key=self.position)]
                           if nodes[x]["quiescent"]]
                if settled:  # what is wrong once nothing is in flight any more
                    reason = nodes[settled[0]]["reason"]
                return Unrecoverable(fp, reason, len(reach))
        return None

    def position(self, fp: int) -> int:
        """Discovery order (BFS: by depth first)."""
        return self._position[fp]

    def mark_recoverable(self) -> int:
        """Set every node's ``recoverable`` attribute; returns how many cannot recover."""
        ok = self.may_recover()
        bad = 0
        for fp in self.order:
            self.g.nodes[fp]["recoverable"] = fp in ok
            bad += fp not in ok
        return bad

    def write_graphml(self, path: Path) -> None:
        """GraphML with nodes named by their fingerprint in hex and the attributes above
        (``recoverable`` included); edges carry the action."""
        self.mark_recoverable()
        for fp in self.order:
            self.g.nodes[fp]["expanded"] = fp in self.expanded
        nx = _networkx()
        named = nx.relabel_nodes(self.g, {fp: f"{fp:016x}" for fp in self.order}, copy=True)
        nx.write_graphml(named, path)
