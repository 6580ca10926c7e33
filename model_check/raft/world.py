"""The Raft world: N voters, each a real ``RaftNode`` driven by the real ``RaftDriver`` over
this world's port, a network of messages in flight, armed timers, a disk per voter and the
state machine on top.

* **Disk** (``voter.Voter``): ``AppendBatches`` lands in the volatile tail; ``Flush`` is only
  queued -- the action ``flush v`` carries out v's oldest one (durable up to the end it
  asked) and answers it with ``Flushed``, one answer per flush, in order; so a crash can fall
  between an append and its fsync. ``PersistQuorumState``, ``TruncateTo``,
  ``InstallSnapshot`` and ``DeleteBefore`` are durable at once (the contract: before the next
  effect).
* **Network**: a bag of (source, destination, message), at most ``max_in_flight`` (a send
  beyond it is dropped, as a full socket buffer would). ``deliver`` takes any one (so
  messages overtake each other); ``lose`` and ``duplicate`` (budgets) drop or double one. A
  message to a crashed voter is dropped when it is delivered.
* **Timers**: every armed timer may fire, in any order (durations are ignored), within its
  kind's budget (``timer_budget``): election and fetch timeouts, request resends, a leader's
  parked fetches.
* **Faults**: ``crash v`` (the process, the unflushed tail and the timers are gone; the
  durable log, quorum-state and snapshot stay), ``restart v`` (a new ``RaftNode`` from what
  was durable, then ``Start``).
* **The state machine**: ``append`` hands a leader one new record; ``snapshot v`` writes
  v's applied prefix as a snapshot; ``resign`` asks a leader to step down. Each voter applies
  its log up to the high watermark its node reports.
* **Ghost state** for the invariants: every (epoch, leader) ever elected, every committed
  entry ever reported (with the epoch it was first reported in), and every time a state
  machine re-applied an offset with a different entry.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from fsm.raft import effects as fx
from fsm.raft.config import RaftConfig
from fsm.raft.events import (
    ClientAppend,
    Flushed,
    Received,
    Resign,
    SnapshotWritten,
    Start,
    TimerFired,
)
from fsm.raft.messages import FetchSnapshotResponse, OffsetAndEpoch
from fsm.raft.roles import RaftRole
from model_check.raft import nodes
from model_check.raft.scenario import RaftScenario
from model_check.raft.voter import Entry, Snapshot, Voter, WorldError

Message = tuple[int, int, Any]
"""(source, destination, message) in flight."""

TIMER_BUDGETS = {fx.ELECTION: "timeouts", fx.FETCH: "timeouts", fx.REQUEST: "resends"}
"""The budget a timer's firing spends, by kind: an election or fetch timeout (a voter stands
for election), a request resent. Any other kind (a leader's parked fetch answered at its
deadline) spends ``parked``."""


def timer_budget(kind: str) -> str:
    return TIMER_BUDGETS.get(kind, "parked")


@dataclass(frozen=True)
class RAction:
    kind: str
    target: int = 0  # a voter id, or 0
    arg: Any = None  # a message in flight, or a timer (kind, destination)

    def describe(self, scenario: RaftScenario | None = None) -> str:
        if self.kind in ("deliver", "lose", "duplicate"):
            src, dst, msg = self.arg
            return f"{self.kind} {src}->{dst} {describe_message(msg)}"
        if self.kind == "timer":
            kind, dest = self.arg
            return f"timer {kind}{'' if dest < 0 else f' to {dest}'} fires on voter " \
                   f"{self.target}"
        return f"{self.kind} voter {self.target}"


def describe_message(msg: Any) -> str:
    """``VoteRequest(candidate_epoch=2, ...)`` in one short line (batches as their ranges)."""
    if not is_dataclass(msg):
        return repr(msg)
    parts = []
    for f in fields(msg):
        v = getattr(msg, f.name)
        if f.name == "batches":
            v = "[" + " ".join(f"{b.base_offset}-{b.end_offset - 1}@{b.epoch}" for b in v) + "]"
        elif f.name == "chunk" and v is not None:
            v = f"<{len(v)} entries>"
        elif hasattr(v, "name") and not isinstance(v, str):
            v = v.name
        parts.append(f"{f.name}={v}")
    return f"{type(msg).__name__}({', '.join(parts)})"


_EPOCH_FIELDS = ("candidate_epoch", "leader_epoch", "current_leader_epoch")


def carried_epoch(msg: Any) -> int:
    """The epoch a message carries: the candidate's, the sender's as leader, or the one the
    fetcher believes current (every KIP-595 message has exactly one of these)."""
    for name in _EPOCH_FIELDS:
        epoch = getattr(msg, name, None)
        if epoch is not None:
            return int(epoch)
    return 0


def _msg_key(m: Message) -> str:
    return repr(m)


@dataclass
class RaftWorld:
    scenario: RaftScenario
    voters: dict[int, Voter] = field(default_factory=dict)
    network: tuple[tuple[str, Message], ...] = ()  # sorted by the message's repr
    budgets: dict[str, int] = field(default_factory=dict)
    appended: int = 0  # client records handed out so far (the next is "r{appended + 1}")
    dropped: int = 0  # sends dropped on a full network
    elected: frozenset[tuple[int, int]] = frozenset()  # (epoch, leader) ever
    committed: dict[tuple[int, int, Any], int] = field(default_factory=dict)
    """(offset, epoch, record) ever reported committed -> the lowest epoch it was reported in."""
    conflicts: tuple[tuple[int, int, Entry, Entry], ...] = ()
    """(voter, offset, applied before, applied now) where a state machine re-applied an
    offset with a different entry."""
    owned: set[int] = field(default_factory=set, compare=False)
    """The voters this world may change in place: its own copies. A snapshot shares every
    voter with its copy (copy on write: ``_own`` copies a shared voter before a change)."""
    reached: set[tuple[str, ...]] | None = field(default=None, compare=False)
    """What the run reached (``coverage``): the search's own set, no part of the state."""
    trace: Callable[[str, Any, Sequence[Any]], None] | None = field(default=None,
                                                                   compare=False)
    """Told of every event a core handles and its effects (``trace("v1", event, effects)``);
    no part of the state."""

    # -- construction ----------------------------------------------------------------------
    @staticmethod
    def fresh(scenario: RaftScenario, reached: set[tuple[str, ...]] | None = None
              ) -> RaftWorld:
        """Every voter with an empty disk, started."""
        w = RaftWorld(scenario, budgets=dict(scenario.budgets), reached=reached)
        for v in scenario.node_ids:
            w.voters[v] = Voter(v)
            w.owned.add(v)
        for v in scenario.node_ids:
            w._boot(v)
        return w

    def config(self, v: int) -> RaftConfig:
        return RaftConfig(node_id=v, voters=self.scenario.node_ids,
                          max_batches_per_fetch=self.scenario.max_batches_per_fetch)

    def _boot(self, v: int) -> None:
        voter = self._own(v)
        voter.node = nodes.new_node(self.config(v), voter.summary(), voter.quorum)
        voter.cursor = 0
        if voter.snapshot is not None:
            self._load(voter, voter.snapshot)
        self._event(v, Start())

    # -- snapshots -------------------------------------------------------------------------
    def snapshot(self) -> RaftWorld:
        """An independent copy: the voters are shared until either world changes one
        (``_own``); the world's other parts are values."""
        self.owned = set()
        return RaftWorld(
            scenario=self.scenario, voters=dict(self.voters),
            network=self.network, budgets=dict(self.budgets), appended=self.appended,
            dropped=self.dropped, elected=self.elected, committed=dict(self.committed),
            conflicts=self.conflicts, reached=self.reached, trace=self.trace)

    @staticmethod
    def restore(snap: RaftWorld) -> RaftWorld:
        return snap.snapshot()

    def _own(self, v: int) -> Voter:
        """Voter ``v``, this world's own to change (copied first if shared); its memos
        cleared."""
        x = self.voters[v]
        if v not in self.owned:
            x = self.voters[v] = x.copy()
            self.owned.add(v)
        x.memo_key = x.memo_facts = None
        return x

    def key(self) -> int:
        """The state's identity, hashed to 64 bits: every voter's disk, process and node
        (``Voter.key``), the network, the budgets and the ghost state."""
        canon = (tuple(x.key() for _, x in sorted(self.voters.items())),
                 tuple(k for k, _ in self.network), tuple(sorted(self.budgets.items())),
                 self.appended, self.dropped, tuple(sorted(self.elected)),
                 tuple(sorted((k[0], k[1], repr(k[2]), c) for k, c in self.committed.items())),
                 self.conflicts)
        return hash(canon)

    # -- reading ---------------------------------------------------------------------------
    def leaders(self) -> list[int]:
        return [v for v, x in sorted(self.voters.items()) if x.alive and x.role is RaftRole.LEADER]

    def pending(self) -> bool:
        """Something is on its way: a message in flight or a flush asked for."""
        return bool(self.network) or any(x.flushes for x in self.voters.values())

    # -- actions ---------------------------------------------------------------------------
    def enabled_actions(self) -> list[RAction]:
        out: list[RAction] = []
        budget = self.budgets.get
        distinct: list[Message] = []
        for _, m in self.network:
            if not distinct or distinct[-1] != m:
                distinct.append(m)
        out += [RAction("deliver", m[1], m) for m in distinct]
        for v, x in sorted(self.voters.items()):
            if x.alive and x.flushes:
                out.append(RAction("flush", v))
        for v, x in sorted(self.voters.items()):
            if not x.alive:
                continue
            for t in sorted(x.timers):
                if budget(timer_budget(t[0]), 0) > 0:
                    out.append(RAction("timer", v, t))
        if budget("appends", 0) > 0:
            out += [RAction("append", v) for v in self.leaders()]
        if budget("resigns", 0) > 0:
            out += [RAction("resign", v) for v in self.leaders()]
        if budget("snapshots", 0) > 0:
            out += [RAction("snapshot", v) for v, x in sorted(self.voters.items())
                    if x.alive and x.cursor > (x.snapshot.id.offset if x.snapshot else 0)]
        if budget("message_loss", 0) > 0:
            out += [RAction("lose", m[1], m) for m in distinct]
        if budget("duplicates", 0) > 0 and len(self.network) < self.scenario.max_in_flight:
            out += [RAction("duplicate", m[1], m) for m in distinct]
        if budget("crashes", 0) > 0:
            out += [RAction("crash", v) for v, x in sorted(self.voters.items()) if x.alive]
        if budget("restarts", 0) > 0:
            out += [RAction("restart", v) for v, x in sorted(self.voters.items())
                    if not x.alive]
        return out

    def apply(self, a: RAction) -> None:
        _APPLY[a.kind](self, a)

    # -- the steps ---------------------------------------------------------------------------
    def _deliver(self, a: RAction) -> None:
        src, dst, msg = a.arg
        self._take(a.arg)
        if self.voters[dst].alive:
            self._reach("message", type(msg).__name__)
            x = self._own(dst)
            x.heard = max(x.heard, carried_epoch(msg))
            if isinstance(msg, FetchSnapshotResponse) and msg.chunk is not None:
                _VoterPort(self, dst).received_chunk(msg)
            self._event(dst, Received(src, msg))

    def _lose(self, a: RAction) -> None:
        self._spend("message_loss")
        self._take(a.arg)

    def _duplicate(self, a: RAction) -> None:
        self._spend("duplicates")
        self._put(a.arg)

    def _flush(self, a: RAction) -> None:
        end = self._own(a.target).flush()
        self._event(a.target, Flushed(end))

    def _timer(self, a: RAction) -> None:
        kind, dest = a.arg
        self._spend(timer_budget(kind))
        x = self._own(a.target)
        x.timers = x.timers - {a.arg}
        self._event(a.target, TimerFired(kind, dest))

    def _append(self, a: RAction) -> None:
        self._spend("appends")
        x = self.voters[a.target]  # read only: the event owns it
        self.appended += 1
        self._event(a.target, ClientAppend(x.epoch, x.end, (f"r{self.appended}",)))

    def _resign(self, a: RAction) -> None:
        self._spend("resigns")
        self._event(a.target, Resign())

    def _snapshot(self, a: RAction) -> None:
        """The state machine writes what it applied (offsets below its cursor) as a snapshot,
        durable at once (a file written and renamed), and tells its node."""
        self._spend("snapshots")
        x = self._own(a.target)
        entries = x.applied[:x.cursor]
        sid = OffsetAndEpoch(x.cursor, entries[-1][0])
        x.snapshot = Snapshot(sid, entries)
        self._event(a.target, SnapshotWritten(sid))

    def _crash(self, a: RAction) -> None:
        self._spend("crashes")
        self._own(a.target).crash()

    def _restart(self, a: RAction) -> None:
        self._spend("restarts")
        self._boot(a.target)

    def _spend(self, budget: str) -> None:
        self.budgets[budget] -= 1

    # -- the network -------------------------------------------------------------------------
    def _put(self, m: Message) -> None:
        if len(self.network) >= self.scenario.max_in_flight:
            self.dropped += 1
            return
        net = list(self.network)
        bisect.insort(net, (_msg_key(m), m), key=_first)
        self.network = tuple(net)

    def _take(self, m: Message) -> None:
        k = _msg_key(m)
        net = list(self.network)
        i = bisect.bisect_left(net, k, key=_first)
        if i == len(net) or net[i][0] != k:
            raise WorldError(f"no message {m} in flight")
        del net[i]
        self.network = tuple(net)

    # -- the state machine -----------------------------------------------------------------
    def _load(self, x: Voter, snap: Snapshot) -> None:
        """The state machine loads a snapshot: it has applied every offset below its end."""
        for o, e in enumerate(snap.entries):
            self._applied(x, o, e)
        x.cursor = snap.id.offset

    def _applied(self, x: Voter, offset: int, entry: Entry) -> None:
        if offset < len(x.applied):
            if x.applied[offset] != entry:
                self.conflicts = self.conflicts + ((x.node_id, offset, x.applied[offset],
                                                    entry),)
                x.applied = x.applied[:offset] + (entry,) + x.applied[offset + 1:]
        elif offset == len(x.applied):
            x.applied = x.applied + (entry,)
        else:
            raise WorldError(f"voter {x.node_id} applies offset {offset} with a gap after "
                             f"{len(x.applied)}")

    def _high_watermark(self, v: int, offset: int) -> None:
        x = self._own(v)
        if offset > x.end:
            raise WorldError(f"voter {v} reports high watermark {offset} beyond its log end "
                             f"{x.end}")
        for o in range(x.hw, offset):
            epoch, record = x.entry(o)
            k = (o, epoch, record)
            self.committed[k] = min(self.committed.get(k, x.epoch), x.epoch)
        x.hw = offset
        for o in range(x.cursor, offset):
            self._applied(x, o, x.entry(o))
        x.cursor = max(x.cursor, offset)

    # -- the cores, through their drivers ---------------------------------------------------
    def _reach(self, *item: str) -> None:
        if self.reached is not None:
            self.reached.add(item)

    def _event(self, v: int, event: Any) -> None:
        port = _VoterPort(self, v)
        step = port.x.node.handle
        if self.trace is not None:
            trace, inner = self.trace, step

            def step(e: Any) -> Sequence[Any]:
                out = inner(e)
                trace(f"v{v}", e, out)
                return out
        nodes.drive(step, port, event)


