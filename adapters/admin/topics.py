"""``kcontrol topics``: create, delete, describe, add partitions, list -- Kafka's ``kafka-topics``
in ZooKeeper mode (``AdminZkClient``), writing the same znodes.

- create writes ``/brokers/topics/<t>`` only (the controller creates the partition states, as in
  Kafka); Kafka's ``/config/topics/<t>`` is not part of kcontrol's layout and is not written.
- delete creates ``/admin/delete_topics/<t>`` (no data).
- add-partitions rewrites ``/brokers/topics/<t>`` conditionally on its znode version, keeping
  the existing partitions (and any replicas being added or removed) as they are.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from adapters.admin.assignment import (
    Assignment,
    assign_replicas,
    number_partitions,
    validate_assignment,
)
from adapters.admin.describe import Filters, PartitionView, TopicView, describe_lines
from adapters.admin.errors import AdminError
from adapters.zookeeper.audit import ZkState, read_zk_state
from adapters.zookeeper.codec import decode, encode
from adapters.zookeeper.codec.errors import ZnodeDecodeError
from adapters.zookeeper.codec.fields import legal_topic
from fsm import zk_paths
from fsm.values import NO_LEADER, TopicAssignment
from fsm.znodes import EmptyZnode

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
MAX_TOPIC_LENGTH = 249


def registered_brokers(client: KazooClient) -> list[int]:
    """Broker ids registered under ``/brokers/ids``, sorted."""
    try:
        children = client.get_children(zk_paths.BROKER_IDS)
    except NoNodeError:
        return []
    return sorted(int(c) for c in children if c.isascii() and c.isdigit())


def list_topics(client: KazooClient) -> list[str]:
    try:
        return sorted(client.get_children(zk_paths.TOPICS))
    except NoNodeError:
        return []


def topics_pending_deletion(client: KazooClient) -> set[str]:
    try:
        return set(client.get_children(zk_paths.DELETE_TOPICS))
    except NoNodeError:
        return set()


def check_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate``: 1..249 characters of ``[a-zA-Z0-9._-]``, not ``.``/``..``."""
    if not name:
        raise AdminError("Topic name is illegal, it can't be empty", "INVALID_TOPIC_EXCEPTION")
    if len(name) > MAX_TOPIC_LENGTH:
        raise AdminError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_LENGTH} characters, "
            f"topic name: {name}",
            "INVALID_TOPIC_EXCEPTION",
        )
    if not legal_topic(name):
        raise AdminError(
            f"Topic name {name!r} is illegal, it contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-' (or is '.' or '..')",
            "INVALID_TOPIC_EXCEPTION",
        )


def _collision_key(name: str) -> str:
    return name.replace(".", "_")


# ---------------------------------------------------------------- create


def create_topic(
    client: KazooClient,
    topic: str,
    partitions: int | None,
    replication_factor: int | None,
    replica_assignment: Assignment | None = None,
    *,
    start_index: int | None = None,
    rng: random.Random | None = None,
) -> Assignment:
    """Create ``topic``: Kafka's assignment over the registered brokers, or the explicit one.
    Returns the assignment written."""
    check_topic_name(topic)
    existing = list_topics(client)
    if topic in existing:
        raise AdminError(f"Topic '{topic}' already exists.", "TOPIC_ALREADY_EXISTS")
    colliding = [t for t in existing if _collision_key(t) == _collision_key(topic)]
    if colliding:
        raise AdminError(
            f"Topic '{topic}' collides with existing topics: {', '.join(colliding)} "
            "('.' and '_' may collide in metric names)",
            "INVALID_TOPIC_EXCEPTION",
        )
    brokers = registered_brokers(client)
    if replica_assignment is not None:
        validate_assignment(replica_assignment, brokers, replication_factor=replication_factor)
        if partitions is not None and partitions != len(replica_assignment):
            raise AdminError(
                f"--partitions {partitions} does not match the replica assignment, which has "
                f"{len(replica_assignment)} partitions.",
                "INVALID_REPLICA_ASSIGNMENT",
            )
        assignment = dict(sorted(replica_assignment.items()))
    else:
        if partitions is None or replication_factor is None:
            raise AdminError(
                "--partitions and --replication-factor are required without --replica-assignment."
            )
        assignment = assign_replicas(
            brokers, partitions, replication_factor, start_index=start_index, rng=rng
        )
    data = encode(zk_paths.topic(topic), TopicAssignment.of(assignment))
    try:
        client.create(zk_paths.topic(topic), data, makepath=True)
    except NodeExistsError:
        raise AdminError(f"Topic '{topic}' already exists.", "TOPIC_ALREADY_EXISTS") from None
    return assignment


