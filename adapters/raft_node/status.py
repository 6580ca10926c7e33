"""What a Raft node shows outside its event thread: one immutable ``NodeStatus``, replaced
whole after every item the event thread handles (a reader on another thread sees one
consistent value, never a half-updated one)."""

from __future__ import annotations

from dataclasses import dataclass

from fsm.raft.messages import NO_LEADER
from fsm.raft.roles import RaftRole


@dataclass(frozen=True, slots=True)
class NodeStatus:
    node_id: int
    role: RaftRole = RaftRole.UNATTACHED
    epoch: int = 0
    leader_id: int = NO_LEADER
    high_watermark: int = 0
    log_end_offset: int = 0  # appended (maybe not yet durable)
    flushed_offset: int = 0  # durable
    log_start_offset: int = 0  # the first offset held (after the latest snapshot)
    snapshots_installed: int = 0  # fetched from a leader since this process started
    failure: str | None = None  # why the event thread halted (an I/O error, a bug)
    replayed_offset: int = 0  # a hosted controller: committed records replayed up to (excl.)
    snapshot_loaded_offset: int = -1  # the snapshot its image was loaded from at start
    snapshot_loaded_at: float = 0.0  # when that load ended (seconds since the epoch)

    @property
    def is_leader(self) -> bool:
        return self.role is RaftRole.LEADER

    def as_dict(self) -> dict[str, object]:
        return {"node_id": self.node_id, "role": self.role.value, "epoch": self.epoch,
                "leader_id": self.leader_id, "high_watermark": self.high_watermark,
                "log_end_offset": self.log_end_offset, "flushed_offset": self.flushed_offset,
                "log_start_offset": self.log_start_offset,
                "snapshots_installed": self.snapshots_installed, "failure": self.failure,
                "replayed_offset": self.replayed_offset,
                "snapshot_loaded_offset": self.snapshot_loaded_offset,
                "snapshot_loaded_at": self.snapshot_loaded_at}
