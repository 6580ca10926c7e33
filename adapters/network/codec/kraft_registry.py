"""The KRaft APIs a controller or a broker serves besides the quorum's: their own table, apart
from ``registry.APIS`` (the ZooKeeper-mode broker's) and ``raft_registry`` (Vote, Fetch...).

A controller's listener serves what brokers and tools send the active controller
(:data:`CONTROLLER_SERVED`): BrokerRegistration, BrokerHeartbeat, UnregisterBroker,
AlterPartition, and the admin APIs a broker forwards. A KRaft broker's client listener serves
(:data:`BROKER_SERVED`) the admin APIs, which it forwards, and DescribeCluster, which it answers
itself -- besides ApiVersions 18 and Metadata 3 from ``registry.SUPPORTED``. The ranges include
what stock clients send: kafka-python 3 (CreateTopics v2-v7, DeleteTopics v1-v6,
CreatePartitions v0-v3, ElectLeaders v0-v2, DescribeCluster v0-v2,
AlterPartitionReassignments v0-v1, ListPartitionReassignments v0) and librdkafka 2's request
builders (CreateTopics v0-v4, DeleteTopics v0-v4, CreatePartitions v0-v2); a client uses the
lower of the two maxima. :data:`SEND_VERSIONS` is the
version our own brokers and tools write of each request.
"""

from __future__ import annotations

import enum

from adapters.network.codec.apis import (
    alter_partition,
    alter_partition_reassignments,
    broker_heartbeat,
    broker_registration,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    elect_leaders,
    list_partition_reassignments,
    unregister_broker,
)
from adapters.network.codec.schema import Message, versions


class KRaftApiKey(enum.IntEnum):
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    CREATE_PARTITIONS = 37
    ELECT_LEADERS = 43
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    ALTER_PARTITION = 56
    DESCRIBE_CLUSTER = 60
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64


KRAFT_MESSAGES: dict[int, tuple[Message, Message]] = {
    int(m.API_KEY): (m.REQUEST, m.RESPONSE)
    for m in (
        create_topics,
        delete_topics,
        create_partitions,
        elect_leaders,
        alter_partition_reassignments,
        list_partition_reassignments,
        alter_partition,
        describe_cluster,
        broker_registration,
        broker_heartbeat,
        unregister_broker,
    )
}
"""api key -> (request, response) declarations."""


def _range(message: Message) -> tuple[int, int]:
    declared = versions(message.valid)
    assert declared.high is not None
    return declared.low, declared.high


KRAFT_SUPPORTED: dict[int, tuple[int, int]] = {
    key: _range(request) for key, (request, _) in sorted(KRAFT_MESSAGES.items())
}
"""api key -> (min, max) version this codec reads and writes."""

_ADMIN = (
    KRaftApiKey.CREATE_TOPICS,
    KRaftApiKey.DELETE_TOPICS,
    KRaftApiKey.CREATE_PARTITIONS,
    KRaftApiKey.ELECT_LEADERS,
    KRaftApiKey.ALTER_PARTITION_REASSIGNMENTS,
    KRaftApiKey.LIST_PARTITION_REASSIGNMENTS,
)

CONTROLLER_SERVED: dict[int, tuple[int, int]] = {
    int(k): KRAFT_SUPPORTED[k]
    for k in sorted((
        *_ADMIN,
        KRaftApiKey.ALTER_PARTITION,
        KRaftApiKey.DESCRIBE_CLUSTER,
        KRaftApiKey.BROKER_REGISTRATION,
        KRaftApiKey.BROKER_HEARTBEAT,
        KRaftApiKey.UNREGISTER_BROKER,
    ))
}
"""api key -> (min, max): what a controller's listener serves besides the quorum APIs.
AlterPartition from v2 only: v0-v1 name topics, and the controller knows partitions by topic id
(the codec declares v0-v2 all the same, for the cross-checks)."""

CONTROLLER_SERVED[KRaftApiKey.ALTER_PARTITION] = (2, 2)

BROKER_SERVED: dict[int, tuple[int, int]] = {
    int(k): KRAFT_SUPPORTED[k]
    for k in sorted((*_ADMIN, KRaftApiKey.DESCRIBE_CLUSTER, KRaftApiKey.UNREGISTER_BROKER))
}
"""api key -> (min, max): what a KRaft broker's client listener serves besides ApiVersions
and Metadata (``registry.SUPPORTED``); all but DescribeCluster are forwarded."""

SEND_VERSIONS: dict[int, int] = {key: hi for key, (_, hi) in KRAFT_SUPPORTED.items()}
"""api key -> the version our brokers and tools send (the highest this codec declares)."""


def api_name(api_key: int) -> str:
    try:
        return KRaftApiKey(api_key).name
    except ValueError:
        return f"api key {api_key}"
