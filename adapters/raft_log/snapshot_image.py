"""A metadata snapshot's bytes loaded straight into a ``MetadataImage``: the fast load of a
restarted KRaft controller (issue 26), **held to the table-driven path**
``image_from_records(snapshots.records_of(data, ..., METADATA, ...))``.

The table-driven path checks every batch (``snapshots.iter_batches``), splits it into records
(``batch_format.decode_records``), decodes each into a value (``decode_record``) and replays
the values (``MetadataImage.apply_all``): at 1,000,000 partitions it builds a million
``PartitionRecord``s, holds them at once and drops them. This loader makes the same checks
batch by batch, and reads a *run* -- consecutive PartitionRecords of one layout (version 0,
one-byte array lengths, no tagged field, the same record framing; a snapshot lists a topic's
partitions so) -- at once: every byte of the layout that does not hold a field is compared
for the whole run with a strided slice of the batch, the fields are read with one
``struct.iter_unpack``, and ``MetadataImage.apply_partitions`` puts them in the topic's
partition map as ``PartitionImage``\\s. Any other record (a TopicRecord, a broker ...) is
decoded and applied one at a time as the table-driven path does.

It answers only where the table-driven path gives the same image: for anything it does not
take -- another layout or framing, a record that does not decode or replay, a bad batch, any
error -- it raises :class:`NotFast`, and the caller takes the table-driven path, which decides
and names the error. ``tests/unit/raft_log/test_snapshot_image.py`` holds the two to equal
images on generated snapshots, to :class:`NotFast` wherever the table-driven path fails
(mutated bytes with their CRCs made good again), and checks that runs are taken."""

from __future__ import annotations

import struct
from typing import Any

from adapters.raft_log import batches
from adapters.raft_log.batch_format import (
    COMPRESSION_MASK,
    HEADER_BYTES,
    crc_matches,
    read_header,
)
from adapters.raft_log.control_records import SnapshotFooter, SnapshotHeader
from adapters.raft_log.serde import METADATA
from adapters.raft_log.varints import read_varint
from fsm.kraft.image.image import MetadataImage
from fsm.kraft.records.codec import decode_record
from fsm.kraft.records.values import PartitionRecord

MAX_RUN_DELTA = 8192
"""Runs are read at offset deltas below this (one- and two-byte deltas); a record beyond
(a batch of over 8,192 records) is read one at a time."""
_DELTA_1 = bytes(2 * k for k in range(64))  # zigzag varints of 0..63: one byte
_DELTA_LO = bytes(((2 * k) & 0x7F) | 0x80 for k in range(MAX_RUN_DELTA))  # 64..: two bytes
_DELTA_HI = bytes((2 * k) >> 7 for k in range(MAX_RUN_DELTA))


class NotFast(Exception):
    """The snapshot is not one this loader takes whole: use the table-driven path."""


def load_image(data: bytes, epoch: int, max_batch_bytes: int) -> tuple[MetadataImage, int]:
    """The image of a snapshot's bytes (written in ``epoch``) and its number of records
    (header and footer not counted); :class:`NotFast` unless the table-driven path gives
    the same image."""
    try:
        return _load(bytes(data), epoch, max_batch_bytes)
    except NotFast:
        raise
    except Exception as exc:  # noqa: BLE001 -- whatever it is, the table-driven path names it
        raise NotFast(f"{type(exc).__name__}: {exc}") from None


