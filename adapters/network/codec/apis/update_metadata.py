"""UpdateMetadata (key 6), v5 (KIP-380: BrokerEpoch, partitions grouped by topic).

Reference section 4; upstream UpdateMetadataRequest.json @477186ef. Flexible from v6.
In ``endpoints`` the port comes before the host.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 6

SECURITY_PROTOCOLS: dict[str, int] = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

PARTITION_STATE = struct(
    Field("partition_index", INT32),
    Field("controller_epoch", INT32),
    Field("leader", INT32),
    Field("leader_epoch", INT32),
    Field("isr", array(INT32)),
    Field("zk_version", INT32),
    Field("replicas", array(INT32)),
    Field("offline_replicas", array(INT32), default=()),
)

ENDPOINT = struct(
    Field("port", INT32),
    Field("host", STRING),
    Field("listener", STRING),
    Field("security_protocol", INT16),
)

REQUEST = Message(
    "UpdateMetadataRequest",
    API_KEY,
    valid="5",
    flexible="6+",
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
            "live_brokers",
            array(
                struct(
                    Field("id", INT32),
                    Field("endpoints", array(ENDPOINT)),
                    Field("rack", STRING, nullable="0+"),
                )
            ),
        ),
    ),
)

RESPONSE = Message(
    "UpdateMetadataResponse",
    API_KEY,
    valid="5",
    flexible="6+",
    fields=(Field("error_code", INT16),),
)