# ---------------------------------------------------------------- delete


def delete_topic(client: KazooClient, topic: str) -> bool:
    """Mark ``topic`` for deletion. False if it was marked already (not an error, as in Kafka)."""
    if topic in INTERNAL_TOPICS:
        raise AdminError(
            f"Topic {topic} is a kafka internal topic and is not allowed to be marked for "
            "deletion.",
            "INVALID_TOPIC_EXCEPTION",
        )
    if not client.exists(zk_paths.topic(topic)):
        raise AdminError(
            f"Topic '{topic}' does not exist as expected", "UNKNOWN_TOPIC_OR_PARTITION"
        )
    try:
        client.create(
            zk_paths.delete_topic(topic),
            encode(zk_paths.delete_topic(topic), EmptyZnode()),
            makepath=True,
        )
    except NodeExistsError:
        return False
    return True


# ---------------------------------------------------------------- add partitions


def add_partitions(
    client: KazooClient,
    topic: str,
    partitions: int,
    replica_assignment: Assignment | None = None,
    *,
    replica_lists: Sequence[tuple[int, ...]] | None = None,
) -> Assignment:
    """Grow ``topic`` to ``partitions`` partitions (Kafka's ``AdminZkClient.addPartitions``).
    The new partitions' replicas: ``replica_assignment`` (``{partition id: replicas}``), or
    ``replica_lists`` as ``--replica-assignment`` gives them (``number_partitions``: the new
    partitions' lists, or every partition's), else Kafka's rule. Returns the new partitions'
    assignment."""
    path = zk_paths.topic(topic)
    try:
        data, stat = client.get(path)
    except NoNodeError:
        raise AdminError(
            f"Topic '{topic}' does not exist as expected", "UNKNOWN_TOPIC_OR_PARTITION"
        ) from None
    try:
        current = decode(path, data)
    except ZnodeDecodeError as exc:
        raise AdminError(f"cannot add partitions: {exc}", "INVALID_TOPIC_ZNODE") from None
    if client.exists(zk_paths.delete_topic(topic)):
        raise AdminError(f"Topic '{topic}' is marked for deletion.", "INVALID_TOPIC_EXCEPTION")
    existing = current.as_dict()
    if partitions <= len(existing):
        raise AdminError(
            f"Topic currently has {len(existing)} partitions, {partitions} would not be an "
            "increase. The number of partitions for a topic can only be increased.",
            "INVALID_PARTITIONS",
        )
    if client.exists(zk_paths.REASSIGN_PARTITIONS):
        raise AdminError("A partition reassignment is in progress.", "REASSIGNMENT_IN_PROGRESS")
    if 0 not in existing:
        raise AdminError(
            f"the replica assignment of topic '{topic}' has no partition 0", "INVALID_TOPIC_ZNODE"
        )
    if replica_lists is not None:
        replica_assignment = number_partitions(replica_lists, len(existing), partitions)
    brokers = registered_brokers(client)
    first = existing[0]
    rf = len([b for b in first if b not in dict(current.adding).get(0, ())])
    if replica_assignment is not None:
        validate_assignment(
            replica_assignment, brokers, first_partition=len(existing), replication_factor=None
        )
        if len(replica_assignment) != partitions - len(existing):
            raise AdminError(
                f"The replica assignment names {len(replica_assignment)} new partitions, but "
                f"growing from {len(existing)} to {partitions} adds "
                f"{partitions - len(existing)}.",
                "INVALID_REPLICA_ASSIGNMENT",
            )
        new = dict(sorted(replica_assignment.items()))
    else:
        start = next((i for i, b in enumerate(brokers) if b >= first[0]), 0)
        new = assign_replicas(
            brokers,
            partitions - len(existing),
            rf,
            start_index=start,
            start_partition=len(existing),
        )
    updated = TopicAssignment(
        tuple(sorted({**existing, **new}.items())), current.adding, current.removing
    )
    try:
        client.set(path, encode(path, updated), version=stat.version)
    except BadVersionError:
        raise AdminError(
            f"{path} changed while partitions were being added; nothing was written, try again"
        ) from None
    return new


