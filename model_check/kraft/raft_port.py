"""``VoterPort``: what the KRaft world on Raft (``raft_world``) does for one voter's glue --
the Raft node's effects (``RaftPort``), the controller's (``reply``, ``membership_changed``,
as ``KRaftWorld``'s controller port) and the metadata log's reads and snapshots
(``MetadataLogPort``). Each call changes the world at once; only ``Flush`` is answered after
the current event (``KRaftRaftWorld._voter`` hands the node its ``Flushed``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fsm.raft import effects as fx
from fsm.raft.config import RaftConfig
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, OffsetAndEpoch
from model_check.kraft.world import _ControllerPort

if TYPE_CHECKING:
    from model_check.kraft.raft_world import KRaftRaftWorld


def new_node(config: RaftConfig, state: QuorumState, log: LogSummary) -> Any:
    """A Raft node (``fsm.raft.core.RaftNode``) on a log and quorum-state, not yet started."""
    from fsm.raft.core import RaftNode

    return RaftNode(config, state, log)


class VoterPort(_ControllerPort):
    w: KRaftRaftWorld

    # -- durable -------------------------------------------------------------------------------
    def persist_quorum_state(self, e: fx.PersistQuorumState) -> None:
        self.w.logs[self.i] = self.w.logs[self.i].with_quorum(e.state)

    def append_batches(self, e: fx.AppendBatches) -> None:
        self.w.logs[self.i] = self.w.logs[self.i].appended(e.batches)
        for b in e.batches:
            for r in b.records:
                self.w._reach("record", type(r).__name__)

    def flush(self, e: fx.Flush) -> None:
        self.w.flush_due.append((self.i, e.end_offset))

    def truncate_to(self, e: fx.TruncateTo) -> None:
        self.w.logs[self.i] = self.w.logs[self.i].truncated(e.offset)

    def install_snapshot(self, e: fx.InstallSnapshot) -> None:
        records = self.w.installed(self.i, e.snapshot_id)
        self.w.logs[self.i] = self.w.logs[self.i].installed(e.snapshot_id, records)

    def delete_before(self, e: fx.DeleteBefore) -> None:
        self.w.logs[self.i] = self.w.logs[self.i].deleted_before(e.offset)

    # -- messages and timers ---------------------------------------------------------------------
    def send(self, e: fx.Send) -> None:
        self.w.post(self.i, e.destination, e.message)

    def send_records(self, e: fx.SendRecords) -> None:
        batches = self.w.logs[self.i].read(e.from_offset, e.to_offset, e.max_batches)
        self.w.post(self.i, e.destination, replace(e.response, batches=batches))

    def send_snapshot_chunk(self, e: fx.SendSnapshotChunk) -> None:
        log, r = self.w.logs[self.i], e.response
        if log.snapshot_id != r.snapshot_id:
            raise AssertionError(f"voter {self.i} has no snapshot {r.snapshot_id}")
        chunk = log.snapshot[r.position:]
        self.w.post(self.i, e.destination, replace(r, size=len(log.snapshot), chunk=chunk))

    def arm_timer(self, e: fx.ArmTimer) -> None:
        pass  # the node keeps its armed timers; the world fires them (``raft_world``)

    def cancel_timer(self, e: fx.CancelTimer) -> None:
        pass

    # -- to the state machine (the glue hears these too) -----------------------------------------
    def role_changed(self, e: fx.RoleChanged) -> None:
        self.w._reach("raft-role", e.source.value, e.target.value)

    def high_watermark(self, e: fx.HighWatermark) -> None:
        self.w.committed(self.i, e.offset)

    def append_refused(self, e: fx.AppendRefused) -> None:
        pass

    # -- MetadataLogPort ----------------------------------------------------------------------
    def read_committed(self, from_offset: int, to_offset: int) -> Sequence[Batch]:
        return self.w.logs[self.i].read(from_offset, to_offset)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Sequence[Any]:
        log = self.w.logs[self.i]
        if log.snapshot_id != snapshot_id:
            raise AssertionError(f"voter {self.i} has no snapshot {snapshot_id}")
        return log.snapshot

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch) -> None:
        return None  # the world's snapshots are records: the controller replays them

    def write_snapshot(self, snapshot_id: OffsetAndEpoch, records: Sequence[Any]) -> None:
        self.w.logs[self.i] = self.w.logs[self.i].with_snapshot(snapshot_id, tuple(records))
