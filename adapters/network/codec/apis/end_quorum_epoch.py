"""EndQuorumEpoch (key 54), v0: a resigning leader tells the voters to elect another, in the
order of ``preferred_successors`` (KIP-595).

Kafka's EndQuorumEpochRequest.json / EndQuorumEpochResponse.json at v0 (v1 is KIP-853's
dynamic quorum). Flexible only from v1: v0 has classic strings and arrays, request header v1 and
response header v0.
"""

from __future__ import annotations

from adapters.network.codec.apis.quorum_shapes import epoch_response, topics
from adapters.network.codec.schema import INT32, STRING, Field, Message, array

API_KEY = 54

REQUEST = Message(
    "EndQuorumEpochRequest",
    API_KEY,
    valid="0",
    flexible="1+",
    fields=(
        Field("cluster_id", STRING, nullable="0+", default=None),
        topics(
            Field("partition_index", INT32),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
            Field("preferred_successors", array(INT32)),
        ),
    ),
)

RESPONSE = Message(
    "EndQuorumEpochResponse", API_KEY, valid="0", flexible="1+", fields=epoch_response()
)
