"""LeaderAndIsr (key 4), v2 (KIP-380: BrokerEpoch, partitions grouped by topic).

Reference section 2; upstream LeaderAndIsrRequest.json @21449ce8, LeaderAndIsrResponse.json
@e3e579e7. Flexible from v4.
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

API_KEY = 4

PARTITION_STATE = struct(
    Field("partition_index", INT32),
    Field("controller_epoch", INT32),
    Field("leader", INT32),
    Field("leader_epoch", INT32),
    Field("isr", array(INT32)),
    Field("zk_version", INT32),
    Field("replicas", array(INT32)),
    Field("is_new", BOOL, default=False),
)

REQUEST = Message(
    "LeaderAndIsrRequest",
    API_KEY,
    valid="2",
    flexible="4+",
    fields=(
        Field("controller_id", INT32),
        Field("controller_epoch", INT32),
        Field("broker_epoch", INT64, default=-1),
        Field(
            "topic_states",
            array(
                struct(
                    Field("topic_name", STRING), Field("partition_states", array(PARTITION_STATE))
                )
            ),
        ),
        Field(
            "live_leaders",
            array(
                struct(Field("broker_id", INT32), Field("host_name", STRING), Field("port", INT32))
            ),
        ),
    ),
)

RESPONSE = Message(
    "LeaderAndIsrResponse",
    API_KEY,
    valid="2",
    flexible="4+",
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
