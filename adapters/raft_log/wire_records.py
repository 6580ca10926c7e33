"""Batches as a Fetch answer carries them: the ``records`` field of ``__cluster_metadata-0``
is record batches v2 back to back, the same bytes as the log's segments
(:meth:`MetadataLog.read_bytes` serves them as they are on disk). ``encode_batches`` and
``decode_batches`` are the pair the quorum's wire codec takes (``RecordsCodec``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from adapters.raft_log import batches
from adapters.raft_log.batch_format import HEADER_BYTES, crc_matches, read_header
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.serde import METADATA, RecordSerde
from fsm.raft.messages import Batch

MAX_BATCHES = 1 << 16
"""No Fetch answer carries more batches than this (``max_batches_per_fetch`` is far below)."""
MAX_BATCH_BYTES = 16 << 20


def encode_batches(batch_list: Sequence[Batch], serde: RecordSerde = METADATA,
                   timestamp_ms: int | None = None) -> bytes:
    ts = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
    return b"".join(batches.encode(b, serde, ts) for b in batch_list)


def decode_batches(data: bytes, serde: RecordSerde = METADATA, *, keep_raw: bool = False
                   ) -> tuple[Batch, ...]:
    """Every batch of ``data``, each checked (header, CRC, records, offsets that follow on,
    epochs that never go down); :class:`MalformedBatch` (a ``ValueError``) naming the byte
    position for anything else -- a partial batch at the end included (our leader sends
    whole batches). The CRC does not cover the base offset and the epoch: a flip there
    passes unless it breaks the order (Kafka's format has the same blind spot).

    ``keep_raw``: each Batch carries its bytes (``Batch.raw``), which ``MetadataLog.append``
    writes as they are (a follower's log holds the leader's bytes, encoded once)."""
    view = memoryview(data)
    out: list[Batch] = []
    pos = 0
    while pos < len(view):
        if len(out) >= MAX_BATCHES:
            raise MalformedBatch(f"over {MAX_BATCHES} batches", pos)
        if len(view) - pos < HEADER_BYTES:
            raise MalformedBatch(f"batch at byte {pos}: {len(view) - pos} bytes left, a "
                                 f"batch header is {HEADER_BYTES}", pos)
        try:
            header = read_header(view, pos)
            if header.size > MAX_BATCH_BYTES or pos + header.size > len(view):
                raise MalformedBatch(f"batch of {header.size} bytes does not fit", 8)
            if not crc_matches(view, pos, header):
                raise MalformedBatch("CRC-32C mismatch", 17)
            if out and (header.base_offset != out[-1].end_offset
                        or header.epoch < out[-1].epoch):
                raise MalformedBatch(f"batch at offset {header.base_offset} epoch "
                                     f"{header.epoch} after one ending at "
                                     f"{out[-1].end_offset} in epoch {out[-1].epoch}", 0)
            out.append(batches.decode(view, header, serde, pos, keep_raw=keep_raw))
        except MalformedBatch as exc:
            raise MalformedBatch(f"batch at byte {pos}: {exc.reason}", pos + exc.position
                                 ) from None
        pos += header.size
    return tuple(out)
