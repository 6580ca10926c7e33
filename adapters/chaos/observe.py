"""What the campaign sees of the cluster, and the audit it runs after every fault.

- ``Observer.state()``: one bulk read of ZooKeeper (``read_zk_state``) after a ``sync``, or
  None while the ensemble does not answer (a server killed, a quorum re-forming);
- ``Observer.metadata(ports)``: every given broker's Metadata v8 answer over the wire
  (``WireClient``), None for a broker that does not answer;
- ``leaders_recovered``: every partition with an in-sync replica on a live broker is led by a
  live broker (the recovery clock stops when it holds);
- ``convergence_problems``: why the cluster is not settled yet (empty: settled);
- ``audit``: the ZooKeeper audit (``adapters.zookeeper.audit.audit_state``: decodable znodes,
  the catalogue's state invariants, leader registered, controller and epoch agree), the
  quiescent ``no_offline_partition_with_live_isr_replica``, the catalogue's transitive
  transition invariants between this audit's ZooKeeper view and the previous one (epochs and
  versions never go back; ``INTERVAL_INVARIANTS``) with ``decided_within_interval`` (no
  decision by a controller deposed before the interval), and every live broker's metadata
  compared with ZooKeeper (``metadata_violations``).

The wire comparison is kept here rather than in ``adapters.zookeeper.audit``: it needs only
the Metadata answers, and the wire adapters are being reworked by another change (issue 5).
The Metadata API carries no broker epochs, so the catalogue's ``metadata_matches_zookeeper``
(which compares them) is not fed from the wire; ``metadata_violations`` checks what the wire
does carry: the controller id, the live broker ids, and for every partition of every topic
not pending deletion the leader, leader epoch, ISR and replicas -- in both directions, so a
topic ZooKeeper no longer has but a broker still lists is caught too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from adapters.network.client import WireClient
from adapters.network.codec import CodecError
from adapters.zookeeper.audit import (
    AuditViolation,
    ZkState,
    audit_state,
    read_zk_state,
    view_from_state,
)
from invariants import by_name
from invariants.view import GlobalView

HOST = "127.0.0.1"
METADATA_VERSION = 8
WIRE_METADATA = "broker_metadata_matches_zookeeper"
"""The campaign's wire check (see the module's documentation)."""

PartitionKey = tuple[str, int]
PartitionRow = tuple[int, int, tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Metadata:
    """What one broker's Metadata v8 answer says."""

    controller: int | None
    brokers: tuple[int, ...]
    partitions: Mapping[PartitionKey, PartitionRow]
    topic_errors: Mapping[str, int]

    @classmethod
    def from_response(cls, md: dict[str, Any]) -> Metadata:
        parts: dict[PartitionKey, PartitionRow] = {}
        errors: dict[str, int] = {}
        for t in md["topics"]:
            if t.get("error_code"):
                errors[t["name"]] = t["error_code"]
            for p in t["partitions"]:
                parts[(t["name"], p["partition_index"])] = (
                    p["leader_id"], p["leader_epoch"], tuple(sorted(p["isr_nodes"])),
                    tuple(p["replica_nodes"]))
        cid = md["controller_id"]
        return cls(None if cid < 0 else cid, tuple(sorted(b["node_id"] for b in md["brokers"])),
                   parts, errors)


def zk_partitions(state: ZkState) -> dict[PartitionKey, PartitionRow]:
    """ZooKeeper's leader, leader epoch, ISR and replicas of every partition with a state,
    topics pending deletion aside."""
    out: dict[PartitionKey, PartitionRow] = {}
    for topic, assignment in state.topics.items():
        if topic in state.topics_to_delete:
            continue
        for p, replicas in assignment.partitions:
            s = state.partition_states.get((topic, p))
            if s is not None:
                li = s.leader_and_isr
                out[(topic, p)] = (li.leader, li.leader_epoch, tuple(sorted(li.isr)),
                                   tuple(replicas))
    return out


def metadata_violations(state: ZkState, answers: Mapping[int, Metadata | None],
                        limit: int = 4) -> list[AuditViolation]:
    """Every live broker's metadata against ZooKeeper (``answers``: broker id -> its answer,
    None for a broker that should answer and did not)."""
    want = zk_partitions(state)
    deleting = set(state.topics_to_delete)
    controller = state.controller.broker_id if state.controller else None
    registered = tuple(sorted(state.broker_ids))
    out = []
    for b, md in sorted(answers.items()):
        who = f"broker {b}"
        if md is None:
            out.append(AuditViolation(WIRE_METADATA, who, "does not answer Metadata"))
            continue
        if md.controller != controller:
            out.append(AuditViolation(WIRE_METADATA, who,
                                      f"names controller {md.controller}, /controller names "
                                      f"{controller}"))
        if md.brokers != registered:
            out.append(AuditViolation(WIRE_METADATA, who,
                                      f"lists brokers {list(md.brokers)}, /brokers/ids has "
                                      f"{list(registered)}"))
        got = {k: v for k, v in md.partitions.items() if k[0] not in deleting}
        bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        for k in bad[:limit]:
            out.append(AuditViolation(
                WIRE_METADATA, f"{k[0]}-{k[1]}",
                f"{who} has {_row(got.get(k))}, ZooKeeper {_row(want.get(k))}"))
        if len(bad) > limit:
            out.append(AuditViolation(WIRE_METADATA, who,
                                      f"and {len(bad) - limit} more partitions differ"))
    return out


