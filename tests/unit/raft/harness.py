"""A small in-test cluster for the Raft core: a dict of nodes, each driven by the real
``RaftDriver`` over a port that keeps its log in memory (a durable prefix and a volatile tail),
a bag of messages in flight, the timers each node armed, and ghost records of every leader
elected and every entry committed. Tests pick the steps (deliver, drop, duplicate, fire a
timer, flush, crash, restart, append, snapshot, resign); the harness checks on every step that
no epoch has two leaders and no committed entry is lost. Tests only: the model checker's world
is ``model_check/raft``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsm.raft.config import RaftConfig
from fsm.raft.core import RaftNode
from fsm.raft.driver import RaftDriver
from fsm.raft.effects import (
    AppendBatches,
    AppendRefused,
    ArmTimer,
    CancelTimer,
    DeleteBefore,
    Flush,
    HighWatermark,
    InstallSnapshot,
    PersistQuorumState,
    RoleChanged,
    Send,
    SendRecords,
    SendSnapshotChunk,
    TruncateTo,
)
from fsm.raft.events import ClientAppend, Flushed, Received, Resign, SnapshotWritten, Start
from fsm.raft.events import TimerFired as Fire
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, OffsetAndEpoch
from fsm.raft.roles import RaftRole

MAX_IN_FLIGHT = 40
"""Messages in the bag at most: a send past it is lost (Raft resends)."""

SNAPSHOT_CHUNK = 2
"""Entries per FetchSnapshot chunk."""


class SafetyViolation(AssertionError):
    pass


@dataclass
class Disk:
    """One node's storage: its log as batches (``flushed`` offsets of it durable), its
    quorum-state, its snapshot (id and the entries it covers)."""

    batches: list[Batch] = field(default_factory=list)
    flushed: int = 0
    log_start: int = 0
    quorum: QuorumState = QuorumState()
    snapshot: OffsetAndEpoch | None = None
    snapshot_entries: tuple[tuple[int, Any], ...] = ()  # (epoch, record) per offset below
    flush_queue: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.batches[-1].end_offset if self.batches else self.log_start

    def entry(self, offset: int) -> tuple[int, Any] | None:
        if offset < self.log_start:
            return self.snapshot_entries[offset] if offset < len(self.snapshot_entries) else None
        for b in self.batches:
            if b.base_offset <= offset < b.end_offset:
                return (b.epoch, b.records[offset - b.base_offset])
        return None

    def durable_entry(self, offset: int) -> tuple[int, Any] | None:
        return self.entry(offset) if offset < max(self.flushed, self.log_start) else None

    def summary(self) -> LogSummary:
        epochs: list[tuple[int, int]] = []
        if self.snapshot is not None:
            epochs.append((self.snapshot.epoch, self.snapshot.offset))
        for b in self.batches:
            if not epochs or epochs[-1][0] != b.epoch:
                epochs.append((b.epoch, b.base_offset))
        return LogSummary(self.end, tuple(epochs), self.log_start, self.snapshot)

    def crash(self) -> None:
        self.batches = [b for b in self.batches if b.end_offset <= self.flushed]
        self.flush_queue.clear()


class Port:
    """The shell of one node in the harness: carries out its effects on its ``Disk`` and the
    cluster's bag and timers."""

    def __init__(self, cluster: Cluster, node_id: int) -> None:
        self.c, self.id = cluster, node_id

    @property
    def disk(self) -> Disk:
        return self.c.disks[self.id]

    def persist_quorum_state(self, e: PersistQuorumState) -> None:
        self.c.check_persist_before_send(self.id)
        self.disk.quorum = e.state

    def append_batches(self, e: AppendBatches) -> None:
        assert e.batches[0].base_offset == self.disk.end, (self.id, e, self.disk.end)
        self.disk.batches.extend(e.batches)

    def flush(self, e: Flush) -> None:
        self.disk.flush_queue.append(e.end_offset)

    def truncate_to(self, e: TruncateTo) -> None:
        d = self.disk
        assert any(b.base_offset == e.offset for b in d.batches) or e.offset == d.end
        d.batches = [b for b in d.batches if b.base_offset < e.offset]
        d.flushed = min(d.flushed, e.offset)

    def install_snapshot(self, e: InstallSnapshot) -> None:
        d = self.disk
        d.snapshot, d.log_start, d.batches = e.snapshot_id, e.snapshot_id.offset, []
        d.snapshot_entries = self.c.snapshots[e.snapshot_id]
        d.flushed = e.snapshot_id.offset
        self.c.applied_to(self.id, e.snapshot_id.offset)

    def delete_before(self, e: DeleteBefore) -> None:
        d = self.disk
        d.batches = [b for b in d.batches if b.end_offset > e.offset]
        d.log_start = e.offset

    def send(self, e: Send) -> None:
        self.c.post(self.id, e.destination, e.message)

    def send_records(self, e: SendRecords) -> None:
        out = [b for b in self.disk.batches if e.from_offset <= b.base_offset
               and b.end_offset <= e.to_offset][: e.max_batches]
        assert not out or out[0].base_offset == e.from_offset, (self.id, e)
        self.c.post(self.id, e.destination, _replace(e.response, batches=tuple(out)))

    def send_snapshot_chunk(self, e: SendSnapshotChunk) -> None:
        entries = self.c.snapshots[e.response.snapshot_id]
        pos = e.response.position
        chunk = entries[pos:pos + SNAPSHOT_CHUNK]
        self.c.post(self.id, e.destination,
                    _replace(e.response, size=len(entries), chunk=chunk))

    def arm_timer(self, e: ArmTimer) -> None:
        self.c.timers.add((self.id, e.kind, e.destination))

    def cancel_timer(self, e: CancelTimer) -> None:
        self.c.timers.discard((self.id, e.kind, e.destination))

    def role_changed(self, e: RoleChanged) -> None:
        self.c.trace.append((self.id, e))
        if e.target is RaftRole.LEADER:
            self.c.elected(self.id, e.epoch)

    def high_watermark(self, e: HighWatermark) -> None:
        self.c.applied_to(self.id, e.offset)

    def append_refused(self, e: AppendRefused) -> None:
        self.c.refused.append((self.id, e))


