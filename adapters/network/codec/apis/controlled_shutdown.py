"""ControlledShutdown (key 7), v0-v2: broker -> controller.

Reference section 5; upstream ControlledShutdownRequest.json @c06e45a2 (flexible from v3),
ControlledShutdownResponse.json @7a2231ab. v0 is sent with request header v0 (no
client_id); v0 and v1 carry no BrokerEpoch (decoded as absent, -1 on conversion).
"""

from __future__ import annotations

from adapters.network.codec.schema import INT16, INT32, INT64, STRING, Field, Message, array, struct

API_KEY = 7

REQUEST = Message(
    "ControlledShutdownRequest",
    API_KEY,
    valid="0-2",
    flexible="3+",
    fields=(
        Field("broker_id", INT32),
        Field("broker_epoch", INT64, versions="2+", default=-1),
    ),
)

RESPONSE = Message(
    "ControlledShutdownResponse",
    API_KEY,
    valid="0-2",
    flexible="3+",
    fields=(
        Field("error_code", INT16),
        Field(
            "remaining_partitions",
            array(struct(Field("topic_name", STRING), Field("partition_index", INT32))),
        ),
    ),
)