class _VoterPort:
    """The world as the shell of voter ``v``: every effect of its node, in order."""

    def __init__(self, world: RaftWorld, v: int) -> None:
        self.w, self.v = world, v
        self.x = world._own(v)

    def persist_quorum_state(self, e: fx.PersistQuorumState) -> None:
        self.x.quorum = e.state

    def append_batches(self, e: fx.AppendBatches) -> None:
        self.x.append(e.batches)

    def flush(self, e: fx.Flush) -> None:
        self.x.flushes = self.x.flushes + (e.end_offset,)

    def truncate_to(self, e: fx.TruncateTo) -> None:
        self.x.truncate(e.offset)

    def install_snapshot(self, e: fx.InstallSnapshot) -> None:
        snap = self.x.install(e.snapshot_id)
        self.w._load(self.x, snap)

    def delete_before(self, e: fx.DeleteBefore) -> None:
        self.x.delete_before(e.offset)

    def send(self, e: fx.Send) -> None:
        self.w._put((self.v, e.destination, e.message))

    def send_records(self, e: fx.SendRecords) -> None:
        batches = self.x.read(e.from_offset, e.to_offset, e.max_batches)
        self.w._put((self.v, e.destination, replace(e.response, batches=batches)))

    def send_snapshot_chunk(self, e: fx.SendSnapshotChunk) -> None:
        r = e.response
        snap = self.x.snapshot
        if snap is None or snap.id != r.snapshot_id:
            raise WorldError(f"voter {self.v} sends a chunk of snapshot {tuple(r.snapshot_id)}; "
                             f"it has {None if snap is None else tuple(snap.id)}")
        chunk = snap.entries[r.position:]
        self.w._put((self.v, e.destination, replace(r, size=len(snap.entries), chunk=chunk)))

    def arm_timer(self, e: fx.ArmTimer) -> None:
        self.x.timers = self.x.timers | {(e.kind, e.destination)}

    def cancel_timer(self, e: fx.CancelTimer) -> None:
        self.x.timers = self.x.timers - {(e.kind, e.destination)}

    def role_changed(self, e: fx.RoleChanged) -> None:
        self.w._reach("raft-role", e.source.value, e.target.value)
        x = self.x
        x.role, x.epoch, x.leader = e.target, e.epoch, e.leader_id
        if e.target is RaftRole.LEADER:
            self.w.elected = self.w.elected | {(e.epoch, self.v)}

    def high_watermark(self, e: fx.HighWatermark) -> None:
        self.w._high_watermark(self.v, e.offset)

    def append_refused(self, e: fx.AppendRefused) -> None:
        self.w._reach("append-refused", e.reason)

    def received_chunk(self, r: FetchSnapshotResponse) -> None:
        """A FetchSnapshot answer arrived: its chunk goes to the snapshot being fetched."""
        got = self.x.incoming
        if got is None or got.id != r.snapshot_id or r.position == 0:
            got = Snapshot(r.snapshot_id, ())
        if r.position == len(got.entries) and r.chunk:
            self.x.incoming = Snapshot(r.snapshot_id, got.entries + tuple(r.chunk))


def _first(item: tuple[str, Message]) -> str:
    return item[0]


_APPLY: dict[str, Callable[[RaftWorld, RAction], None]] = {
    "deliver": RaftWorld._deliver, "lose": RaftWorld._lose, "duplicate": RaftWorld._duplicate,
    "flush": RaftWorld._flush, "timer": RaftWorld._timer, "append": RaftWorld._append,
    "resign": RaftWorld._resign, "snapshot": RaftWorld._snapshot, "crash": RaftWorld._crash,
    "restart": RaftWorld._restart,
}
