"""Kafka's record batch, magic 2 (the only format of the metadata log), for uncompressed
batches of records whose key and value are opaque bytes.

A batch: baseOffset int64, batchLength int32 (the bytes after it), partitionLeaderEpoch int32
(the batch's Raft epoch), magic int8 = 2, crc uint32 (CRC-32C of everything after it),
attributes int16 (bits 0-2 compression: 0 here; bit 5 control), lastOffsetDelta int32,
baseTimestamp int64, maxTimestamp int64, producerId int64 (-1), producerEpoch int16 (-1),
baseSequence int32 (-1), record count int32, then the records. A record: length (varint),
attributes int8 (0), timestamp delta (varlong), offset delta (varint), key length (varint,
-1 = null) and key, value length and value, header count (varint) and headers.

Every record of a batch takes the batch's timestamp (delta 0) and the next offset (delta i):
the log's batches are contiguous runs of offsets. Decoding checks all of it and raises
:class:`MalformedBatch` naming the position (relative to the batch) and what is wrong; the
CRC is the C ``crc32c`` package's (``benchmarks/bench_raft_log.py`` measured it against the
alternatives)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

from crc32c import crc32c

from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.varints import CACHED, SMALL, read_varint, varint

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_BYTES = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset and batchLength: the bytes batchLength does not count
CRC_AT = 17
ATTRIBUTES_AT = 21  # the CRC covers from here to the end of the batch
MIN_BATCH_LENGTH = HEADER_BYTES - LOG_OVERHEAD
MAGIC = 2
CONTROL_FLAG = 0x20
COMPRESSION_MASK = 0x07
NO_PRODUCER = -1
_CRC = struct.Struct(">I")
_NULL = b"\x01"  # the varint of -1: a null key or value
_ZERO2 = b"\x00\x00"  # record attributes 0, timestamp delta 0
_NO_HEADERS = b"\x00"
_MID_COUNT = 4096
_MIDS = tuple(_ZERO2 + SMALL[i] + _NULL for i in range(_MID_COUNT))
"""A null-keyed record's bytes between its length and its value's, by offset delta."""

Record = tuple[bytes | None, bytes | None]
"""A record's key and value, each bytes or None."""


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    epoch: int  # partitionLeaderEpoch
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int

    @property
    def size(self) -> int:
        """The batch's bytes on disk, from its baseOffset on."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def end_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)


def encode_batch(base_offset: int, epoch: int, records: Sequence[Record], *,
                 control: bool = False, timestamp_ms: int = 0) -> bytes:
    """One batch v2 holding ``records`` at ``base_offset``, ``base_offset + 1``, ..."""
    n = len(records)
    if n == 0:
        raise ValueError("a batch holds at least one record")
    parts: list[bytes] = [bytes(HEADER_BYTES)]
    add = parts.append
    mids = _MIDS
    for i, (key, value) in enumerate(records):
        if key is None and value is not None and i < _MID_COUNT:  # the state machine's
            mid = mids[i]
            lv = len(value)
            v = SMALL[lv] if lv < CACHED else varint(lv)
            add(varint(len(mid) + len(v) + lv + 1) + mid + v)
            add(value)
            add(_NO_HEADERS)
            continue
        delta = SMALL[i] if i < len(SMALL) else varint(i)
        k = _NULL if key is None else varint(len(key)) + key
        if value is None:
            size = 4 + len(delta) + len(k)
            add(varint(size) + _ZERO2 + delta + k + _NULL + _NO_HEADERS)
        else:
            v = varint(len(value))
            add(varint(3 + len(delta) + len(k) + len(v) + len(value)) + _ZERO2 + delta + k + v)
            add(value)
            add(_NO_HEADERS)
    body = bytearray().join(parts)
    HEADER.pack_into(body, 0, base_offset, len(body) - LOG_OVERHEAD, epoch, MAGIC, 0,
                     CONTROL_FLAG if control else 0, n - 1, timestamp_ms, timestamp_ms,
                     NO_PRODUCER, NO_PRODUCER, NO_PRODUCER, n)
    _CRC.pack_into(body, CRC_AT, crc32c(memoryview(body)[ATTRIBUTES_AT:]))
    return bytes(body)


def read_header(data: bytes | memoryview, pos: int = 0) -> BatchHeader:
    """The header of the batch at ``pos`` (``data`` holds at least ``HEADER_BYTES`` from
    there), with its length, magic and offsets checked; not its CRC."""
    header = BatchHeader._make(HEADER.unpack_from(data, pos))
    if header.batch_length < MIN_BATCH_LENGTH:
        raise MalformedBatch(f"batch length {header.batch_length} is under the minimum "
                             f"{MIN_BATCH_LENGTH}", 8)
    if header.magic != MAGIC:
        raise MalformedBatch(f"magic {header.magic}, not {MAGIC}", 16)
    if header.base_offset < 0:
        raise MalformedBatch(f"negative base offset {header.base_offset}", 0)
    if header.count < 1 or header.last_offset_delta != header.count - 1:
        raise MalformedBatch(f"{header.count} records with last offset delta "
                             f"{header.last_offset_delta}", 57)
    return header


def crc_matches(data: bytes | memoryview, pos: int, header: BatchHeader) -> bool:
    return crc32c(memoryview(data)[pos + ATTRIBUTES_AT:pos + header.size]) == header.crc


def decode_records(data: bytes | memoryview, header: BatchHeader, pos: int = 0
                   ) -> list[Record]:
    """The records of the (CRC-checked) batch at ``pos``; :class:`MalformedBatch` unless
    they fill the batch exactly, uncompressed, at offset deltas 0, 1, ...

    The common record (a length, an offset delta and a value length of one or two bytes,
    every other varint one byte, a null key, no header) is read inline; any other field goes through
    :func:`read_varint`."""
    if header.attributes & COMPRESSION_MASK:
        raise MalformedBatch(f"compression {header.attributes & COMPRESSION_MASK} is not "
                             "supported", ATTRIBUTES_AT)
    if len(data) - pos < header.size:
        raise MalformedBatch(f"batch of {header.size} bytes, only {len(data) - pos} given", 8)
    if isinstance(data, bytes):
        buf, base = data, pos
    else:
        buf, base = bytes(memoryview(data)[pos:pos + header.size]), 0
    end = base + header.size
    p = start = base + HEADER_BYTES
    out: list[Record] = []
    append = out.append
    try:
        for i in range(header.count):
            start = p
            b = buf[p]
            if b < 0x80:
                length, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:  # two bytes: records of 64 to 8191 bytes
                z = (b & 0x7F) | (buf[p + 1] << 7)
                length, p = (z >> 1) ^ -(z & 1), p + 2
            else:
                length, p = read_varint(buf, p, end)
            stop = p + length
            if length < 6 or stop > end:
                raise ValueError(f"record length {length} does not fit the batch")
            p += 1  # attributes
            if buf[p] < 0x80:  # timestamp delta
                p += 1
            else:
                _, p = read_varint(buf, p, stop)
            b = buf[p]
            if b < 0x80:
                delta, p = (b >> 1) ^ -(b & 1), p + 1
            elif p + 1 < stop and buf[p + 1] < 0x80:  # two bytes: records 64 to 8191
                z = (b & 0x7F) | (buf[p + 1] << 7)
                delta, p = (z >> 1) ^ -(z & 1), p + 2
            else:
                delta, p = read_varint(buf, p, stop)
            if delta != i:
                raise ValueError(f"record {i} has offset delta {delta}")
            if buf[p] == 1:  # a null key
                key: bytes | None = None
                p += 1
            else:
                key, p = _read_bytes(buf, p, stop)
            b = buf[p]
            if b < 0x80 and not b & 1:  # a value of fewer than 64 bytes
                n = b >> 1
                value: bytes | None = buf[p + 1:p + 1 + n]
                p += 1 + n
            elif not b & 1 and p + 2 <= stop and buf[p + 1] < 0x80:  # 64 to 8191 bytes
                n = ((b & 0x7F) | (buf[p + 1] << 7)) >> 1
                value = buf[p + 2:p + 2 + n]
                p += 2 + n
            else:
                value, p = _read_bytes(buf, p, stop)
            if p < stop and buf[p] == 0:  # no headers
                p += 1
            else:
                headers, p = read_varint(buf, p, stop)
                if headers < 0:
                    raise ValueError(f"record {i} has {headers} headers")
                for _ in range(headers):
                    _, p = _read_bytes(buf, p, stop)
                    _, p = _read_bytes(buf, p, stop)
            if p != stop:
                raise ValueError(f"record {i} does not fill its length {length}")
            append((key, value))
    except (ValueError, IndexError) as exc:
        raise MalformedBatch(str(exc) or "a record runs past the batch", start - base
                             ) from None
    if p != end:
        raise MalformedBatch(f"{end - p} bytes after the last record", p - base)
    return out


def _read_bytes(view: bytes | memoryview, p: int, stop: int) -> tuple[bytes | None, int]:
    n, p = read_varint(view, p, stop)
    if n == -1:
        return None, p
    if n < 0 or p + n > stop:
        raise ValueError(f"length {n} at {p} does not fit the record")
    return bytes(view[p:p + n]), p + n
