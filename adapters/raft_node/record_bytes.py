"""The node keeps the state machine's records encoded: the log is opened with the bytes
serde and the wire carries the log's bytes, so a follower splits a fetched batch into its
records' bytes and writes them again without decoding a metadata record (a Python decode of
each record on each follower was what bounded the quorum's throughput). Records are encoded
once, where they are made (``to_bytes``: the leader's appends, snapshots written), and
decoded where they are read as values (``to_values``: a standby's replay, a snapshot
loaded, the admin's digest). On disk nothing changes: a record's value is
``fsm.kraft.records.codec.encode_record`` of it either way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsm.kraft.records.codec import decode_record, encode_record
from fsm.raft.messages import Batch

_RAW = (bytes, bytearray, memoryview)


def encoded(records: Iterable[Any]) -> tuple[bytes, ...]:
    return tuple(bytes(r) if isinstance(r, _RAW) else encode_record(r) for r in records)


def decoded(records: Iterable[Any]) -> tuple[Any, ...]:
    return tuple([decode_record(r) if isinstance(r, _RAW) else r for r in records])


def to_bytes(batch: Batch) -> Batch:
    """``batch`` with its records encoded (control batches are Raft's own: as they are)."""
    if batch.control or all(type(r) is bytes for r in batch.records):
        return batch
    return Batch(batch.base_offset, batch.epoch, encoded(batch.records), batch.control)


def to_values(batch: Batch) -> Batch:
    """``batch`` with its records decoded to ``fsm.kraft.records`` values."""
    if batch.control:
        return batch
    return Batch(batch.base_offset, batch.epoch, decoded(batch.records), batch.control)
