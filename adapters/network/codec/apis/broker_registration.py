"""BrokerRegistration (key 62; seed 004's draft numbered it 57), v0-v3: a broker registers
with the active controller at startup and gets its broker epoch (KIP-631; v1 adds the ZooKeeper
migration flag, v2 the log directories, KIP-858, v3 the previous broker epoch, KIP-966).

Kafka's BrokerRegistrationRequest.json / BrokerRegistrationResponse.json. Flexible from v0.
The fields added after v0 are not carried by ``fsm.kraft.controller.requests``: read and
ignored, written as their defaults.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 62

REQUEST = Message(
    "BrokerRegistrationRequest",
    API_KEY,
    valid="0-3",
    flexible="0+",
    fields=(
        Field("broker_id", INT32),
        Field("cluster_id", STRING),
        Field("incarnation_id", UUID),
        Field("listeners", array(struct(
            Field("name", STRING),
            Field("host", STRING),
            Field("port", UINT16),
            Field("security_protocol", INT16),
        ))),
        Field("features", array(struct(
            Field("name", STRING),
            Field("min_supported_version", INT16),
            Field("max_supported_version", INT16),
        ))),
        Field("rack", STRING, nullable="0+"),
        Field("is_migrating_zk_broker", BOOL, versions="1+", default=False),
        Field("log_dirs", array(UUID), versions="2+", default=()),
        Field("previous_broker_epoch", INT64, versions="3+", default=-1),
    ),
)

RESPONSE = Message(
    "BrokerRegistrationResponse",
    API_KEY,
    valid="0-3",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("broker_epoch", INT64, default=-1),
    ),
)
