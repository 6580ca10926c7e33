"""``kcontrol reassign``: Kafka's ``kafka-reassign-partitions`` in ZooKeeper mode.

A plan is Kafka's reassignment JSON::

    {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}

(``log_dirs`` entries are accepted when every one is ``"any"``, as Kafka writes them by default).
Executing a plan creates ``/admin/reassign_partitions`` with the same entries; the controller
removes the znode (or the finished entries) as reassignments complete. ``status`` compares, like
Kafka's ``--verify``, each plan entry with the znode and the topic znodes: still listed in the
znode -> in progress; current replicas equal the target -> completed; otherwise failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from adapters.admin.errors import AdminError
from adapters.admin.topics import registered_brokers, topics_pending_deletion
from adapters.zookeeper.audit import read_zk_state
from adapters.zookeeper.codec import decode, encode
from fsm import zk_paths
from fsm.values import TopicPartition
from fsm.znodes import ReassignmentZnode

Plan = tuple[tuple[TopicPartition, tuple[int, ...]], ...]

IN_PROGRESS = "in progress"
COMPLETED = "completed"
FAILED = "failed"


class PlanError(ValueError):
    """The plan file itself is malformed (independent of the cluster): a usage error."""


def parse_plan(text: str, source: str = "plan") -> Plan:
    """Kafka's reassignment JSON -> ``((topic, partition), replicas)`` in file order. Refuses
    anything Kafka's tool refuses before looking at the cluster: not JSON, no partitions, a
    partition listed twice, an empty or duplicated replica list."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise PlanError(f"{source} must be a JSON object with a 'partitions' list")
    if obj.get("version", 1) != 1:
        raise PlanError(f"{source}: unknown version {obj.get('version')!r} (known: 1)")
    entries = obj.get("partitions")
    if not isinstance(entries, list):
        raise PlanError(f"{source} must have a 'partitions' list")
    if not entries:
        raise PlanError("Partition reassignment list cannot be empty")
    plan: list[tuple[TopicPartition, tuple[int, ...]]] = []
    seen: set[TopicPartition] = set()
    for i, entry in enumerate(entries):
        where = f"{source}: partitions[{i}]"
        if not isinstance(entry, dict):
            raise PlanError(f"{where} must be an object")
        topic, partition, replicas = (entry.get(k) for k in ("topic", "partition", "replicas"))
        if not isinstance(topic, str) or not topic:
            raise PlanError(f"{where}: 'topic' must be a non-empty string")
        if not _int(partition) or partition < 0:
            raise PlanError(f"{where}: 'partition' must be a non-negative integer")
        if not isinstance(replicas, list) or not all(_int(b) and b >= 0 for b in replicas):
            raise PlanError(f"{where}: 'replicas' must be a list of broker ids")
        tp = (topic, partition)
        if not replicas:
            raise PlanError(f"{where}: partition {topic}-{partition} has an empty replica list")
        if len(set(replicas)) != len(replicas):
            raise PlanError(
                f"Partition replica lists may not contain duplicate entries: {topic}-{partition} "
                f"contains {','.join(map(str, replicas))}"
            )
        dirs = entry.get("log_dirs")
        if dirs is not None and (
            not isinstance(dirs, list) or len(dirs) != len(replicas) or set(dirs) != {"any"}
        ):
            raise PlanError(f"{where}: 'log_dirs' other than \"any\" are not supported by kcontrol")
        if tp in seen:
            raise PlanError(
                f"Partition reassignment contains duplicate topic partitions: {topic}-{partition}"
            )
        seen.add(tp)
        plan.append((tp, tuple(replicas)))
    return tuple(plan)


def _int(value: Any) -> bool:
    return type(value) is int


@dataclass(frozen=True)
class Started:
    current: Plan
    """The replicas before the reassignment, as a plan (Kafka prints it for rollback)."""
    written: bytes


