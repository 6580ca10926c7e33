"""The records field of a Fetch answer: the log's own record batches v2, byte for byte
(``adapters.raft_log``'s encoding), for the transport's converter (``RecordsCodec``).

A leader answers a Fetch with the bytes its log holds (``MetadataLog.read_bytes``, CRC
checked there), wrapped as ``encoded.EncodedBatches``: no record is decoded and encoded again
on the way out -- Kafka sends the log's bytes the same way. A follower decodes them into
``Batch`` values for its core (records as bytes: ``record_bytes``), checking each batch's
header and CRC; a batch cut short at the end of the answer (a reader's byte limit) is left
for the next Fetch, as Kafka's readers do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adapters.network.codec.errors import DecodeError
from adapters.network.codec.raft_convert import RecordsCodec
from adapters.raft_log import batches as log_batches
from adapters.raft_log.batch_format import HEADER_BYTES, crc_matches, read_header
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.serde import METADATA, RecordSerde
from adapters.raft_node.encoded import EncodedBatches
from fsm.raft.messages import Batch


def encode_batches(batches: Sequence[Any], serde: RecordSerde = METADATA) -> bytes:
    if len(batches) == 1 and isinstance(batches[0], EncodedBatches):
        return batches[0].data
    return b"".join(log_batches.encode(b, serde) for b in batches)


def decode_batches(data: bytes | bytearray | memoryview, serde: RecordSerde = METADATA
                   ) -> list[Batch]:
    """The whole batches of ``data``; ``DecodeError`` naming the batch for anything bad."""
    out: list[Batch] = []
    pos, size = 0, len(data)
    while size - pos >= HEADER_BYTES:
        try:
            header = read_header(data, pos)
            if pos + header.size > size:
                break  # cut short by the sender's byte limit: fetched again next time
            if not crc_matches(data, pos, header):
                raise MalformedBatch("CRC-32C mismatch", 0)
            out.append(log_batches.decode(data, header, serde, pos))
        except MalformedBatch as exc:
            raise DecodeError(f"record batch at byte {pos + exc.position}: {exc}") from None
        pos += header.size
    return out


def records_codec(serde: RecordSerde = METADATA) -> RecordsCodec:
    return RecordsCodec(lambda bs: encode_batches(bs, serde),
                        lambda data: decode_batches(data, serde))
