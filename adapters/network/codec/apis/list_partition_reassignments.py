"""ListPartitionReassignments (key 46), v0: a client lists the ongoing reassignments, all
or of the partitions it names (KIP-455); a KRaft broker forwards it to the active controller.

Kafka's ListPartitionReassignmentsRequest.json / ListPartitionReassignmentsResponse.json.
Flexible from v0.
"""

from __future__ import annotations

from adapters.network.codec.schema import INT16, INT32, STRING, Field, Message, array, struct

API_KEY = 46

REQUEST = Message(
    "ListPartitionReassignmentsRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("timeout_ms", INT32, default=60000),
        Field("topics", array(struct(
            Field("name", STRING),
            Field("partition_indexes", array(INT32)),
        )), nullable="0+", default=None),
    ),
)

RESPONSE = Message(
    "ListPartitionReassignmentsResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("topics", array(struct(
            Field("name", STRING),
            Field("partitions", array(struct(
                Field("partition_index", INT32),
                Field("replicas", array(INT32)),
                Field("adding_replicas", array(INT32)),
                Field("removing_replicas", array(INT32)),
            ))),
        ))),
    ),
)