# ---------------------------------------------------------------- describe


@dataclass(frozen=True)
class Description:
    lines: list[str]
    errors: int
    """How many znodes shown could not be decoded (their lines say why)."""


def describe_topics(
    client: KazooClient,
    topics: list[str] | None = None,
    *,
    under_replicated: bool = False,
    unavailable: bool = False,
    verbose: bool = False,
) -> Description:
    """``kafka-topics --describe`` lines for ``topics`` (all when None), formatted by
    ``adapters.admin.describe``. A znode that does not decode puts its error on that line; the
    rest still prints. ``AdminError`` for an unknown topic."""
    state = read_zk_state(client, topics, notifications=False)
    if topics is not None:
        missing = [t for t in topics if t not in state.topic_names]
        if missing:
            raise AdminError(
                f"Topic '{missing[0]}' does not exist as expected", "UNKNOWN_TOPIC_OR_PARTITION"
            )
    lines: list[str] = []
    for path in (zk_paths.REASSIGN_PARTITIONS, zk_paths.PREFERRED_REPLICA_ELECTION):
        if (error := state.error_for(path)) is not None:
            lines.append(f"Error: {error}")
    views = [_topic_view(client, state, t) for t in state.topic_names]
    errors = len(lines) + sum(
        (v.error is not None) + sum(p.error is not None for p in v.partitions) for v in views
    )
    filters = Filters(under_replicated=under_replicated, unavailable=unavailable)
    lines += describe_lines(views, state.broker_ids, filters, verbose=verbose)
    return Description(lines, errors)


def _topic_view(client: KazooClient, state: ZkState, topic: str) -> TopicView:
    deleting = topic in state.topics_to_delete
    assignment = state.topics.get(topic)
    if assignment is None:
        error = str(state.error_for(zk_paths.topic(topic)))
        return TopicView(topic, marked_for_deletion=deleting, error=error)
    reassigning = dict(state.reassignment.partitions) if state.reassignment else {}
    electing = set(state.preferred_election.partitions if state.preferred_election else ())
    adding, removing = dict(assignment.adding), dict(assignment.removing)
    partitions = []
    for p, replicas in sorted(assignment.as_dict().items()):
        zk_state = state.partition_states.get((topic, p))
        li = zk_state.leader_and_isr if zk_state is not None else None
        error = state.error_for(zk_paths.partition_state(topic, p))
        partitions.append(PartitionView(
            p,
            replicas,
            leader=None if li is None or li.leader == NO_LEADER else li.leader,
            isr=li.isr if li is not None else (),
            leader_epoch=li.leader_epoch if li is not None else None,
            adding=adding.get(p, ()),
            removing=removing.get(p, ()),
            reassigning=p in adding or p in removing,
            reassigning_to=reassigning.get((topic, p)),
            election_pending=(topic, p) in electing,
            error=None if error is None else str(error),
        ))
    return TopicView(topic, tuple(partitions), _configs(client, topic), deleting)


def _configs(client: KazooClient, topic: str) -> tuple[tuple[str, str], ...]:
    """The overrides in Kafka's ``/config/topics/<t>`` (kcontrol does not write it; a Kafka
    cluster's tools do), sorted by name; none when it is missing or not Kafka's JSON."""
    try:
        data, _ = client.get(f"/config/topics/{topic}")
        config = json.loads(data.decode("utf-8")).get("config", {})
    except (NoNodeError, ValueError, AttributeError):
        return ()
    if not isinstance(config, dict):
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in config.items()))
