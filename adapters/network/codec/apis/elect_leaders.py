"""ElectLeaders (key 43), v0-v2: a client asks for preferred or unclean leader elections
(KIP-183, KIP-460 added the election type in v1); a KRaft broker forwards it to the active
controller.

Kafka's ElectLeadersRequest.json / ElectLeadersResponse.json. Flexible from v2. v0 has no
election type (preferred) and no top-level error code.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 43

REQUEST = Message(
    "ElectLeadersRequest",
    API_KEY,
    valid="0-2",
    flexible="2+",
    fields=(
        Field("election_type", INT8, versions="1+", default=0),
        Field("topic_partitions", array(struct(
            Field("topic", STRING),
            Field("partitions", array(INT32)),
        )), nullable="0+"),
        Field("timeout_ms", INT32, default=60000),
    ),
)

RESPONSE = Message(
    "ElectLeadersResponse",
    API_KEY,
    valid="0-2",
    flexible="2+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16, versions="1+", default=0),
        Field("replica_election_results", array(struct(
            Field("topic", STRING),
            Field("partition_result", array(struct(
                Field("partition_id", INT32),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ))),
        ))),
    ),
)
