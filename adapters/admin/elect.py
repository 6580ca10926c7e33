"""``kcontrol elect-preferred``: Kafka's ``kafka-preferred-replica-election`` in ZooKeeper mode.

Creates ``/admin/preferred_replica_election`` with ``{"version":1,"partitions":[...]}``; the
controller moves each listed partition's leadership to its preferred (first) replica and
deletes the znode. Refused while the znode exists (an election is in progress), as in Kafka.
"""

from __future__ import annotations

from collections.abc import Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from adapters.admin.errors import AdminError
from adapters.zookeeper.audit import read_zk_state
from adapters.zookeeper.codec import encode
from fsm import zk_paths
from fsm.values import TopicPartition
from fsm.znodes import PreferredElectionZnode


def select_partitions(
    client: KazooClient,
    topics: Sequence[str],
    partitions: Sequence[int],
    all_partitions: bool,
) -> tuple[TopicPartition, ...]:
    """The partitions named: every partition with ``all_partitions``; else one topic's
    ``partitions`` (all of its partitions when none are given), or several topics paired with
    as many partitions. ``AdminError`` for unknown topics or partitions."""
    state = read_zk_state(client, None if all_partitions else topics, notifications=False)
    if all_partitions:
        wanted_topics = list(state.topic_names)
    else:
        missing = [t for t in topics if t not in state.topic_names]
        if missing:
            raise AdminError(f"Topic '{missing[0]}' does not exist", "UNKNOWN_TOPIC_OR_PARTITION")
        wanted_topics = list(dict.fromkeys(topics))
    for t in wanted_topics:
        if t not in state.topics:
            raise AdminError(f"cannot elect: {state.error_for(zk_paths.topic(t))}")
    if all_partitions or not partitions:
        return tuple(sorted((t, p) for t in wanted_topics for p in state.topics[t].as_dict()))
    if len(topics) > 1 and len(partitions) != len(topics):
        raise AdminError("with several topics, give one partition per topic (or none)")
    pairs = (
        [(topics[0], p) for p in partitions]
        if len(topics) == 1
        else list(zip(topics, partitions, strict=True))
    )
    for t, p in pairs:
        if p not in state.topics[t].as_dict():
            raise AdminError(f"Partition {t}-{p} does not exist", "UNKNOWN_TOPIC_OR_PARTITION")
    return tuple(sorted(set(pairs)))


def start_election(client: KazooClient, partitions: tuple[TopicPartition, ...]) -> bytes:
    """Create ``/admin/preferred_replica_election``; returns the bytes written."""
    if not partitions:
        raise AdminError("No partitions to elect a preferred leader for (no topics?).")
    data = encode(zk_paths.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(partitions))
    try:
        client.create(zk_paths.PREFERRED_REPLICA_ELECTION, data, makepath=True)
    except NodeExistsError:
        raise AdminError(
            "Preferred replica leader election currently in progress "
            f"({zk_paths.PREFERRED_REPLICA_ELECTION} exists). Aborting operation",
            "PREFERRED_LEADER_ELECTION_IN_PROGRESS",
        ) from None
    return data
