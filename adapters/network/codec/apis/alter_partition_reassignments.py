"""AlterPartitionReassignments (key 45), v0: a client starts or cancels partition
reassignments (KIP-455); a KRaft broker forwards it to the active controller.

Kafka's AlterPartitionReassignmentsRequest.json / AlterPartitionReassignmentsResponse.json.
Flexible from v0. v1 (KIP-1101's allow-replication-factor-change flag) is not served.
"""

from __future__ import annotations

from adapters.network.codec.schema import INT16, INT32, STRING, Field, Message, array, struct

API_KEY = 45

REQUEST = Message(
    "AlterPartitionReassignmentsRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("timeout_ms", INT32, default=60000),
        Field("topics", array(struct(
            Field("name", STRING),
            Field("partitions", array(struct(
                Field("partition_index", INT32),
                Field("replicas", array(INT32), nullable="0+", default=None),
            ))),
        ))),
    ),
)

RESPONSE = Message(
    "AlterPartitionReassignmentsResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("responses", array(struct(
            Field("name", STRING),
            Field("partitions", array(struct(
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ))),
        ))),
    ),
)
