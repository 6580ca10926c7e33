"""Metadata (key 3), v0-v8 (v8 is the highest classic version; flexible from v9).

Reference section 6; upstream MetadataRequest.json @a465cf4c, MetadataResponse.json
@f4bcfd8a (v0-7) and m1a2st/kafka @1f5e76b7 (v8).

Request topics: at v0 an empty array means all topics (null is illegal); from v1 the
array is nullable, null means all topics and an empty array means none (brokers only).
"""

from __future__ import annotations

from typing import Any

from adapters.network.codec.schema import (
    BOOL,
    INT16,
    INT32,
    STRING,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 3
AUTHORIZED_OPERATIONS_UNKNOWN = -(2**31)  # INT32_MIN: "not provided"

REQUEST = Message(
    "MetadataRequest",
    API_KEY,
    valid="0-8",
    flexible="9+",
    fields=(
        Field("topics", array(struct(Field("name", STRING))), nullable="1+"),
        Field("allow_auto_topic_creation", BOOL, versions="4+", default=True),
        Field("include_cluster_authorized_operations", BOOL, versions="8+", default=False),
        Field("include_topic_authorized_operations", BOOL, versions="8+", default=False),
    ),
)

PARTITION = struct(
    Field("error_code", INT16),
    Field("partition_index", INT32),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32, versions="7+", default=-1),
    Field("replica_nodes", array(INT32)),
    Field("isr_nodes", array(INT32)),
    Field("offline_replicas", array(INT32), versions="5+", default=()),
)

TOPIC = struct(
    Field("error_code", INT16),
    Field("name", STRING),
    Field("is_internal", BOOL, versions="1+", default=False),
    Field("partitions", array(PARTITION)),
    Field(
        "topic_authorized_operations",
        INT32,
        versions="8+",
        default=AUTHORIZED_OPERATIONS_UNKNOWN,
    ),
)

BROKER = struct(
    Field("node_id", INT32),
    Field("host", STRING),
    Field("port", INT32),
    Field("rack", STRING, versions="1+", nullable="1+", default=None),
)

RESPONSE = Message(
    "MetadataResponse",
    API_KEY,
    valid="0-8",
    flexible="9+",
    fields=(
        Field("throttle_time_ms", INT32, versions="3+", default=0),
        Field("brokers", array(BROKER)),
        Field("cluster_id", STRING, versions="2+", nullable="2+", default=None),
        Field("controller_id", INT32, versions="1+", default=-1),
        Field("topics", array(TOPIC)),
        Field(
            "cluster_authorized_operations",
            INT32,
            versions="8+",
            default=AUTHORIZED_OPERATIONS_UNKNOWN,
        ),
    ),
)


def requested_topics(body: dict[str, Any], version: int) -> list[str] | None:
    """The topic names asked for; ``None`` means all topics (v0: empty; v1+: null)."""
    topics = body["topics"]
    if topics is None or (version == 0 and not topics):
        return None
    return [t["name"] for t in topics]


def all_topics_request(version: int) -> dict[str, Any]:
    """A request body for all topics at ``version`` (auto-creation off where it exists)."""
    return {"topics": [] if version == 0 else None, "allow_auto_topic_creation": False}
