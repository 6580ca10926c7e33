"""The live audit's broker part: every registered broker's metadata, read over the wire.

``broker_metadata_check(listener)`` is an audit check (``adapters.zookeeper.audit.Source``:
``ZkState -> [Violation]``). For every broker registered in ``/brokers/ids`` it sends a
Metadata request (v8, all topics) to the endpoint the broker registered for ``listener`` --
what a client bootstrapping from that broker would see -- and compares the answer with the
same ZooKeeper read:

- the controller id is ``/controller``'s;
- the brokers named are exactly the registered brokers that have a ``listener`` endpoint,
  at the host and port they registered;
- every partition with a state znode (topics pending deletion aside) is answered with that
  state's leader (-1 when ZooKeeper has none), leader epoch, ISR and the topic znode's
  replicas (in order); no other partition is answered.

A broker that does not answer is a violation too. The comparison is of one snapshot: right
after a change a broker may lag by the time an UpdateMetadata takes, so a caller that wants
the converged state retries for a bounded time (``kcontrol audit --brokers --settle``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapters.network.client import WireClient
from adapters.network.codec import CodecError
from adapters.zookeeper.audit import ZkState
from invariants import Violation

NAME = "broker_metadata_matches_zookeeper"
_SHOWN = 3  # differing partitions named per broker


def broker_metadata_check(listener: str = "PLAINTEXT", timeout: float = 3.0,
                          version: int = 8) -> Callable[[ZkState], list[Violation]]:
    def check(state: ZkState) -> list[Violation]:
        return list(_violations(state, listener, timeout, version))

    check.__name__ = NAME
    return check


def expected_partitions(state: ZkState) -> dict[tuple[str, int], tuple[Any, ...]]:
    """(topic, partition) -> (leader, leader epoch, ISR as a set, replicas) per ZooKeeper."""
    out: dict[tuple[str, int], tuple[Any, ...]] = {}
    for topic, assignment in state.topics.items():
        if topic in state.topics_to_delete:
            continue
        for p, replicas in assignment.partitions:
            s = state.partition_states.get((topic, p))
            if s is not None:
                li = s.leader_and_isr
                out[(topic, p)] = (li.leader, li.leader_epoch, frozenset(li.isr), tuple(replicas))
    return out


def answered_partitions(answer: dict[str, Any]) -> dict[tuple[str, int], tuple[Any, ...]]:
    """The same shape, from a Metadata answer (v7+: with leader epochs)."""
    return {(t["name"], p["partition_index"]):
            (p["leader_id"], p.get("leader_epoch", -1), frozenset(p["isr_nodes"]),
             tuple(p["replica_nodes"]))
            for t in answer["topics"] for p in t["partitions"]}


def _violations(state: ZkState, listener: str, timeout: float, version: int):  # noqa: ANN202
    controller = state.controller.broker_id if state.controller else -1
    reachable = {}
    for b, info in state.brokers.items():
        ep = next((e for e in info.endpoints if e.listener == listener), None)
        if ep is not None:
            reachable[b] = (ep.host, ep.port)
    want = expected_partitions(state)
    deleting = set(state.topics_to_delete)
    for b in sorted(state.brokers):
        if b not in reachable:
            yield Violation(NAME, f"broker {b}: registers no {listener} endpoint")
            continue
        host, port = reachable[b]
        try:
            with WireClient(host, port, client_id="kcontrol-audit", timeout=timeout) as c:
                answer = c.metadata(version=version)
        except (OSError, CodecError) as exc:
            yield Violation(NAME, f"broker {b}: no Metadata answer from {listener} "
                                  f"{host}:{port} ({type(exc).__name__}: {exc})")
            continue
        if answer["controller_id"] != controller:
            yield Violation(NAME, f"broker {b}: metadata names controller "
                                  f"{answer['controller_id']}, /controller names {controller}")
        named = {x["node_id"]: (x["host"], x["port"]) for x in answer["brokers"]}
        if named != reachable:
            yield Violation(NAME, f"broker {b}: metadata names brokers {_brokers(named)}, "
                                  f"registered: {_brokers(reachable)}")
        got = {tp: v for tp, v in answered_partitions(answer).items() if tp[0] not in deleting}
        bad = sorted(tp for tp in set(want) | set(got) if want.get(tp) != got.get(tp))
        if bad:
            shown = "; ".join(f"{t}-{p}: has {_show(got.get((t, p)))} want "
                              f"{_show(want.get((t, p)))}" for t, p in bad[:_SHOWN])
            more = f" (+{len(bad) - _SHOWN} more)" if len(bad) > _SHOWN else ""
            yield Violation(NAME, f"broker {b}: {len(bad)} partition(s) differ from "
                                  f"ZooKeeper: {shown}{more}")


def _brokers(named: dict[int, tuple[str, int]]) -> str:
    return ", ".join(f"{b}@{h}:{p}" for b, (h, p) in sorted(named.items())) or "none"


def _show(v: tuple[Any, ...] | None) -> str:
    if v is None:
        return "nothing"
    leader, epoch, isr, replicas = v
    return f"leader {leader} epoch {epoch} isr {sorted(isr)} replicas {list(replicas)}"
