"""``ControllerOnRaft``: a quorum controller on its node's Raft replica of the metadata log --
the pure glue between the two cores, one per controller node, which the live node
(``adapters.raft_node``) and the checker's KRaft world drive alike.

The two cores do not know each other. The glue turns what one says into what the other hears:

* Raft leads in epoch ``e`` (``RoleChanged`` to LEADER) -> once the high watermark has passed
  the epoch's first record (the leader's ``LeaderChange`` control record: everything before
  it is then committed, and replayed here) the controller hears ``LeadershipGained(e, log
  end)``. Until then it is a standby, so a new active controller never decides on a state
  it has not seen whole (seed 004: the new controller "already has the image built").
* Raft stops leading, or refuses an append (``AppendRefused``) -> ``LeadershipLost``: the
  controller drops its uncommitted future state.
* The high watermark grows (``HighWatermark``) -> the active controller hears ``Committed``
  (its own records, already in its image); a standby hears ``Replayed`` with the committed
  batches, read from the log through the port (control batches are Raft's own and skipped:
  they take offsets, so replayed batches may leave gaps).
* A follower installs a snapshot fetched from the leader (``InstallSnapshot``), or the node
  restarts on a log that begins with a snapshot -> the controller hears ``SnapshotLoaded``
  with the snapshot's image, if the shell builds it as it reads (``read_snapshot_image``),
  else with its records.
* The controller appends (``AppendRecords``) -> Raft hears ``ClientAppend`` at the same base
  offset and epoch (a record's offset is the log's: a broker's epoch is its registration's);
  over ``MAX_RECORDS_PER_BATCH`` records, several, at consecutive offsets.
* Every ``snapshot_every`` committed records the glue writes a snapshot of the committed image
  through the port and tells Raft (``SnapshotWritten``), which may then delete the log below.

One event from the shell may cause a chain (a fetch answer commits records, which answers a
request, ...): the glue runs it to the end through one FIFO queue, so neither core is ever
called from inside the other's step, and the order is the same in the live node and in the
world. The Raft core's other effects go to the shell's port through the Raft driver's table;
the four above go there too (for its logs and metrics) and then to the glue (``_RAFT_TABLE``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from fsm.kraft.controller.events import (
    AppendRecords,
    Committed,
    ControllerRequest,
    LeadershipGained,
    LeadershipLost,
    Replayed,
    SnapshotLoaded,
    Tick,
)
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.driver import EFFECTS as CONTROLLER_EFFECTS
from fsm.kraft.driver import MAX_EFFECTS
from fsm.kraft.image import MetadataImage, snapshot_records
from fsm.raft.driver import EFFECTS as RAFT_EFFECTS
from fsm.raft.effects import AppendRefused, HighWatermark, InstallSnapshot, RoleChanged
from fsm.raft.events import ClientAppend, Received, SnapshotWritten, Start, TimerFired
from fsm.raft.messages import Batch, OffsetAndEpoch
from fsm.raft.roles import RaftRole

MAX_CHAIN = 100_000
"""Bound on the events one shell event may cause through the glue: more is a loop."""

MAX_RECORDS_PER_BATCH = 14_000
"""Bound on the records of one log batch: a longer append of the controller goes to Raft as
several batches, in order. Fencing a broker that was in 68,000 partitions was 68,000
partition changes in one batch, 3 MB, over the log's 1 MB batch bound -- the node halted
(issue 26). 14,000 of the largest common record (a PartitionRecord of 3 replicas, 64 bytes)
stay under 1 MB; a broker leading 10,000 partitions is still fenced in one batch (each
further batch costs a follower's round trip before the whole is committed). Kafka bounds
its batches likewise (``QuorumController.MAX_RECORDS_PER_BATCH``, 10,000 records in batches
of up to 8 MB). Not atomic then, as Kafka's non-atomic results are not: a leader lost
between two of them leaves a prefix committed, each record valid alone (the next active
controller finishes the work, as it would any broker's fencing)."""

_CONTROLLER_EVENTS_MODULE = ControllerRequest.__module__
"""Events of this module (``ControllerRequest``, ``Tick`` from the shell; the glue's own
``LeadershipGained`` ...) go to the controller; every other event is the Raft node's."""


class MetadataLogPort(Protocol):
    """What the glue needs from its shell beyond the two cores' own ports (``RaftPort``,
    ``QuorumControllerPort``): reading the committed log and the snapshots."""

    def read_committed(self, from_offset: int, to_offset: int) -> Sequence[Batch]:
        """The log's batches covering ``[from_offset, to_offset)``, whole, in order."""

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Sequence[Any]:
        """The metadata records of snapshot ``snapshot_id``."""

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch) -> MetadataImage | None:
        """The image the records of snapshot ``snapshot_id`` replay to, built as they are
        read -- equal to ``image_from_records(read_snapshot(snapshot_id))`` -- or None (a
        shell that does not, or a snapshot it leaves to ``read_snapshot``, which then names
        any error)."""

    def write_snapshot(self, snapshot_id: OffsetAndEpoch, records: Sequence[Any]) -> None:
        """Write (durably) a snapshot of the committed prefix ending at ``snapshot_id``."""


class ControllerOnRaft:
    def __init__(self, raft: Any, controller: QuorumController, port: Any,
                 snapshot_every: int = 0) -> None:
        """``raft``: a ``fsm.raft.core.RaftNode`` not yet started; ``port``: the shell's, a
        ``RaftPort``, a ``QuorumControllerPort`` (``reply``, ``membership_changed``) and a
        ``MetadataLogPort`` in one. ``snapshot_every``: committed records between snapshots
        (0: never)."""
        self.raft = raft
        self.controller = controller
        self.port = port
        self.snapshot_every = snapshot_every
        self.applied = 0
        """The offset up to which committed batches reached the controller (exclusive)."""
        self.applied_epoch = 0
        """The epoch of the record before ``applied``."""
        self.last_snapshot = 0
        self.now_ms = 0
        self._queue: deque[Any] = deque()
        snap = raft.snapshot_id  # the latest snapshot, or None
        if snap is not None:  # a restart from a log that begins with a snapshot
            self._load_snapshot(snap)
            self.last_snapshot = snap.offset

    # -- the one entry point ------------------------------------------------------------------
    def process(self, event: Any) -> None:
        """One event from the shell -- a Raft event (``fsm.raft.events``) or a controller's
        (``ControllerRequest``, ``Tick``) -- and everything it causes, in order."""
        now = getattr(event, "now_ms", None)
        if isinstance(event, Tick | Received | TimerFired | Start) and now:
            self.now_ms = max(self.now_ms, now)
        self._queue.append(event)
        steps = 0
        while self._queue:
            steps += 1
            if steps > MAX_CHAIN:
                raise AssertionError(f"{steps} glue steps from one event: a loop")
            e = self._queue.popleft()
            if type(e).__module__ == _CONTROLLER_EVENTS_MODULE:
                effects, table = self.controller.handle(e), _CONTROLLER_TABLE
            else:
                effects, table = self.raft.handle(e), _RAFT_TABLE
            if len(effects) > MAX_EFFECTS:
                raise AssertionError(f"{len(effects)} effects from one event: a loop")
            for effect in effects:
                table[type(effect)](self, effect)
            if not self._queue:
                self._maybe_snapshot()

    # -- Raft's effects, as the controller hears them -----------------------------------------
    def _on_role(self, e: RoleChanged) -> None:
        c = self.controller
        if c.active and (e.target is not RaftRole.LEADER or e.epoch != c.epoch):
            self._queue.append(LeadershipLost(e.epoch))
        if e.target is RaftRole.LEADER:
            self._maybe_claim()  # never at once: the epoch start is not yet committed

    def _on_refused(self, e: AppendRefused) -> None:
        if self.controller.active and e.epoch == self.controller.epoch:
            self._queue.append(LeadershipLost(max(e.leader_epoch, e.epoch)))

    def _on_high_watermark(self, e: HighWatermark) -> None:
        hw = e.offset
        if hw <= self.applied:
            return
        if self.controller.active:
            self._queue.append(Committed(hw - 1))
            self.applied, self.applied_epoch = hw, self.controller.epoch
        else:
            for batch in self.port.read_committed(self.applied, hw):
                if batch.end_offset <= self.applied:
                    continue
                if batch.end_offset > hw:
                    raise AssertionError(f"batch [{batch.base_offset}, {batch.end_offset}) "
                                         f"crosses the high watermark {hw}")
                if not batch.control:
                    self._queue.append(Replayed(batch.base_offset, batch.records))
                self.applied, self.applied_epoch = batch.end_offset, batch.epoch
            if self.applied != hw:
                raise AssertionError(f"the log holds committed records only to {self.applied},"
                                     f" not to the high watermark {hw}")
        self._maybe_claim()

    def _maybe_claim(self) -> None:
        """Become the active controller once the Raft leader's own epoch start is committed
        and replayed (see the module docstring)."""
        r, c = self.raft, self.controller
        if c.active or r.role is not RaftRole.LEADER:
            return
        start = _epoch_start(r.epochs, r.epoch)
        if start is not None and self.applied > start:
            self._queue.append(LeadershipGained(r.epoch, r.end_offset, self.now_ms))

    def _on_install(self, e: InstallSnapshot) -> None:
        self._load_snapshot(e.snapshot_id)
        self.last_snapshot = e.snapshot_id.offset

    def _load_snapshot(self, snap: OffsetAndEpoch) -> None:
        image = self.port.read_snapshot_image(snap)
        if image is None:
            self._queue.append(SnapshotLoaded(snap.offset, tuple(self.port.read_snapshot(snap))))
        else:
            self._queue.append(SnapshotLoaded(snap.offset, (), image))
        self.applied, self.applied_epoch = snap.offset, snap.epoch

    def _maybe_snapshot(self) -> None:
        if (self.snapshot_every <= 0 or self.applied - self.last_snapshot < self.snapshot_every
                or self.controller.committed_offset + 1 > self.applied):
            return
        snap = OffsetAndEpoch(self.applied, self.applied_epoch)
        self.port.write_snapshot(snap, snapshot_records(self.controller.committed))
        self.last_snapshot = snap.offset
        self._queue.append(SnapshotWritten(snap))  # the loop in ``process`` carries it on

    # -- for the checker ------------------------------------------------------------------------
    def copy(self, port: Any) -> ControllerOnRaft:
        """An independent glue over copies of both cores, driving ``port`` (the world gives
        each copy its own)."""
        other = ControllerOnRaft.__new__(ControllerOnRaft)
        other.__dict__.update(self.__dict__)
        other.raft = self.raft.copy()
        other.controller = self.controller.copy()
        other.port = port
        other._queue = deque()
        return other

    def key(self) -> tuple[Any, ...]:
        """What the glue holds, for the checker's state key (the cores have their own)."""
        return (self.applied, self.applied_epoch, self.last_snapshot, self.now_ms)


Table = dict[type, Callable[[ControllerOnRaft, Any], None]]


def _to_shell(carry_out: Callable[[Any, Any], None]) -> Callable[[ControllerOnRaft, Any], None]:
    """A driver table's entry (``port, effect``) as an entry of the glue's (``glue, effect``):
    the effect goes to the glue's port."""
    return lambda glue, e: carry_out(glue.port, e)


def _to_shell_then_glue(effect_type: type, glue_method: Callable[[ControllerOnRaft, Any], None]
                        ) -> Callable[[ControllerOnRaft, Any], None]:
    """The shell carries the effect out (its logs, its metrics), then the glue hears it."""
    carry_out = RAFT_EFFECTS[effect_type]

    def both(glue: ControllerOnRaft, e: Any) -> None:
        carry_out(glue.port, e)
        glue_method(glue, e)
    return both


def _client_append(glue: ControllerOnRaft, e: AppendRecords) -> None:
    """One ``ClientAppend`` per at most ``MAX_RECORDS_PER_BATCH`` records, at consecutive
    offsets (nothing can come between them: they are queued together)."""
    records = e.records
    if len(records) <= MAX_RECORDS_PER_BATCH:
        glue._queue.append(ClientAppend(e.epoch, e.base_offset, records))
        return
    for start in range(0, len(records), MAX_RECORDS_PER_BATCH):
        glue._queue.append(ClientAppend(e.epoch, e.base_offset + start,
                                        records[start:start + MAX_RECORDS_PER_BATCH]))


_RAFT_TABLE: Table = {
    **{t: _to_shell(f) for t, f in RAFT_EFFECTS.items()},
    RoleChanged: _to_shell_then_glue(RoleChanged, ControllerOnRaft._on_role),
    HighWatermark: _to_shell_then_glue(HighWatermark, ControllerOnRaft._on_high_watermark),
    InstallSnapshot: _to_shell_then_glue(InstallSnapshot, ControllerOnRaft._on_install),
    AppendRefused: _to_shell_then_glue(AppendRefused, ControllerOnRaft._on_refused),
}
"""The Raft core's effects: the Raft driver's table (``fsm.raft.driver.EFFECTS``) to the
shell's port, four of them then to the glue. Built once: a glue holds no table, so the
checker's copies of it cost nothing to make."""

_CONTROLLER_TABLE: Table = {
    **{t: _to_shell(f) for t, f in CONTROLLER_EFFECTS.items()},
    AppendRecords: _client_append,
}
"""The controller's effects: its driver's table (``fsm.kraft.driver.EFFECTS``) to the shell's
port, except its appends, which become Raft ``ClientAppend``s on the glue's queue."""


def _epoch_start(epochs: Sequence[tuple[int, int]], epoch: int) -> int | None:
    for e, start in epochs:
        if e == epoch:
            return start
    return None