def execute(client: KazooClient, plan: Plan) -> Started:
    """Validate ``plan`` against the cluster and create ``/admin/reassign_partitions``.
    ``AdminError`` (nothing written) for unknown topics, partitions or brokers, a topic being
    deleted, or a reassignment already in progress."""
    if client.exists(zk_paths.REASSIGN_PARTITIONS):
        raise AdminError(
            "There is an existing assignment running (/admin/reassign_partitions exists); "
            "wait for it to finish (kcontrol reassign --verify).",
            "REASSIGNMENT_IN_PROGRESS",
        )
    brokers = set(registered_brokers(client))
    unknown = sorted({b for _, replicas in plan for b in replicas} - brokers)
    if unknown:
        raise AdminError(
            "The proposed assignment contains non-existent brokerIDs: "
            f"{','.join(map(str, unknown))} (registered: "
            f"{','.join(map(str, sorted(brokers))) or 'none'})",
            "BROKER_NOT_AVAILABLE",
        )
    topics = list(dict.fromkeys(t for (t, _), _ in plan))
    state = read_zk_state(client, topics, notifications=False)
    missing_topics = [t for t in topics if t not in state.topic_names]
    if missing_topics:
        raise AdminError(
            f"Topic '{missing_topics[0]}' does not exist (named in the plan)",
            "UNKNOWN_TOPIC_OR_PARTITION",
        )
    for t in topics:
        if t not in state.topics:
            raise AdminError(f"cannot reassign: {state.error_for(zk_paths.topic(t))}")
    deleting = sorted(set(topics) & topics_pending_deletion(client))
    if deleting:
        raise AdminError(f"Topic '{deleting[0]}' is marked for deletion", "INVALID_TOPIC_EXCEPTION")
    current: list[tuple[TopicPartition, tuple[int, ...]]] = []
    for tp, _ in plan:
        replicas = state.topics[tp[0]].as_dict().get(tp[1])
        if replicas is None:
            raise AdminError(
                f"The proposed assignment contains non-existent partitions: {tp[0]}-{tp[1]}",
                "UNKNOWN_TOPIC_OR_PARTITION",
            )
        current.append((tp, replicas))
    data = encode(zk_paths.REASSIGN_PARTITIONS, ReassignmentZnode(plan))
    try:
        client.create(zk_paths.REASSIGN_PARTITIONS, data, makepath=True)
    except NodeExistsError:
        raise AdminError(
            "There is an existing assignment running.", "REASSIGNMENT_IN_PROGRESS"
        ) from None
    return Started(tuple(current), data)


def plan_json(plan: Plan, *, log_dirs: bool = False) -> str:
    """A plan as Kafka's reassignment JSON, compact, in plan order; with ``log_dirs``, each entry
    also has ``"log_dirs"`` of ``"any"`` per replica, as Kafka 2.x's tool prints them."""
    entries: list[dict[str, Any]] = []
    for (t, p), r in plan:
        entry: dict[str, Any] = {"topic": t, "partition": p, "replicas": list(r)}
        if log_dirs:
            entry["log_dirs"] = ["any"] * len(r)
        entries.append(entry)
    return json.dumps({"version": 1, "partitions": entries}, separators=(",", ":"))


@dataclass(frozen=True)
class PartitionStatus:
    tp: TopicPartition
    status: str
    target: tuple[int, ...]
    current: tuple[int, ...] | None
    """The topic znode's replicas now (None: topic or partition gone)."""


def in_progress(client: KazooClient) -> ReassignmentZnode | None:
    """What ``/admin/reassign_partitions`` holds (None: no reassignment in progress);
    ``ZnodeDecodeError`` if it holds something Kafka would not write."""
    try:
        data, _ = client.get(zk_paths.REASSIGN_PARTITIONS)
    except NoNodeError:
        return None
    return decode(zk_paths.REASSIGN_PARTITIONS, data)


def status(client: KazooClient, plan: Plan | None = None) -> list[PartitionStatus]:
    """Per partition: in progress / completed / failed. Without ``plan``, the entries of
    ``/admin/reassign_partitions`` (all in progress, with their current replicas)."""
    pending = in_progress(client)
    pending_map = dict(pending.partitions) if pending else {}
    entries = plan if plan is not None else tuple(pending_map.items())
    state = read_zk_state(
        client, list(dict.fromkeys(t for (t, _), _ in entries)), notifications=False
    )
    out = []
    for tp, target in entries:
        assignment = state.topics.get(tp[0])
        current = assignment.as_dict().get(tp[1]) if assignment else None
        if tp in pending_map:
            verdict = IN_PROGRESS
        elif current == target:
            verdict = COMPLETED
        else:
            verdict = FAILED
        out.append(PartitionStatus(tp, verdict, target, current))
    return out
