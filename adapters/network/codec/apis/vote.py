"""Vote (key 52), v0: a candidate asks the voters for their vote (KIP-595).

Kafka's VoteRequest.json / VoteResponse.json at v0 (static voters; v1 is KIP-853's dynamic
quorum). Flexible from v0. The partition (``__cluster_metadata`` 0) is nested in a topic array.
"""

from __future__ import annotations

from adapters.network.codec.apis.quorum_shapes import topics
from adapters.network.codec.schema import BOOL, INT16, INT32, INT64, STRING, Field, Message

API_KEY = 52

REQUEST = Message(
    "VoteRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("cluster_id", STRING, nullable="0+", default=None),
        topics(
            Field("partition_index", INT32),
            Field("candidate_epoch", INT32),
            Field("candidate_id", INT32),
            Field("last_offset_epoch", INT32),
            Field("last_offset", INT64),
        ),
    ),
)

RESPONSE = Message(
    "VoteResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("error_code", INT16),
        topics(
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
            Field("vote_granted", BOOL),
        ),
    ),
)
