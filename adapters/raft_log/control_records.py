"""Kafka's control records of the metadata log and its snapshots: the key is int16 version
(0) and int16 type; the value is the message of that type, flexible version 0, which starts
with its own int16 ``Version`` field (0) -- Kafka's ``ControlRecordUtils``.

* LEADER_CHANGE (2): ``LeaderChangeMessage`` -- LeaderId int32, Voters and GrantingVoters as
  compact arrays of {VoterId int32}; ours is ``fsm.raft.messages.LeaderChange``.
* SNAPSHOT_HEADER (3): ``SnapshotHeaderRecord`` -- LastContainedLogTimestamp int64.
* SNAPSHOT_FOOTER (4): ``SnapshotFooterRecord`` -- nothing more.

Every struct ends with an empty tagged-field section; on decode, tagged fields are skipped."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from fsm.kraft.records.wire import write_uvarint
from fsm.raft.messages import LeaderChange

LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
_KEY = struct.Struct(">hh")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
MAX_VOTERS = 1 << 16


@dataclass(frozen=True, slots=True)
class SnapshotHeader:
    last_contained_log_timestamp: int


@dataclass(frozen=True, slots=True)
class SnapshotFooter:
    pass


ControlRecord = LeaderChange | SnapshotHeader | SnapshotFooter


def encode_control(record: ControlRecord) -> tuple[bytes, bytes]:
    """The key and value of a control record."""
    out = bytearray(_I16.pack(0))  # the message's Version field
    if isinstance(record, LeaderChange):
        kind = LEADER_CHANGE
        out += _I32.pack(record.leader_id)
        for voters in (record.voters, record.granting_voters):
            write_uvarint(out, len(voters) + 1)
            for v in voters:
                out += _I32.pack(v)
                out.append(0)  # the voter's tagged fields
    elif isinstance(record, SnapshotHeader):
        kind = SNAPSHOT_HEADER
        out += _I64.pack(record.last_contained_log_timestamp)
    elif isinstance(record, SnapshotFooter):
        kind = SNAPSHOT_FOOTER
    else:
        raise TypeError(f"not a control record: {type(record).__name__}")
    out.append(0)  # tagged fields
    return _KEY.pack(0, kind), bytes(out)


def decode_control(key: bytes | None, value: bytes | None) -> ControlRecord:
    """The control record of ``key`` and ``value``; ``ValueError`` saying what is wrong."""
    if key is None or len(key) != _KEY.size:
        raise ValueError(f"a control record key is 4 bytes, not {key!r}")
    version, kind = _KEY.unpack(key)
    if version != 0:
        raise ValueError(f"control record key version {version}, not 0")
    if value is None:
        raise ValueError(f"control record type {kind} has a null value")
    r = _Reader(value)
    message_version = r.unpack(_I16)
    if message_version != 0:
        raise ValueError(f"control record type {kind}: message version {message_version}")
    record: ControlRecord
    if kind == LEADER_CHANGE:
        leader = r.unpack(_I32)
        voters, granting = r.voters(), r.voters()
        record = LeaderChange(leader, voters, granting)
    elif kind == SNAPSHOT_HEADER:
        record = SnapshotHeader(r.unpack(_I64))
    elif kind == SNAPSHOT_FOOTER:
        record = SnapshotFooter()
    else:
        raise ValueError(f"unknown control record type {kind}")
    r.tagged_fields()
    if r.pos != len(value):
        raise ValueError(f"control record type {kind}: {len(value) - r.pos} trailing bytes")
    return record


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def unpack(self, s: struct.Struct) -> int:
        if self.pos + s.size > len(self.data):
            raise ValueError(f"control record value ends at {len(self.data)}, "
                             f"{s.size} bytes expected at {self.pos}")
        (v,) = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return int(v)

    def uvarint(self) -> int:
        value = shift = 0
        for _ in range(5):
            if self.pos >= len(self.data):
                raise ValueError("control record value ends inside a varint")
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
        raise ValueError("unsigned varint over 5 bytes in a control record")

    def voters(self) -> tuple[int, ...]:
        n = self.uvarint() - 1
        if not 0 <= n <= MAX_VOTERS:
            raise ValueError(f"voter array of length {n}")
        out = []
        for _ in range(n):
            out.append(self.unpack(_I32))
            self.tagged_fields()
        return tuple(out)

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            size = self.uvarint()
            if self.pos + size > len(self.data):
                raise ValueError("a tagged field runs past the control record's end")
            self.pos += size
