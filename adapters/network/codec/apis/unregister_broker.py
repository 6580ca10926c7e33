"""UnregisterBroker (key 64; the draft's 59), v0: a tool asks the controller to forget a
broker that is gone for good (KIP-631). A broker forwards it to the active controller.

Kafka's UnregisterBrokerRequest.json / UnregisterBrokerResponse.json. Flexible from v0.
"""

from __future__ import annotations

from adapters.network.codec.schema import INT16, INT32, STRING, Field, Message

API_KEY = 64

REQUEST = Message(
    "UnregisterBrokerRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(Field("broker_id", INT32),),
)

RESPONSE = Message(
    "UnregisterBrokerResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ),
)
