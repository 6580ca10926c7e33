"""The metadata quorum's log on disk (issue 24): ``<metadata.log.dir>/__cluster_metadata-0/``
with segments of Kafka's record batches v2, the ``quorum-state`` file and snapshots. A node
shell carries out the Raft core's effects on a :class:`MetadataLog` and builds the core's start
from it; the core (``fsm/raft``) never touches the disk. See docs/kraft.md, "The metadata log
on disk"."""

from adapters.raft_log.errors import (
    BatchTooLarge,
    CorruptLogError,
    MalformedBatch,
    OffsetOutOfRange,
)
from adapters.raft_log.log import PARTITION_DIR, MetadataLog
from adapters.raft_log.serde import BYTES, METADATA, RecordSerde
from adapters.raft_log.wire_records import decode_batches, encode_batches

__all__ = ["BYTES", "METADATA", "PARTITION_DIR", "BatchTooLarge", "CorruptLogError",
           "MalformedBatch", "MetadataLog", "OffsetOutOfRange", "RecordSerde", "decode_batches",
           "encode_batches"]