INTERVAL_INVARIANTS = tuple(by_name(n) for n in (
    "controller_epoch_never_decreases",
    "leader_epoch_never_decreases",
    "leader_change_bumps_leader_epoch",
    "partition_state_version_never_decreases",
))
"""The catalogue's transition invariants that still hold between two snapshots many steps
apart (they are transitive: "never decreases", "a change bumps"). The others judge one step:
``partition_state_decided_by_current_controller`` compares a decision with the epoch *right
after it*, and a later failover legitimately moves ``/controller_epoch`` past decisions that
stay in place; ``decided_within_interval`` is its form for an interval."""

DECIDED_WITHIN_INTERVAL = "partition_state_decided_within_interval"


def decided_within_interval(before: GlobalView, after: GlobalView) -> list[AuditViolation]:
    """A partition state created, or whose leader epoch went up, between two audits carries a
    controller epoch that was current at some point in between: at least ``/controller_epoch``
    of the first audit (a controller deposed before the interval began must not decide
    anything in it: the zombie of KAFKA-6082 and of seed 001 §3) and at most that of the
    second."""
    zb, za = before.zk, after.zk
    if zb is None or za is None or zb.controller_epoch is None or za.controller_epoch is None:
        return []
    low, high = zb.controller_epoch, za.controller_epoch
    out = []
    for tp, st in za.partitions:
        old = zb.states.get(tp)
        decided = old is None or old.czxid != st.czxid or st.leader_epoch > old.leader_epoch
        if decided and not low <= st.controller_epoch <= high:
            out.append(AuditViolation(
                DECIDED_WITHIN_INTERVAL, f"{tp[0]}-{tp[1]}",
                f"leader {st.leader} epoch {st.leader_epoch} written with controller epoch "
                f"{st.controller_epoch}; /controller_epoch was {low} before and {high} after"))
    return out


def _row(row: PartitionRow | None) -> str:
    if row is None:
        return "nothing"
    leader, epoch, isr, replicas = row
    return (f"leader {leader} epoch {epoch} isr {list(isr)} replicas {list(replicas)}")


def live_set(state: ZkState, running: Iterable[int]) -> set[int]:
    """Brokers that are both running (per the campaign) and registered in ZooKeeper."""
    return set(running) & set(state.broker_ids)


def leaderless(state: ZkState, live: set[int]) -> list[str]:
    """Partitions (topics pending deletion aside) with an in-sync replica on a live broker but
    no live leader."""
    out = []
    for (topic, p), s in state.partition_states.items():
        if topic in state.topics_to_delete:
            continue
        li = s.leader_and_isr
        if set(li.isr) & live and li.leader not in live:
            out.append(f"{topic}-{p}")
    return out


def leaders_recovered(state: ZkState, running: Iterable[int]) -> bool:
    return not leaderless(state, live_set(state, running))


def convergence_problems(state: ZkState, expected: Iterable[int],
                         answers: Mapping[int, Metadata | None], limit: int = 3) -> list[str]:
    """Why the cluster has not settled (empty: settled): every expected broker registered; a
    controller among them; every partition led by a live broker with its whole replica set in
    sync; every broker's metadata equal to ZooKeeper's."""
    want = sorted(expected)
    out = []
    missing = [b for b in want if b not in state.broker_ids]
    if missing:
        out.append(f"brokers {missing} not registered")
    if state.controller is None:
        out.append("no controller")
    elif state.controller.broker_id not in want:
        out.append(f"controller {state.controller.broker_id} should not run")
    live = set(want) & set(state.broker_ids)
    under = []
    for (topic, p), s in state.partition_states.items():
        if topic in state.topics_to_delete:
            continue
        replicas = dict(state.topics[topic].partitions).get(p) if topic in state.topics else None
        li = s.leader_and_isr
        if li.leader not in live or replicas is None or sorted(li.isr) != sorted(replicas):
            under.append(f"{topic}-{p}")
    if under:
        out.append(f"{len(under)} partition(s) without a live leader or a full ISR "
                   f"({', '.join(under[:limit])})")
    wire = metadata_violations(state, answers, limit=1)
    if wire:
        out.append(f"{len(wire)} metadata difference(s) ({wire[0].entity}: {wire[0].detail})")
    return out


class Observer:
    """Reads through one kazoo client (the campaign's own)."""

    def __init__(self, client: KazooClient, timeout: float = 5.0) -> None:
        self.client = client
        self.timeout = timeout
        self.previous: GlobalView | None = None

    def state(self) -> ZkState | None:
        try:
            self.client.sync("/")
            return read_zk_state(self.client, notifications=False, timeout=self.timeout)
        except (KazooException, KazooTimeoutError):
            return None

    def metadata(self, ports: Mapping[int, int]) -> dict[int, Metadata | None]:
        out: dict[int, Metadata | None] = {}
        for b, port in sorted(ports.items()):
            try:
                with WireClient(HOST, port, timeout=2.0) as wc:
                    out[b] = Metadata.from_response(wc.metadata(version=METADATA_VERSION))
            except (OSError, CodecError, KeyError, TypeError):
                out[b] = None
        return out

    def audit(self, state: ZkState, answers: Mapping[int, Metadata | None]
              ) -> list[AuditViolation]:
        """The audit of a settled cluster (see the module's documentation)."""
        rows = audit_state(state)
        view = view_from_state(state, pending=False)
        for v in by_name("no_offline_partition_with_live_isr_replica").check(view):
            rows.append(AuditViolation(v.invariant, "-", v.detail))
        if self.previous is not None:
            for inv in INTERVAL_INVARIANTS:
                for v in inv.check(self.previous, view):
                    rows.append(AuditViolation(v.invariant, "-", v.detail))
            rows += decided_within_interval(self.previous, view)
        self.previous = view
        rows += metadata_violations(state, answers)
        return rows


__all__ = ["Metadata", "Observer", "WIRE_METADATA", "convergence_problems", "leaderless",
           "leaders_recovered", "live_set", "metadata_violations", "zk_partitions"]