def _load(data: bytes, epoch: int, max_batch_bytes: int) -> tuple[MetadataImage, int]:
    image = MetadataImage()
    size = len(data)
    pos = offset = records = 0
    footer = False
    while pos < size:
        if size - pos < HEADER_BYTES:
            raise NotFast("a partial batch header")
        header = read_header(data, pos)
        end = pos + header.size
        if (header.size > max_batch_bytes or end > size or header.base_offset != offset
                or header.epoch != epoch or header.attributes & COMPRESSION_MASK
                or not crc_matches(data, pos, header)):
            raise NotFast(f"batch at byte {pos}: not as the snapshot's reader checks it")
        if header.control:
            control = batches.decode(data, header, METADATA, pos).records
            if offset == 0 and not isinstance(control[0], SnapshotHeader):
                raise NotFast("the first batch is not the SnapshotHeader")
            footer = isinstance(control[-1], SnapshotFooter)
        else:
            if offset == 0:
                raise NotFast("the first batch is not the SnapshotHeader")
            _load_batch(image, data, pos + HEADER_BYTES, end, header.count)
            records += header.count
            footer = False
        pos, offset = end, header.end_offset
    if not footer:
        raise NotFast("the snapshot does not end with the SnapshotFooter")
    return image, records


def _load_batch(image: MetadataImage, buf: bytes, p: int, end: int, count: int) -> None:
    """Apply the ``count`` records of the (checked) batch whose records are ``buf[p:end]``."""
    i = 0
    run: _Run | None = None
    while i < count:
        m = run.length(buf, p, i, count, end) if run is not None else 0
        if not m:
            value, delta_at, key_at, value_at, stop = _record_at(buf, p, end, i)
            record = decode_record(value)
            if type(record) is PartitionRecord:
                run = _Run.of(buf, p, delta_at, key_at, value_at, stop, i)
                m = run.length(buf, p, i, count, end) if run is not None else 0
            if not m:
                image.apply(record)
                p, i = stop, i + 1
                continue
        run.apply(image, buf, p, m)  # type: ignore[union-attr] -- m > 0: a run
        p, i = p + m * run.size, i + m  # type: ignore[union-attr]
    if p != end:
        raise NotFast(f"{end - p} bytes after the last record")


def _record_at(buf: bytes, p: int, end: int, i: int) -> tuple[bytes, int, int, int, int]:
    """Record ``i`` of a batch at ``p``, in the framing a snapshot's writer uses (attributes
    and timestamp delta 0, a null key, a value, no header): its value, where its offset
    delta, key and value are, and where it ends; :class:`NotFast` for anything else."""
    length, q = read_varint(buf, p, end)
    stop = q + length
    if length < 6 or stop > end or buf[q] or buf[q + 1]:
        raise NotFast(f"record {i}: not in a snapshot's framing")
    delta_at = q + 2
    delta, key_at = read_varint(buf, delta_at, stop)
    if delta != i or buf[key_at] != 1:
        raise NotFast(f"record {i}: offset delta {delta} or a key")
    n, value_at = read_varint(buf, key_at + 1, stop)
    if n < 0 or value_at + n + 1 != stop or buf[stop - 1]:
        raise NotFast(f"record {i}: a null value, headers or a wrong length")
    return buf[value_at:value_at + n], delta_at, key_at, value_at, stop


