"""BrokerHeartbeat (key 63; the draft's 58), v0: a registered broker's periodic heartbeat to
the active controller, which answers whether it is caught up, fenced, or should shut down
(KIP-631).

Kafka's BrokerHeartbeatRequest.json / BrokerHeartbeatResponse.json. Flexible from v0. v1
(offline log directories as a tagged field, KIP-858) is not served.
"""

from __future__ import annotations

from adapters.network.codec.schema import BOOL, INT16, INT32, INT64, Field, Message

API_KEY = 63

REQUEST = Message(
    "BrokerHeartbeatRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
        Field("current_metadata_offset", INT64),
        Field("want_fence", BOOL),
        Field("want_shut_down", BOOL),
    ),
)

RESPONSE = Message(
    "BrokerHeartbeatResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("is_caught_up", BOOL, default=False),
        Field("is_fenced", BOOL, default=True),
        Field("should_shut_down", BOOL),
    ),
)