def _replace(msg: Any, **kw: Any) -> Any:
    from dataclasses import replace

    return replace(msg, **kw)


class Cluster:
    def __init__(self, voters: tuple[int, ...] = (1, 2, 3), observers: tuple[int, ...] = (),
                 max_batches_per_fetch: int = 64) -> None:
        self.voters = voters
        self.ids = voters + observers
        self.max_batches = max_batches_per_fetch
        self.disks = {i: Disk() for i in self.ids}
        self.nodes: dict[int, RaftNode | None] = {i: None for i in self.ids}
        self.drivers: dict[int, RaftDriver] = {}
        self.bag: list[tuple[int, int, Any]] = []
        self.timers: set[tuple[int, str, int]] = set()
        self.leaders: dict[int, int] = {}  # epoch -> leader
        self.committed: dict[int, tuple[int, Any]] = {}  # offset -> (epoch, record)
        self.applied: dict[int, int] = {i: 0 for i in self.ids}
        self.snapshots: dict[OffsetAndEpoch, tuple[tuple[int, Any], ...]] = {}
        self.trace: list[Any] = []
        self.refused: list[Any] = []
        self.records = 0
        self._sent_since_event: set[int] = set()

    # -- lifecycle ---------------------------------------------------------------------------
    def config(self, node_id: int) -> RaftConfig:
        return RaftConfig(node_id, self.voters, max_batches_per_fetch=self.max_batches)

    def start(self, node_id: int) -> None:
        d = self.disks[node_id]
        node = RaftNode(self.config(node_id), d.quorum, d.summary())
        self.nodes[node_id] = node
        self.drivers[node_id] = RaftDriver(node.handle, Port(self, node_id))
        self.applied[node_id] = d.log_start
        self.event(node_id, Start())

    def start_all(self) -> None:
        for i in self.ids:
            self.start(i)

    def crash(self, node_id: int) -> None:
        self.nodes[node_id] = None
        self.disks[node_id].crash()
        self.timers = {t for t in self.timers if t[0] != node_id}

    # -- steps -------------------------------------------------------------------------------
    def event(self, node_id: int, event: Any) -> None:
        assert self.nodes[node_id] is not None, f"node {node_id} is down"
        self._sent_since_event.discard(node_id)
        self.trace.append((node_id, event))
        self.drivers[node_id].process(event)
        self.check()

    def post(self, src: int, dst: int, msg: Any) -> None:
        self._sent_since_event.add(src)
        if len(self.bag) < MAX_IN_FLIGHT:
            self.bag.append((src, dst, msg))

    def deliver(self, i: int, keep: bool = False) -> None:
        src, dst, msg = self.bag[i] if keep else self.bag.pop(i)
        if self.nodes.get(dst) is not None:
            self.event(dst, Received(src, msg))

    def fire(self, timer: tuple[int, str, int]) -> None:
        self.timers.discard(timer)
        node_id, kind, dest = timer
        self.event(node_id, Fire(kind, dest))

    def flush(self, node_id: int, coalesce: bool = False) -> None:
        """Make the log durable and answer the oldest flush asked -- or, ``coalesce``, all of
        them with one ``Flushed`` of the largest end (as the model checker's world does)."""
        d = self.disks[node_id]
        end = max(d.flush_queue) if coalesce else d.flush_queue.pop(0)
        if coalesce:
            d.flush_queue.clear()
        d.flushed = max(d.flushed, d.end)
        self.event(node_id, Flushed(end))

    def append(self, node_id: int) -> None:
        node = self.nodes[node_id]
        assert node is not None
        self.records += 1
        self.event(node_id, ClientAppend(node.epoch, node.end_offset, (f"r{self.records}",)))

    def snapshot(self, node_id: int) -> None:
        node, d = self.nodes[node_id], self.disks[node_id]
        assert node is not None
        hw = node.high_watermark
        if hw <= d.log_start:
            return
        entries = tuple(d.entry(o) for o in range(hw))
        snap = OffsetAndEpoch(hw, entries[-1][0])
        assert self.snapshots.setdefault(snap, entries) == entries, "two snapshots, one id"
        d.snapshot, d.snapshot_entries = snap, entries
        self.event(node_id, SnapshotWritten(snap))

    def resign(self, node_id: int) -> None:
        self.event(node_id, Resign())

    def leader(self) -> int | None:
        live = [n for n in self.nodes.values() if n is not None and n.role is RaftRole.LEADER]
        return max(live, key=lambda n: n.epoch).node_id if live else None

    # -- ghost state and checks --------------------------------------------------------------
    def check_persist_before_send(self, node_id: int) -> None:
        if node_id in self._sent_since_event:
            raise SafetyViolation(f"node {node_id} persisted its quorum-state after a Send")

    def elected(self, node_id: int, epoch: int) -> None:
        if self.leaders.setdefault(epoch, node_id) != node_id:
            raise SafetyViolation(f"two leaders in epoch {epoch}: {self.leaders[epoch]} and "
                                  f"{node_id}")
        d = self.disks[node_id]
        for offset, entry in self.committed.items():
            if offset >= d.log_start and d.entry(offset) != entry:
                raise SafetyViolation(f"leader {node_id} of epoch {epoch} lacks committed "
                                      f"{offset} {entry}")

    def applied_to(self, node_id: int, hw: int) -> None:
        d = self.disks[node_id]
        for offset in range(self.applied[node_id], hw):
            entry = d.entry(offset)
            assert entry is not None, (node_id, offset, hw)
            if self.committed.setdefault(offset, entry) != entry:
                raise SafetyViolation(f"node {node_id} applies {entry} at {offset}, "
                                      f"{self.committed[offset]} was committed")
        self.applied[node_id] = max(self.applied[node_id], hw)

    def check(self) -> None:
        """Every committed entry is durable on a majority of voters."""
        for offset, entry in self.committed.items():
            holders = sum(1 for v in self.voters if self.disks[v].durable_entry(offset) == entry)
            if holders < len(self.voters) // 2 + 1:
                raise SafetyViolation(f"committed {offset} {entry} durable on {holders} voters")

    def run_until_quiet(self, steps: int = 2000, timers: bool = False) -> None:
        """Deliver everything and flush everything, in order, until nothing is left (timers
        fired only when asked, leaders' parked-fetch timers never)."""
        for _ in range(steps):
            if self.bag:
                self.deliver(0)
                continue
            pending = [i for i in self.ids if self.nodes[i] is not None
                       and self.disks[i].flush_queue]
            if pending:
                self.flush(pending[0])
                continue
            return
        raise AssertionError("no quiet after many steps: a loop")
