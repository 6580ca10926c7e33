"""The records field of a Fetch answer, for the transport's converter (``RecordsCodec``):
``adapters.raft_log``'s record batches v2 back to back, plus one shortcut.

A leader answers a Fetch with the bytes its log holds (``MetadataLog.read_bytes``, CRC
checked there), carried as ``encoded.EncodedBatches`` and written as they are: no record is
decoded and encoded again on the way out -- Kafka sends the log's bytes the same way. A
follower decodes them into ``Batch`` values for its core (records as bytes: the node opens
its log with the bytes serde, ``record_bytes``), each batch checked by the log's decoder; a
malformed answer is the codec's ``DecodeError``, naming the byte, like any other bad frame.
Each decoded batch keeps its bytes (``Batch.raw``): the follower's log writes them as they
came (``MetadataLog.append``), so a record is encoded once, on the leader."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.raft_convert import RecordsCodec
from adapters.raft_log import BYTES, RecordSerde
from adapters.raft_log import decode_batches as log_decode
from adapters.raft_log import encode_batches as log_encode
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_node.encoded import EncodedBatches
from fsm.raft.messages import Batch


def encode_batches(batches: Sequence[Any], serde: RecordSerde = BYTES) -> bytes:
    if len(batches) == 1 and isinstance(batches[0], EncodedBatches):
        return batches[0].data
    return log_encode(batches, serde)


def decode_batches(data: bytes, serde: RecordSerde = BYTES) -> tuple[Batch, ...]:
    try:
        return log_decode(bytes(data), serde, keep_raw=True)
    except MalformedBatch as exc:
        raise DecodeError(str(exc)) from None


def records_codec(serde: RecordSerde = BYTES) -> RecordsCodec:
    return RecordsCodec(lambda bs: encode_batches(bs, serde),
                        lambda data: decode_batches(data, serde))
