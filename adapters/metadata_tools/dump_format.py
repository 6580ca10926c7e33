"""What ``kcontrol dump-log --cluster-metadata-decoder`` prints for the bytes of one file of
``__cluster_metadata-0`` -- a segment (``%020d.log``) or a snapshot (``%020d-%010d.checkpoint``)
-- in the shape of Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``), pure: bytes in, lines
out.

Kafka's shape, as its ``DumpLogSegments`` prints it (Kafka 3.9/4.0 sources):

* ``Dumping <file>``, then ``Log starting offset: <base>`` for a segment or ``Snapshot end
  offset: <offset>, epoch: <epoch>`` for a snapshot;
* per batch: ``baseOffset: .. lastOffset: .. count: .. baseSequence: -1 lastSequence: -1
  producerId: -1 producerEpoch: -1 partitionLeaderEpoch: E isTransactional: false isControl: B
  deleteHorizonMs: OptionalLong.empty position: P CreateTime: <maxTimestamp> size: S magic: 2
  compresscodec: none crc: C isvalid: true``;
* per record: ``| offset: O CreateTime: T keySize: K valueSize: V sequence: -1 headerKeys: []``
  followed, for a metadata record, by `` payload: {"type":"..","version":N,"data":{..}}``
  (``fsm.kraft.records.json_form``, at the version the record's frame names); for a control
  record by `` SnapshotHeader {"version":0,"lastContainedLogTimestamp":T}``, `` SnapshotFooter
  {"version":0}``, or -- Kafka prints no JSON for it -- `` controlType: LEADER_CHANGE(2)``.
  With ``skip_record_metadata`` (Kafka's ``--skip-record-metadata``) a metadata record's line
  is just `` payload: {..}`` and a control record's is empty.

``json_lines`` is our convenience (``--json``): one JSON object per record, with the batch's
offsets, epoch and position beside the record's type, version and data.

Kafka prints ``isvalid: false`` for a bad CRC and carries on; this module stops at the first
bad byte -- a short header, a batch running past the end (a torn write), a CRC mismatch, a
record that does not fill its batch or does not decode, offsets that do not follow on -- and
raises :class:`DumpError` with the byte position in the file; the lines before it were
already yielded, so the caller prints what decoded and then the error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from adapters.raft_log.batch_format import (
    COMPRESSION_MASK,
    HEADER_BYTES,
    BatchHeader,
    crc_matches,
    read_header,
)
from adapters.raft_log.control_records import (
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    SnapshotFooter,
    SnapshotHeader,
    decode_control,
)
from adapters.raft_log.errors import MalformedBatch
from adapters.raft_log.snapshots import parse_snapshot_name
from adapters.raft_log.varints import read_varint
from fsm.kraft.records.codec import decode_record
from fsm.kraft.records.errors import MalformedRecord
from fsm.kraft.records.json_form import _struct_to_json
from fsm.kraft.records.schema import BY_CLASS
from fsm.raft.messages import LeaderChange

MAX_BATCH_BYTES = 16 << 20
"""A header announcing a larger batch is corrupt (the log's own bound)."""
TRANSACTIONAL_FLAG = 0x10
LOG_APPEND_TIME_FLAG = 0x08
DELETE_HORIZON_FLAG = 0x40
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CONTROL_NAMES = {0: "ABORT", 1: "COMMIT", LEADER_CHANGE: "LEADER_CHANGE",
                 SNAPSHOT_HEADER: "SNAPSHOT_HEADER", SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
SEGMENT, SNAPSHOT = "segment", "snapshot"


class DumpError(Exception):
    """The first byte of a file that does not decode: its position in the file, the offset
    of the batch or record there, and what is wrong."""

    def __init__(self, position: int, offset: int, reason: str) -> None:
        super().__init__(f"corrupt at byte {position} (offset {offset}): {reason}")
        self.position, self.offset, self.reason = position, offset, reason


@dataclass(frozen=True, slots=True)
class FileKind:
    """What a file's name says: a segment and its base offset, or a snapshot and its id."""

    kind: str
    offset: int
    epoch: int = -1

    def header_line(self) -> str:
        if self.kind == SEGMENT:
            return f"Log starting offset: {self.offset}"
        return f"Snapshot end offset: {self.offset}, epoch: {self.epoch}"


def file_kind(name: str) -> FileKind:
    """The kind of ``name`` (a base name); ``ValueError`` saying what a name should be."""
    if name.endswith(".log"):
        stem = name[:-len(".log")]
        if stem.isdigit():
            return FileKind(SEGMENT, int(stem))
        raise ValueError(f"{name}: a segment is named by its base offset, like "
                         "00000000000000000000.log")
    if name.endswith(".checkpoint"):
        snap = parse_snapshot_name(name)
        if snap is None:
            raise ValueError(f"{name}: a snapshot is named <end offset %020d>-<epoch %010d>"
                             ".checkpoint")
        return FileKind(SNAPSHOT, snap.offset, snap.epoch)
    raise ValueError(f"{name}: not a metadata log file (.log segment or .checkpoint "
                     "snapshot)")


@dataclass(frozen=True, slots=True)
class RecordView:
    """One record of a batch as it is on disk."""

    position: int  # in the file
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    header_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BatchView:
    position: int
    header: BatchHeader
    records: tuple[RecordView, ...]


# -- reading -------------------------------------------------------------------------------------
def batches(data: bytes, start_offset: int = 0) -> Iterator[BatchView]:
    """Every batch of ``data`` with its records, checked; :class:`DumpError` at the first bad
    byte (after yielding every batch before it). ``start_offset``: where the first batch must
    start (a segment's base offset; 0 for a snapshot)."""
    pos, expected = 0, start_offset
    size = len(data)
    while pos < size:
        if size - pos < HEADER_BYTES:
            raise DumpError(pos, expected, f"{size - pos} bytes left, a batch header is "
                                           f"{HEADER_BYTES} (a torn write?)")
        try:
            header = read_header(data, pos)
        except MalformedBatch as exc:
            raise DumpError(pos + exc.position, expected, exc.reason) from None
        if header.size > MAX_BATCH_BYTES:
            raise DumpError(pos + 8, expected, f"batch of {header.size} bytes, over the bound "
                                               f"of {MAX_BATCH_BYTES}")
        if pos + header.size > size:
            raise DumpError(pos, header.base_offset,
                            f"batch of {header.size} bytes runs past the end of the file "
                            f"({size} bytes; a torn write?)")
        if header.base_offset != expected:
            raise DumpError(pos, header.base_offset, f"batch at offset {header.base_offset}, "
                                                     f"expected {expected}")
        if not crc_matches(data, pos, header):
            raise DumpError(pos + 17, header.base_offset, "CRC-32C mismatch")
        codec = header.attributes & COMPRESSION_MASK
        if codec:
            raise DumpError(pos + 21, header.base_offset, f"compression "
                            f"{COMPRESSION_NAMES.get(codec, codec)} is not supported")
        yield BatchView(pos, header, tuple(_records(data, pos, header)))
        pos, expected = pos + header.size, header.end_offset


def _records(data: bytes, at: int, h: BatchHeader) -> Iterator[RecordView]:
    end = at + h.size
    p = at + HEADER_BYTES
    for i in range(h.count):
        start = p
        try:
            length, p = read_varint(data, p, end)
            stop = p + length
            if length < 6 or stop > end:
                raise ValueError(f"record length {length} does not fit the batch")
            p += 1  # attributes
            ts_delta, p = read_varint(data, p, stop)
            delta, p = read_varint(data, p, stop)
            if delta != i:
                raise ValueError(f"record {i} has offset delta {delta}")
            key, p = _bytes(data, p, stop)
            value, p = _bytes(data, p, stop)
            count, p = read_varint(data, p, stop)
            if count < 0:
                raise ValueError(f"{count} headers")
            keys = []
            for _ in range(count):
                hkey, p = _bytes(data, p, stop)
                _, p = _bytes(data, p, stop)
                keys.append((hkey or b"").decode("utf-8", "replace"))
            if p != stop:
                raise ValueError(f"record {i} does not fill its length {length}")
        except (ValueError, IndexError) as exc:
            raise DumpError(start, h.base_offset + i, str(exc) or "a record runs past the "
                            "batch") from None
        yield RecordView(start, h.base_offset + i, h.base_timestamp + ts_delta, key, value,
                         tuple(keys))
    if p != end:
        raise DumpError(p, h.base_offset + h.count - 1, f"{end - p} bytes after the last "
                                                        "record of the batch")


def _bytes(data: bytes, p: int, stop: int) -> tuple[bytes | None, int]:
    n, p = read_varint(data, p, stop)
    if n == -1:
        return None, p
    if n < 0 or p + n > stop:
        raise ValueError(f"length {n} does not fit the record")
    return data[p:p + n], p + n


# -- decoding one record ------------------------------------------------------------------------
def metadata_json(value: bytes | None, offset: int, position: int) -> dict[str, Any]:
    """``{"type", "version", "data"}`` of a metadata record's value, at the version its frame
    names; :class:`DumpError` if it does not decode."""
    if value is None:
        raise DumpError(position, offset, "a metadata record with a null value")
    try:
        record = decode_record(value)
    except MalformedRecord as exc:
        raise DumpError(position, offset, f"metadata record: {exc}") from None
    schema = BY_CLASS[type(record)]
    version = _frame_version(value)  # the record decoded: its frame is whole
    return {"type": schema.json_type, "version": version,
            "data": _struct_to_json(schema.struct, record, version)}


def _frame_version(value: bytes) -> int:
    """The version of a framed record (three unsigned varints: frame, type, version)."""
    p = 0
    got = []
    for _ in range(3):
        shift = n = 0
        while True:
            b = value[p]
            p += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        got.append(n)
    return got[2]


def control_type(key: bytes | None) -> int:
    """The type id of a control record's key (-1 if the key is not one)."""
    if key is None or len(key) != 4:
        return -1
    return int.from_bytes(key[2:4], "big", signed=True)


def control_json(r: RecordView) -> tuple[str, dict[str, Any]]:
    """(Kafka's name for the control record's type, its JSON); :class:`DumpError` if it does
    not decode."""
    try:
        record = decode_control(r.key, r.value)
    except ValueError as exc:
        raise DumpError(r.position, r.offset, f"control record: {exc}") from None
    if isinstance(record, SnapshotHeader):
        return "SnapshotHeader", {"version": 0, "lastContainedLogTimestamp":
                                  record.last_contained_log_timestamp}
    if isinstance(record, SnapshotFooter):
        return "SnapshotFooter", {"version": 0}
    assert isinstance(record, LeaderChange)
    return "LeaderChange", {"version": 0, "leaderId": record.leader_id,
                            "voters": [{"voterId": v} for v in record.voters],
                            "grantingVoters": [{"voterId": v} for v in record.granting_voters]}


# -- Kafka's text ---------------------------------------------------------------------------
def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def batch_line(b: BatchView) -> str:
    h = b.header
    seq = h.base_sequence
    last_seq = -1 if seq == -1 else (seq + h.last_offset_delta) & 0x7FFFFFFF
    horizon = (f"OptionalLong[{h.base_timestamp}]" if h.attributes & DELETE_HORIZON_FLAG
               else "OptionalLong.empty")
    ts_type = "LogAppendTime" if h.attributes & LOG_APPEND_TIME_FLAG else "CreateTime"
    codec = COMPRESSION_NAMES.get(h.attributes & COMPRESSION_MASK, "unknown")
    return (f"baseOffset: {h.base_offset} lastOffset: {h.end_offset - 1} count: {h.count} "
            f"baseSequence: {seq} lastSequence: {last_seq} producerId: {h.producer_id} "
            f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.epoch} "
            f"isTransactional: {_bool(h.attributes & TRANSACTIONAL_FLAG)} "
            f"isControl: {_bool(h.control)} deleteHorizonMs: {horizon} "
            f"position: {b.position} {ts_type}: {h.max_timestamp} size: {h.size} "
            f"magic: {h.magic} compresscodec: {codec} crc: {h.crc} isvalid: true")


def _bool(flag: object) -> str:
    return "true" if flag else "false"


def record_line(b: BatchView, r: RecordView, *, skip_record_metadata: bool = False) -> str:
    h = b.header
    parts: list[str] = []
    if not skip_record_metadata:
        ts_type = "LogAppendTime" if h.attributes & LOG_APPEND_TIME_FLAG else "CreateTime"
        seq = (-1 if h.base_sequence == -1
               else (h.base_sequence + r.offset - h.base_offset) & 0x7FFFFFFF)
        key_size = -1 if r.key is None else len(r.key)
        value_size = -1 if r.value is None else len(r.value)
        parts.append(f"| offset: {r.offset} {ts_type}: {r.timestamp} keySize: {key_size} "
                     f"valueSize: {value_size} sequence: {seq} "
                     f"headerKeys: [{','.join(r.header_keys)}]")
        if h.control:
            kind = control_type(r.key)
            if kind in (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER):
                name, obj = control_json(r)
                if kind == LEADER_CHANGE:
                    parts.append(f" controlType: LEADER_CHANGE({kind})")
                else:
                    parts.append(f" {name} {_compact(obj)}")
            else:
                parts.append(f" controlType: {CONTROL_NAMES.get(kind, 'UNKNOWN')}({kind})")
    if not h.control:
        parts.append(f" payload: {_compact(metadata_json(r.value, r.offset, r.position))}")
    return "".join(parts)


def dump_lines(data: bytes, kind: FileKind, *, deep: bool = True,
               skip_record_metadata: bool = False) -> Iterator[str]:
    """Kafka's lines for a file's bytes after its ``Dumping`` line: the kind's header line,
    then per batch its line and (``deep``: what a decoder option turns on in Kafka) its
    records' lines; :class:`DumpError` at the first bad byte, after every line before it."""
    yield kind.header_line()
    start = kind.offset if kind.kind == SEGMENT else 0
    for b in batches(data, start):
        yield batch_line(b)
        if not deep:
            continue
        for r in b.records:
            yield record_line(b, r, skip_record_metadata=skip_record_metadata)


# -- our JSON lines -------------------------------------------------------------------------
def record_object(b: BatchView, r: RecordView) -> dict[str, Any]:
    """One record as ``--json`` prints it."""
    h = b.header
    out: dict[str, Any] = {"offset": r.offset, "batchBaseOffset": h.base_offset,
                           "batchPosition": b.position, "epoch": h.epoch,
                           "timestamp": r.timestamp, "control": h.control}
    if h.control:
        kind = control_type(r.key)
        if kind in (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER):
            _, obj = control_json(r)
            out.update(type=CONTROL_NAMES[kind], version=obj.pop("version"), data=obj)
        else:
            out.update(type=CONTROL_NAMES.get(kind, "UNKNOWN"), version=None, data=None)
    else:
        out.update(metadata_json(r.value, r.offset, r.position))
    return out


def json_lines(data: bytes, kind: FileKind, source: str) -> Iterator[str]:
    """One compact JSON object per record (control records included), each naming its file
    (``source``); :class:`DumpError` at the first bad byte, after every line before it."""
    start = kind.offset if kind.kind == SEGMENT else 0
    for b in batches(data, start):
        for r in b.records:
            yield _compact({"file": source, **record_object(b, r)})
