"""StopReplica (key 5), v1 (KIP-380: BrokerEpoch, partitions grouped by topic).

Reference section 3; upstream StopReplicaRequest.json @3f108e99, StopReplicaResponse.json
@8da031b0. Flexible from v2.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 5

REQUEST = Message(
    "StopReplicaRequest",
    API_KEY,
    valid="1",
    flexible="2+",
    fields=(
        Field("controller_id", INT32),
        Field("controller_epoch", INT32),
        Field("broker_epoch", INT64, default=-1),
        Field("delete_partitions", BOOL),
        Field(
            "topics", array(struct(Field("name", STRING), Field("partition_indexes", array(INT32))))
        ),
    ),
)

RESPONSE = Message(
    "StopReplicaResponse",
    API_KEY,
    valid="1",
    flexible="2+",
    fields=(
        Field("error_code", INT16),
        Field(
            "partition_errors",
            array(
                struct(
                    Field("topic_name", STRING),
                    Field("partition_index", INT32),
                    Field("error_code", INT16),
                )
            ),
        ),
    ),
)
