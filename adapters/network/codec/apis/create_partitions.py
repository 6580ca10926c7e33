"""CreatePartitions (key 37), v0-v3: a client asks to add partitions to existing topics
(KIP-195); a KRaft broker forwards it to the active controller.

Kafka's CreatePartitionsRequest.json / CreatePartitionsResponse.json. Flexible from v2.
"""

from __future__ import annotations

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

API_KEY = 37

REQUEST = Message(
    "CreatePartitionsRequest",
    API_KEY,
    valid="0-3",
    flexible="2+",
    fields=(
        Field("topics", array(struct(
            Field("name", STRING),
            Field("count", INT32),
            Field("assignments", array(struct(Field("broker_ids", array(INT32)))),
                  nullable="0+"),
        ))),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL, default=False),
    ),
)

RESPONSE = Message(
    "CreatePartitionsResponse",
    API_KEY,
    valid="0-3",
    flexible="2+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("results", array(struct(
            Field("name", STRING),
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+", default=None),
        ))),
    ),
)
