"""DeleteTopics (key 20), v1-v6: a client asks to delete topics, by name, or from v6 by name
or id (KIP-516); a KRaft broker forwards it to the active controller.

Kafka's DeleteTopicsRequest.json / DeleteTopicsResponse.json. Flexible from v4; v5 adds each
result's error message, v6 the topic ids. v0 is older than any stock client we meet.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 20

REQUEST = Message(
    "DeleteTopicsRequest",
    API_KEY,
    valid="1-6",
    flexible="4+",
    fields=(
        Field("topics", array(struct(
            Field("name", STRING, nullable="6+", default=None),
            Field("topic_id", UUID),
        )), versions="6+"),
        Field("topic_names", array(STRING), versions="0-5"),
        Field("timeout_ms", INT32, default=60000),
    ),
)

RESPONSE = Message(
    "DeleteTopicsResponse",
    API_KEY,
    valid="1-6",
    flexible="4+",
    fields=(
        Field("throttle_time_ms", INT32, versions="1+", default=0),
        Field("responses", array(struct(
            Field("name", STRING, nullable="6+"),
            Field("topic_id", UUID, versions="6+"),
            Field("error_code", INT16),
            Field("error_message", STRING, versions="5+", nullable="5+", default=None),
        ))),
    ),
)
