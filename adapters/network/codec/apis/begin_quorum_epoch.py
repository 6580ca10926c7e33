"""BeginQuorumEpoch (key 53), v0: a new leader tells the voters it leads the epoch (KIP-595).

Kafka's BeginQuorumEpochRequest.json / BeginQuorumEpochResponse.json at v0 (v1 is KIP-853's
dynamic quorum). Flexible only from v1: v0 has classic strings and arrays, request header v1 and
response header v0.
"""

from __future__ import annotations

from adapters.network.codec.apis.quorum_shapes import epoch_response, topics
from adapters.network.codec.schema import INT32, STRING, Field, Message

API_KEY = 53

REQUEST = Message(
    "BeginQuorumEpochRequest",
    API_KEY,
    valid="0",
    flexible="1+",
    fields=(
        Field("cluster_id", STRING, nullable="0+", default=None),
        topics(
            Field("partition_index", INT32),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
        ),
    ),
)

RESPONSE = Message(
    "BeginQuorumEpochResponse", API_KEY, valid="0", flexible="1+", fields=epoch_response()
)
