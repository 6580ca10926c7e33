"""DescribeCluster (key 60), v0-v1: a client asks a broker for the cluster id, the active
controller and the brokers (KIP-700; v1 adds the endpoint type, KIP-919).

Kafka's DescribeClusterRequest.json / DescribeClusterResponse.json. Flexible from v0. A KRaft
broker answers it itself from its metadata image.
"""

from __future__ import annotations

from adapters.network.codec.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 60

UNKNOWN_AUTHORIZED_OPERATIONS = -(2**31)
"""``cluster_authorized_operations`` when they were not asked for (Kafka's INT32 min)."""

REQUEST = Message(
    "DescribeClusterRequest",
    API_KEY,
    valid="0-1",
    flexible="0+",
    fields=(
        Field("include_cluster_authorized_operations", BOOL, default=False),
        Field("endpoint_type", INT8, versions="1+", default=1),
    ),
)

RESPONSE = Message(
    "DescribeClusterResponse",
    API_KEY,
    valid="0-1",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("endpoint_type", INT8, versions="1+", default=1),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field("brokers", array(struct(
            Field("broker_id", INT32),
            Field("host", STRING),
            Field("port", INT32),
            Field("rack", STRING, nullable="0+", default=None),
        ))),
        Field("cluster_authorized_operations", INT32, default=UNKNOWN_AUTHORIZED_OPERATIONS),
    ),
)
