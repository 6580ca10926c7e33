"""Fetch (key 1), v12: replication of the metadata log (KIP-595: a follower or observer
fetches ``__cluster_metadata`` 0 from the leader).

Kafka's FetchRequest.json / FetchResponse.json at v12, the first flexible version and the one
that added ``last_fetched_epoch`` and the response's ``diverging_epoch``, ``current_leader``
and ``snapshot_id`` (v13 replaces topic names with topic ids). The response's three are
*tagged* fields of the partition (tags 0, 1, 2), and the request's ``cluster_id`` is tag 0 of
the request: the codec keeps them as raw ``tagged_fields``, packed and unpacked through
:data:`PARTITION_TAGS` and :data:`REQUEST_TAGS` (``adapters.network.codec.raft_tags``).
"""

from __future__ import annotations

from adapters.network.codec.raft_tags import TaggedField, tagged_struct
from adapters.network.codec.schema import (
    INT8,
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

API_KEY = 1
VERSION = 12

REQUEST_TAGS = (TaggedField(0, "cluster_id", STRING, nullable=True, default=None),)

REQUEST = Message(
    "FetchRequest",
    API_KEY,
    valid="12",
    flexible="12+",
    fields=(
        Field("replica_id", INT32, default=-1),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("isolation_level", INT8, default=0),
        Field("session_id", INT32, default=0),
        Field("session_epoch", INT32, default=-1),
        Field(
            "topics",
            array(
                struct(
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        array(
                            struct(
                                Field("partition", INT32),
                                Field("current_leader_epoch", INT32, default=-1),
                                Field("fetch_offset", INT64),
                                Field("last_fetched_epoch", INT32, default=-1),
                                Field("log_start_offset", INT64, default=-1),
                                Field("partition_max_bytes", INT32),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field(
            "forgotten_topics_data",
            array(struct(Field("topic", STRING), Field("partitions", array(INT32)))),
            default=(),
        ),
        Field("rack_id", STRING, default=""),
    ),
)

PARTITION_TAGS = (
    TaggedField(
        0,
        "diverging_epoch",
        tagged_struct(Field("epoch", INT32), Field("end_offset", INT64)),
        default={"epoch": -1, "end_offset": -1},
    ),
    TaggedField(
        1,
        "current_leader",
        tagged_struct(Field("leader_id", INT32), Field("leader_epoch", INT32)),
        default={"leader_id": -1, "leader_epoch": -1},
    ),
    TaggedField(
        2,
        "snapshot_id",
        tagged_struct(Field("end_offset", INT64), Field("epoch", INT32)),
        default={"end_offset": -1, "epoch": -1},
    ),
)

RESPONSE = Message(
    "FetchResponse",
    API_KEY,
    valid="12",
    flexible="12+",
    fields=(
        Field("throttle_time_ms", INT32, default=0),
        Field("error_code", INT16),
        Field("session_id", INT32, default=0),
        Field(
            "responses",
            array(
                struct(
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        array(
                            struct(
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("high_watermark", INT64),
                                Field("last_stable_offset", INT64, default=-1),
                                Field("log_start_offset", INT64, default=-1),
                                Field(
                                    "aborted_transactions",
                                    array(
                                        struct(
                                            Field("producer_id", INT64),
                                            Field("first_offset", INT64),
                                        )
                                    ),
                                    nullable="4+",
                                    default=None,
                                ),
                                Field("preferred_read_replica", INT32, default=-1),
                                Field("records", Bytes(), nullable="0+"),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
)
