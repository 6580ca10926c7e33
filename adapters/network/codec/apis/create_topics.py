"""CreateTopics (key 19), v2-v7: a client asks for new topics; a KRaft broker forwards it to
the active controller.

Kafka's CreateTopicsRequest.json / CreateTopicsResponse.json. Flexible from v5; v5 answers each
topic's partition count, replication factor and configs, v7 its topic id (KIP-516). v0-v1 are
older than any stock client we meet (kafka-python 3 sends v2-v7, librdkafka 2 up to v4).
The response's per-topic configs are written null and its ``topic_config_error_code`` (tag 0
of each result, :data:`RESULT_TAGS`) not at all.
"""

from __future__ import annotations

from adapters.network.codec.raft_tags import TaggedField
from adapters.network.codec.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 19

RESULT_TAGS = (TaggedField(0, "topic_config_error_code", INT16, default=0),)
"""Named tagged fields of a response's topic result (v5+)."""

REQUEST = Message(
    "CreateTopicsRequest",
    API_KEY,
    valid="2-7",
    flexible="5+",
    fields=(
        Field("topics", array(struct(
            Field("name", STRING),
            Field("num_partitions", INT32),
            Field("replication_factor", INT16),
            Field("assignments", array(struct(
                Field("partition_index", INT32),
                Field("broker_ids", array(INT32)),
            ))),
            Field("configs", array(struct(
                Field("name", STRING),
                Field("value", STRING, nullable="0+"),
            ))),
        ))),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL, versions="1+", default=False),
    ),
)

RESPONSE = Message(
    "CreateTopicsResponse",
    API_KEY,
    valid="2-7",
    flexible="5+",
    fields=(
        Field("throttle_time_ms", INT32, versions="2+", default=0),
        Field("topics", array(struct(
            Field("name", STRING),
            Field("topic_id", UUID, versions="7+"),
            Field("error_code", INT16),
            Field("error_message", STRING, versions="1+", nullable="0+", default=None),
            Field("num_partitions", INT32, versions="5+", default=-1),
            Field("replication_factor", INT16, versions="5+", default=-1),
            Field("configs", array(struct(
                Field("name", STRING),
                Field("value", STRING, nullable="0+"),
                Field("read_only", BOOL),
                Field("config_source", INT8, default=-1),
                Field("is_sensitive", BOOL),
            )), versions="5+", nullable="5+", default=None),
        ))),
    ),
)
