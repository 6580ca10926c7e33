"""One voter of the Raft world: its disk (the log's batches, how much of them is flushed, the
quorum-state, the latest snapshot with its contents), its process (the ``RaftNode``, the
timers it armed, the flush it asked for, a snapshot being fetched) and its state machine
(what it applied at each offset).

An *entry* is ``(epoch, record)``: what one offset of the log holds. The log is a tuple of
``Batch``es from ``log_start`` (after a snapshot, or what ``DeleteBefore`` left) to the log
end; the first ``durable_end`` offsets are flushed, the rest is the volatile tail a crash
loses. Every method here is a pure step on this record; the world (``world.py``) decides
when to take it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, OffsetAndEpoch
from fsm.raft.roles import RaftRole

Entry = tuple[int, Any]
"""(epoch, record) at one offset."""


class Snapshot(NamedTuple):
    """A snapshot's id and its contents: the entries at offsets ``0 .. id.offset - 1``."""

    id: OffsetAndEpoch
    entries: tuple[Entry, ...]


class WorldError(AssertionError):
    """A core asked the world for something impossible (an append that is not at the log
    end, a truncation below the log start, a snapshot chunk of a snapshot it does not have):
    the search reports it as a raising step."""


@dataclass(slots=True)
class Voter:
    node_id: int
    node: Any = None  # the RaftNode; None while crashed
    # -- disk
    log: tuple[Batch, ...] = ()
    log_start: int = 0
    durable_end: int = 0
    quorum: QuorumState = QuorumState()
    snapshot: Snapshot | None = None
    # -- process (lost on a crash)
    flushes: tuple[int, ...] = ()  # the Flushes asked for and not yet done, in order
    timers: frozenset[tuple[str, int]] = frozenset()
    role: RaftRole | None = None  # from RoleChanged
    epoch: int = 0
    leader: int = -1
    hw: int = 0  # the last HighWatermark
    cursor: int = 0  # the state machine has applied offsets below this
    incoming: Snapshot | None = None  # a snapshot being fetched (its chunks so far)
    heard: int = 0  # the highest epoch a message delivered to this process carried
    # -- history (kept across crashes: what the state machine ever applied, by offset)
    applied: tuple[Entry, ...] = ()
    # -- memo (no part of the state): the key and the invariants' facts, cleared whenever
    # the world takes the voter to change it (``RaftWorld._own``)
    memo_key: Any = field(default=None, compare=False, repr=False)
    memo_facts: Any = field(default=None, compare=False, repr=False)

    def copy(self) -> Voter:
        """An independent copy (the node copies itself; every other field is a value)."""
        other = object.__new__(Voter)
        for name in _FIELDS:
            object.__setattr__(other, name, getattr(self, name))
        other.node = self.node.copy() if self.node is not None else None
        return other

    def __getstate__(self) -> tuple:
        """Pickled without the memos: a key is a hash of this process (Spark computes keys
        where the world lands)."""
        return tuple(None if n in _MEMOS else getattr(self, n) for n in _FIELDS)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(_FIELDS, state, strict=True):
            object.__setattr__(self, name, value)

    @property
    def alive(self) -> bool:
        return self.node is not None

    @property
    def end(self) -> int:
        return self.log[-1].end_offset if self.log else self.log_start

    # -- reading ---------------------------------------------------------------------------
    def entries(self, durable_only: bool = False) -> dict[int, Entry]:
        """Offset -> entry of everything this voter holds: its snapshot's contents, then its
        log (only the flushed part when ``durable_only``)."""
        out: dict[int, Entry] = {}
        if self.snapshot is not None:
            out.update(enumerate(self.snapshot.entries))
        limit = self.durable_end if durable_only else self.end
        for b in self.log:
            for i, r in enumerate(b.records):
                o = b.base_offset + i
                if o >= limit:
                    return out
                out[o] = (b.epoch, r)
        return out

    def entry(self, offset: int) -> Entry:
        for b in self.log:
            if b.base_offset <= offset < b.end_offset:
                return b.epoch, b.records[offset - b.base_offset]
        if self.snapshot is not None and offset < self.snapshot.id.offset:
            return self.snapshot.entries[offset]
        raise WorldError(f"voter {self.node_id} holds no entry at offset {offset} "
                         f"(log {self.log_start}..{self.end})")

    def summary(self) -> LogSummary:
        """What a restarted node knows of its durable log."""
        epochs: list[tuple[int, int]] = []
        end = self.log_start
        for b in self.log:
            if b.base_offset >= self.durable_end:
                break
            if not epochs or epochs[-1][0] != b.epoch:
                epochs.append((b.epoch, b.base_offset))
            end = b.end_offset
        return LogSummary(end, tuple(epochs), self.log_start,
                          None if self.snapshot is None else self.snapshot.id)

    # -- the disk's steps ------------------------------------------------------------------
    def append(self, batches: tuple[Batch, ...]) -> None:
        end = self.end
        for b in batches:
            if b.base_offset != end or not b.records:
                raise WorldError(f"voter {self.node_id} appended a batch at {b.base_offset} "
                                 f"with {len(b.records)} records; its log ends at {end}")
            end = b.end_offset
        self.log += batches

    def truncate(self, offset: int) -> None:
        if offset < self.log_start:
            raise WorldError(f"voter {self.node_id} truncated to {offset}, below its log "
                             f"start {self.log_start}")
        kept = []
        for b in self.log:
            if b.end_offset <= offset:
                kept.append(b)
            elif b.base_offset < offset:
                kept.append(replace(b, records=b.records[:offset - b.base_offset]))
        self.log = tuple(kept)
        self.durable_end = min(self.durable_end, offset)
        self.flushes = tuple(min(f, offset) for f in self.flushes)

    def flush(self) -> int:
        """The oldest Flush asked for: durable up to what it asked (a truncation since cut
        it short). Its end, as asked, for the ``Flushed`` answer."""
        asked, self.flushes = self.flushes[0], self.flushes[1:]
        self.durable_end = max(self.durable_end, min(asked, self.end))
        return asked

    def install(self, snapshot_id: OffsetAndEpoch) -> Snapshot:
        got = self.incoming
        if got is None or got.id != snapshot_id or len(got.entries) != snapshot_id.offset:
            raise WorldError(f"voter {self.node_id} installs snapshot {tuple(snapshot_id)} "
                             f"but fetched {None if got is None else tuple(got.id)} "
                             f"({0 if got is None else len(got.entries)} entries)")
        self.snapshot = got
        self.incoming = None
        self.log = ()
        self.log_start = self.durable_end = snapshot_id.offset
        self.flushes = tuple(min(f, snapshot_id.offset) for f in self.flushes)
        return got

    def delete_before(self, offset: int) -> None:
        if self.snapshot is None or offset > self.snapshot.id.offset:
            raise WorldError(f"voter {self.node_id} deletes its log below {offset} without "
                             f"a snapshot covering it")
        self.log = tuple(b for b in self.log if b.end_offset > offset)
        self.log_start = max(self.log_start, offset)
        self.durable_end = max(self.durable_end, self.log_start)

    def read(self, from_offset: int, to_offset: int, max_batches: int) -> tuple[Batch, ...]:
        """The batches from ``from_offset`` (a batch boundary) below ``to_offset``."""
        if from_offset == self.end or from_offset >= to_offset:
            return ()
        out = []
        for b in self.log:
            if b.end_offset <= from_offset:
                continue
            if not out and b.base_offset != from_offset:
                raise WorldError(f"voter {self.node_id} reads from {from_offset}, not a "
                                 f"batch boundary")
            if b.base_offset >= to_offset or len(out) >= max_batches:
                break
            out.append(b)
        if not out:
            raise WorldError(f"voter {self.node_id} reads from {from_offset}; its log is "
                             f"{self.log_start}..{self.end}")
        return tuple(out)

    def crash(self) -> None:
        """The process is gone: the unflushed tail, the timers and everything volatile."""
        self.truncate(self.durable_end)
        self.node = None
        self.flushes = ()
        self.timers = frozenset()
        self.role, self.epoch, self.leader = None, 0, -1
        self.hw = self.cursor = self.heard = 0
        self.incoming = None

    def key(self) -> int:
        """Everything this voter holds, its node's canonical key included, hashed (memoised:
        the world's key hashes the voters' hashes)."""
        if self.memo_key is None:
            from model_check.raft.nodes import node_key

            self.memo_key = hash((self.log, self.log_start, self.durable_end, self.quorum,
                             self.snapshot, self.flushes, tuple(sorted(self.timers)), self.role,
                             self.epoch, self.leader, self.hw, self.cursor, self.incoming,
                             self.heard, self.applied, node_key(self.node)))
        return self.memo_key


_FIELDS = tuple(f.name for f in fields(Voter))
_MEMOS = frozenset({"memo_key", "memo_facts"})
