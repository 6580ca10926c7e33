"""``kcontrol reassign --generate``: Kafka's ``--topics-to-move-json-file`` and ``--broker-list``,
and a proposed plan that moves every partition of those topics onto those brokers.

The topics file is Kafka's ``{"version":1,"topics":[{"topic":"t"},...]}``. The proposal keeps each
topic's partition count and replication factor and places replicas with Kafka's rule
(``adapters.admin.assignment``) with the start index and replica shift fixed at 0: it is
deterministic, where Kafka draws both at random, so the broker lists are not Kafka's exact ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from kazoo.client import KazooClient

from adapters.admin.assignment import Assignment, assign_replicas
from adapters.admin.errors import AdminError
from adapters.admin.reassign import Plan, PlanError
from adapters.admin.topics import registered_brokers
from adapters.zookeeper.audit import read_zk_state
from fsm import zk_paths


def parse_topics_to_move(text: str, source: str = "topics file") -> list[str]:
    """Kafka's topics-to-move JSON -> the topic names in file order. ``PlanError`` for anything
    else: not JSON, no ``topics`` list, an entry without a topic name, a topic listed twice."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{source} is not valid JSON: {exc}") from None
    entries = obj.get("topics") if isinstance(obj, dict) else None
    if not isinstance(entries, list):
        raise PlanError(f'{source} must be a JSON object with a "topics" list')
    if obj.get("version", 1) != 1:
        raise PlanError(f"{source}: unknown version {obj.get('version')!r} (known: 1)")
    names: list[str] = []
    for i, entry in enumerate(entries):
        name = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise PlanError(f'{source}: topics[{i}] must be an object with a "topic" name')
        names.append(name)
    if not names:
        raise PlanError(f"{source} lists no topic")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PlanError(
            f"List of topics to reassign contains duplicate entries: {','.join(twice)}"
        )
    return names


def parse_broker_list(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``. ``ValueError`` for an id that is not a non-negative integer
    or a broker listed twice (Kafka's message)."""
    tokens = [t.strip() for t in text.split(",")]
    bad = next((t for t in tokens if not (t.isascii() and t.isdigit())), None)
    if bad is not None:
        shown = "an empty entry" if bad == "" else f"{bad!r}, which is not a broker id"
        raise ValueError(f"{text!r} has {shown}; give broker ids separated by commas (1,2,3)")
    ids = [int(t) for t in tokens]
    twice = sorted({b for b in ids if ids.count(b) > 1})
    if twice:
        raise ValueError(f"Broker list contains duplicate entries: {','.join(map(str, twice))}")
    return ids


def propose(current: Mapping[str, Assignment], brokers: Sequence[int]) -> Plan:
    """The proposed plan: every partition of every topic of ``current`` (topics by name,
    partitions by id) on ``brokers``, with the topic's partition count and replication factor
    (that of its lowest partition). ``AdminError`` when a replication factor exceeds the number
    of brokers."""
    plan = []
    for topic in sorted(current):
        partitions = current[topic]
        if not partitions:
            continue
        rf = len(partitions[min(partitions)])
        placed = assign_replicas(brokers, len(partitions), rf, start_index=0, replica_shift=0)
        for p, partition in enumerate(sorted(partitions)):
            plan.append(((topic, partition), placed[p]))
    return tuple(plan)


def current_assignments(client: KazooClient, topics: Sequence[str]) -> dict[str, Assignment]:
    """Each topic's replicas now (without replicas being added by a reassignment in flight).
    ``AdminError`` for a topic that does not exist or whose znode does not decode."""
    state = read_zk_state(client, topics, notifications=False)
    out: dict[str, Assignment] = {}
    for topic in topics:
        if topic not in state.topic_names:
            raise AdminError(
                f"Topic '{topic}' does not exist (named in the topics file)",
                "UNKNOWN_TOPIC_OR_PARTITION",
            )
        assignment = state.topics.get(topic)
        if assignment is None:
            raise AdminError(f"cannot generate: {state.error_for(zk_paths.topic(topic))}")
        adding = dict(assignment.adding)
        out[topic] = {
            p: tuple(b for b in replicas if b not in adding.get(p, ()))
            for p, replicas in sorted(assignment.as_dict().items())
        }
    return out


def generate(client: KazooClient, topics: Sequence[str], brokers: Sequence[int]
             ) -> tuple[Plan, Plan]:
    """``(current, proposed)`` plans for ``topics`` moved onto ``brokers``. ``AdminError`` for
    unknown topics, or brokers of the list that are not registered (Kafka silently leaves
    those out, which can propose fewer brokers than asked for)."""
    unknown = sorted(set(brokers) - set(registered_brokers(client)))
    if unknown:
        raise AdminError(
            f"The broker list names broker(s) that are not registered: "
            f"{','.join(map(str, unknown))}",
            "BROKER_NOT_AVAILABLE",
        )
    current = current_assignments(client, topics)
    now = tuple(
        ((t, p), replicas) for t in sorted(current) for p, replicas in current[t].items()
    )
    return now, propose(current, brokers)
