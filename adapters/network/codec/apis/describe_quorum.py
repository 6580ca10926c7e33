"""DescribeQuorum (key 55), v0-v1: a tool asks the leader for the quorum's state (KIP-595;
v1 adds each replica's last fetch and last caught-up times, KIP-836).

Kafka's DescribeQuorumRequest.json / DescribeQuorumResponse.json (v2 is KIP-853's dynamic
quorum). Flexible from v0.
"""

from __future__ import annotations

from adapters.network.codec.apis.quorum_shapes import topics
from adapters.network.codec.schema import INT16, INT32, INT64, Field, Message, array, struct

API_KEY = 55

REPLICA_STATE = struct(
    Field("replica_id", INT32),
    Field("log_end_offset", INT64),
    Field("last_fetch_timestamp", INT64, versions="1+", default=-1),
    Field("last_caught_up_timestamp", INT64, versions="1+", default=-1),
)

REQUEST = Message(
    "DescribeQuorumRequest",
    API_KEY,
    valid="0-1",
    flexible="0+",
    fields=(topics(Field("partition_index", INT32)),),
)

RESPONSE = Message(
    "DescribeQuorumResponse",
    API_KEY,
    valid="0-1",
    flexible="0+",
    fields=(
        Field("error_code", INT16),
        topics(
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
            Field("high_watermark", INT64),
            Field("current_voters", array(REPLICA_STATE)),
            Field("observers", array(REPLICA_STATE)),
        ),
    ),
)