class _Run:
    """The layout of one PartitionRecord (its framing included), for the records after it
    that have the same: ``length`` finds how many do, ``apply`` applies them."""

    __slots__ = ("size", "checks", "delta_at", "wide", "unpack", "cuts")

    def __init__(self, size: int, checks: tuple[tuple[int, bytes], ...], delta_at: int,
                 wide: bool, unpack: struct.Struct, cuts: tuple[int, int, int, int]) -> None:
        self.size = size  # the record's bytes, framing included
        self.checks = checks  # (offset in the record, the byte there) for every fixed byte
        self.delta_at = delta_at  # offset of the offset delta in the record
        self.wide = wide  # a two-byte offset delta (records 64-8191), else one byte
        self.unpack = unpack  # the record's fields: partition, topic, the arrays' items, ...
        self.cuts = cuts  # where each array's items end in what ``unpack`` gives

    @staticmethod
    def of(buf: bytes, p: int, delta_at: int, key_at: int, value_at: int, stop: int,
           i: int) -> _Run | None:
        """The layout of the PartitionRecord ``i`` at ``p`` (parts found by ``_record_at``)
        if it is the common one (see the module docstring), else None."""
        wide = key_at - delta_at == 2
        if key_at - delta_at != (2 if i >= 64 else 1) or i >= MAX_RUN_DELTA:
            return None  # not the shortest encoding of the delta: one at a time
        v = value_at - p  # the value's offset in the record
        value = buf[value_at:stop - 1]
        if buf[value_at + 2] != 0:  # version 0
            return None
        counts, at, arrays = [], 23, []  # the four arrays: replicas, isr, removing, adding
        for nullable in (False, False, True, True):
            if at >= len(value):
                return None
            b = value[at]
            if b >= 0x80 or (b == 0 and not nullable):
                return None
            n = b - 1 if b else 0
            counts.append(n)
            arrays.append(at)
            at += 1 + 4 * n
        size = stop - p
        if len(value) != at + 13 or value[-1] != 0:  # three int32s, no tagged field
            return None
        r, n_isr, n_rm, n_ad = counts
        unpack = struct.Struct(f">{v + 3}xi16sx{r}ix{n_isr}ix{n_rm}ix{n_ad}i3i2x")
        if unpack.size != size:
            return None
        d = delta_at - p
        fixed = [v + 1]  # the record type first: it ends a run at the next TopicRecord
        fixed += [o for o in range(v + 3) if o != v + 1 and not d <= o < d + 1 + wide]
        fixed += [v + a for a in arrays] + [v + len(value) - 1, size - 1]
        checks = tuple((o, buf[p + o:p + o + 1]) for o in fixed)
        a = 2 + r
        cuts = (a, a + n_isr, a + n_isr + n_rm, a + n_isr + n_rm + n_ad)
        return _Run(size, checks, d, wide, unpack, cuts)

    def length(self, buf: bytes, p: int, i: int, count: int, end: int) -> int:
        """How many records from record ``i`` at ``p`` have this layout (0 if that one
        has not), every byte of the layout that holds no field compared."""
        size = self.size
        if self.wide != (i >= 64):
            return 0
        m = min(count - i, (MAX_RUN_DELTA if self.wide else 64) - i, (end - p) // size)
        for o, byte in self.checks:
            if m <= 0:
                return 0
            column = buf[p + o:p + o + size * m:size]
            m -= len(column.lstrip(byte))
        if m <= 0:
            return 0
        d = p + self.delta_at
        if self.wide:
            m = min(_same(buf[d:d + size * m:size], _DELTA_LO[i:i + m]),
                    _same(buf[d + 1:d + 1 + size * m:size], _DELTA_HI[i:i + m]))
        else:
            m = _same(buf[d:d + size * m:size], _DELTA_1[i:i + m])
        return m

    def apply(self, image: MetadataImage, buf: bytes, p: int, m: int) -> None:
        """Apply the ``m`` records at ``p`` (``length`` said they have this layout)."""
        columns: list[Any] = list(zip(*self.unpack.iter_unpack(
            memoryview(buf)[p:p + m * self.size]), strict=True))
        topic_ids = columns[1]
        if topic_ids.count(topic_ids[0]) != m:
            raise NotFast("a run of PartitionRecords of more than one topic")
        a, b, c, d = self.cuts
        lists = [tuple(zip(*columns[lo:hi], strict=True)) if hi > lo else ((),) * m
                 for lo, hi in ((2, a), (a, b), (b, c), (c, d))]
        if not image.apply_partitions(topic_ids[0], columns[0], *lists, columns[d],
                                      columns[d + 1], columns[d + 2]):
            raise NotFast("PartitionRecords of an unknown topic")


def _same(got: bytes, want: bytes) -> int:
    """How many leading bytes of ``got`` and ``want`` are equal."""
    if got == want:
        return len(want)
    return next((k for k, (x, y) in enumerate(zip(got, want, strict=False)) if x != y),
                min(len(got), len(want)))
