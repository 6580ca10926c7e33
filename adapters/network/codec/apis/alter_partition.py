"""AlterPartition (key 56, first released as AlterIsr), v0-v2: a partition leader asks the
controller to change a partition's ISR (KIP-497; KIP-704 renamed it and added the leader
recovery state in v1; v2 names topics by id, KIP-841).

Kafka's AlterPartitionRequest.json / AlterPartitionResponse.json. Flexible from v0. v3
(KIP-903's ISR with broker epochs) is not served.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 56

REQUEST = Message(
    "AlterPartitionRequest",
    API_KEY,
    valid="0-2",
    flexible="0+",
    fields=(
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
        Field("topics", array(struct(
            Field("topic_name", STRING, versions="0-1"),
            Field("topic_id", UUID, versions="2+"),
            Field("partitions", array(struct(
                Field("partition_index", INT32),
                Field("leader_epoch", INT32),
                Field("new_isr", array(INT32)),
                Field("leader_recovery_state", INT8, versions="1+", default=0),
                Field("partition_epoch", INT32),
            ))),
        ))),
    ),
)

RESPONSE = Message(
    "AlterPartitionResponse",
    API_KEY,
    valid="0-2",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("topics", array(struct(
            Field("topic_name", STRING, versions="0-1"),
            Field("topic_id", UUID, versions="2+"),
            Field("partitions", array(struct(
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("leader_id", INT32),
                Field("leader_epoch", INT32),
                Field("isr", array(INT32)),
                Field("leader_recovery_state", INT8, versions="1+", default=0),
                Field("partition_epoch", INT32),
            ))),
        ))),
    ),
)
