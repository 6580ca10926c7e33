"""``MetadataFeed``: the broker's observer of the metadata quorum as the broker core hears it --
the runner of the broker's ``RaftNodeShell`` (``adapters.raft_node``), on its event thread.

The Raft core (an observer: the broker's id is not a voter) runs through the Raft driver's
table onto the shell's port, as on a voter. Three of its effects then go on to the broker:

* ``HighWatermark`` -> the committed batches not yet published, read from the log through the
  port (decoded to ``fsm.kraft.records`` values), handed on as ``MetadataFetched(base_offset,
  records)``; contiguous batches are merged, at most ``MAX_RECORDS_PER_EVENT`` records an
  event. Control batches (``LeaderChange``) go too: they take offsets, and the core skips
  them, so its ``metadata_offset`` reaches the high watermark's last offset.
* ``InstallSnapshot`` (the broker fell behind the leader's log start) -> the snapshot's records
  as ``MetadataSnapshotLoaded(end_offset, records)``; a log that begins with a snapshot at
  start is published the same way first.
* ``RoleChanged`` -> ``on_leader(leader_id, epoch)``: the leader the observer follows (-1 while
  it looks for one). That leader hosts the active controller: the broker's controller channel
  connects to it.

``publish`` may block (the broker's queue is full): a committed batch is never dropped, or
the core would see a gap and stall.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded
from fsm.raft.driver import EFFECTS as RAFT_EFFECTS
from fsm.raft.effects import HighWatermark, InstallSnapshot, RoleChanged
from fsm.raft.messages import NO_LEADER, OffsetAndEpoch
from fsm.raft.roles import RaftRole

MAX_RECORDS_PER_EVENT = 10_000
"""Records in one ``MetadataFetched`` (a long catch-up is split into events of this size)."""

Publish = Callable[[object], None]
OnLeader = Callable[[int, int], None]


class MetadataFeed:
    def __init__(self, raft: Any, port: Any, publish: Publish, on_leader: OnLeader) -> None:
        """``raft``: the observer's ``fsm.raft.core.RaftNode``, not yet started; ``port``: the
        shell's ``NodePort`` (``RaftPort`` and ``read_committed``/``read_snapshot``)."""
        self.raft = raft
        self.port = port
        self.publish = publish
        self.on_leader = on_leader
        self.published = 0
        """The offset up to which the log's records were published (exclusive)."""
        self.leader = NO_LEADER
        snap = raft.snapshot_id
        if snap is not None:  # a restart from a log that begins with a snapshot
            self._load_snapshot(snap)

    def process(self, event: object) -> None:
        """One event of the Raft shell: to the core, its effects to the port, three of them
        on to the broker."""
        for effect in self.raft.handle(event):
            RAFT_EFFECTS[type(effect)](self.port, effect)
            hook = _HOOKS.get(type(effect))
            if hook is not None:
                hook(self, effect)

    # -- hooks ------------------------------------------------------------------------------
    def _on_high_watermark(self, e: HighWatermark) -> None:
        hw = e.offset
        if hw <= self.published:
            return
        base, records = -1, []
        for batch in self.port.read_committed(self.published, hw):
            if batch.end_offset <= self.published:
                continue
            if batch.base_offset < self.published or batch.end_offset > hw:
                raise AssertionError(f"batch [{batch.base_offset}, {batch.end_offset}) is not "
                                     f"within [{self.published}, {hw})")
            if records and len(records) + len(batch.records) > MAX_RECORDS_PER_EVENT:
                self.publish(MetadataFetched(base, tuple(records)))
                base, records = -1, []
            if base < 0:
                base = batch.base_offset
            records.extend(batch.records)
            self.published = batch.end_offset
        if records:
            self.publish(MetadataFetched(base, tuple(records)))
        if self.published != hw:
            raise AssertionError(f"the log holds committed records only to {self.published}, "
                                 f"not to the high watermark {hw}")

    def _on_install(self, e: InstallSnapshot) -> None:
        self._load_snapshot(e.snapshot_id)

    def _load_snapshot(self, snap: OffsetAndEpoch) -> None:
        records = tuple(self.port.read_snapshot(snap))
        self.publish(MetadataSnapshotLoaded(snap.offset, records))
        self.published = max(self.published, snap.offset)

    def _on_role(self, e: RoleChanged) -> None:
        leader = e.leader_id if e.target in (RaftRole.FOLLOWER, RaftRole.LEADER) else NO_LEADER
        if leader != self.leader:
            self.leader = leader
            self.on_leader(leader, e.epoch)


_HOOKS: dict[type, Callable[[MetadataFeed, Any], None]] = {
    HighWatermark: MetadataFeed._on_high_watermark,
    InstallSnapshot: MetadataFeed._on_install,
    RoleChanged: MetadataFeed._on_role,
}
"""The Raft effects the broker hears of, after the shell's port carried them out."""
