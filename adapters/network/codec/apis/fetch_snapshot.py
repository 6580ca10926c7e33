"""FetchSnapshot (key 59), v0: a replica behind the leader's log start fetches the leader's
latest snapshot in chunks (KIP-630, part of KRaft's replication).

Kafka's FetchSnapshotRequest.json / FetchSnapshotResponse.json at v0 (v1 is KIP-853's).
Flexible from v0. The request's ``cluster_id`` (tag 0) and the partition's ``current_leader``
(tag 0) are tagged fields: :data:`REQUEST_TAGS`, :data:`PARTITION_TAGS`.
"""

from __future__ import annotations

from adapters.network.codec.raft_tags import TaggedField, tagged_struct
from adapters.network.codec.schema import (
    INT16,
    INT32,
    INT64,
    STRING,
    Bytes,
    Field,
    Message,
    array,
    struct,
)

API_KEY = 59

SNAPSHOT_ID = struct(Field("end_offset", INT64), Field("epoch", INT32))

REQUEST_TAGS = (TaggedField(0, "cluster_id", STRING, nullable=True, default=None),)

REQUEST = Message(
    "FetchSnapshotRequest",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("replica_id", INT32, default=-1),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field(
            "topics",
            array(
                struct(
                    Field("name", STRING),
                    Field(
                        "partitions",
                        array(
                            struct(
                                Field("partition", INT32),
                                Field("current_leader_epoch", INT32),
                                Field("snapshot_id", SNAPSHOT_ID),
                                Field("position", INT64),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
)

PARTITION_TAGS = (
    TaggedField(
        0,
        "current_leader",
        tagged_struct(Field("leader_id", INT32), Field("leader_epoch", INT32)),
        # Kafka's schema gives these no default, so the generated code's is 0 (not -1)
        default={"leader_id": 0, "leader_epoch": 0},
    ),
)

RESPONSE = Message(
    "FetchSnapshotResponse",
    API_KEY,
    valid="0",
    flexible="0+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field(
            "topics",
            array(
                struct(
                    Field("name", STRING),
                    Field(
                        "partitions",
                        array(
                            struct(
                                Field("index", INT32),
                                Field("error_code", INT16),
                                Field("snapshot_id", SNAPSHOT_ID),
                                Field("size", INT64),
                                Field("position", INT64),
                                Field("unaligned_records", Bytes()),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
)
