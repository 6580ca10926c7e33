"""The shapes the quorum APIs share: each carries ``__cluster_metadata`` partition 0 inside a
``topics`` array of (``topic_name``, ``partitions``), and BeginQuorumEpoch and EndQuorumEpoch
answer the same (top-level error, then per partition: error, leader id, leader epoch)."""

from __future__ import annotations

from adapters.network.codec.schema import INT16, INT32, STRING, Field, array, struct


def topics(*partition_fields: Field) -> Field:
    """``topics: [topic_name, partitions: [partition_fields...]]``."""
    return Field(
        "topics",
        array(
            struct(Field("topic_name", STRING), Field("partitions", array(struct(*partition_fields))))
        ),
    )


def epoch_response() -> tuple[Field, ...]:
    return (
        Field("error_code", INT16),
        topics(
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
        ),
    )
