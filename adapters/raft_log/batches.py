"""One ``fsm.raft.messages.Batch`` is one record batch v2: its base offset, its epoch (the
partition leader epoch), its records -- the state machine's, as values encoded by a
:class:`~adapters.raft_log.serde.RecordSerde` (null key), or Raft's own control records
(``LeaderChange``) in a control batch."""

from __future__ import annotations

from typing import Any

from adapters.raft_log.batch_format import (
    HEADER_BYTES,
    BatchHeader,
    decode_records,
    encode_batch,
    read_header,
)
from adapters.raft_log.control_records import decode_control, encode_control
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.serde import RecordSerde
from fsm.raft.messages import Batch


def encode(batch: Batch, serde: RecordSerde, timestamp_ms: int = 0) -> bytes:
    if not batch.records:
        raise ValueError(f"batch at offset {batch.base_offset} has no records")
    if batch.control:
        records = [encode_control(r) for r in batch.records]
    else:
        encode_value = serde.encode
        records = [(None, encode_value(r)) for r in batch.records]
    return encode_batch(batch.base_offset, batch.epoch, records, control=batch.control,
                        timestamp_ms=timestamp_ms)


def decode(data: bytes | memoryview, header: BatchHeader, serde: RecordSerde,
           pos: int = 0, *, keep_raw: bool = False) -> Batch:
    """The Batch of the CRC-checked batch at ``pos``; :class:`MalformedBatch` if its records
    do not decode. ``keep_raw``: the Batch carries the batch's bytes (``Batch.raw``)."""
    raw = decode_records(data, header, pos)
    control = header.control
    if not control:
        decode_value = serde.decode
        try:
            records = tuple([decode_value(value) for _, value in raw])  # type: ignore[arg-type]
        except (ValueError, TypeError):
            pass  # the slow path below names the record
        else:
            return Batch(header.base_offset, header.epoch, records, False,
                         _raw(data, header, pos) if keep_raw else None)
    out: list[Any] = []
    for i, (key, value) in enumerate(raw):
        try:
            if control:
                out.append(decode_control(key, value))
            elif value is None:
                raise ValueError("null value")
            else:
                out.append(serde.decode(value))
        except (ValueError, TypeError) as exc:
            kind = "control record" if control else f"{serde.name} record"
            raise MalformedBatch(f"{kind} {i} (offset {header.base_offset + i}): {exc}",
                                 0) from None
    return Batch(header.base_offset, header.epoch, tuple(out), control,
                 _raw(data, header, pos) if keep_raw else None)


def _raw(data: bytes | memoryview, header: BatchHeader, pos: int) -> bytes:
    if pos == 0 and len(data) == header.size and isinstance(data, bytes):
        return data
    return bytes(memoryview(data)[pos:pos + header.size])


def raw_fits(batch: Batch) -> bool:
    """Whether ``batch.raw`` is the batch's own encoding: its header names the batch's base
    offset, epoch, record count and control flag, and its length is the raw bytes' (the CRC
    was checked where the bytes were decoded)."""
    raw = batch.raw
    if raw is None or len(raw) < HEADER_BYTES:
        return False
    try:
        header = read_header(raw)
    except MalformedBatch:
        return False
    return (header.base_offset == batch.base_offset and header.epoch == batch.epoch
            and header.count == len(batch.records) and header.control == batch.control
            and header.size == len(raw))
