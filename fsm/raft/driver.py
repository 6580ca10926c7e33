"""``RaftDriver``: a Raft node's loop, pure; the checker's world runs it over its port, the
live node shell (``adapters.raft_node``) over one on the disk log and the transport.

One event at a time: ``process(event)`` hands it to ``RaftNode.handle`` and carries out each
effect, in order, through ``EFFECTS``, a table by effect type -- the shape of
``fsm.kraft.driver``. A port method that makes something durable returns only once it is
durable (``persist_quorum_state``, ``truncate_to``, ``install_snapshot``, ``delete_before``);
``flush`` may answer ``Flushed`` later, as an event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fsm.kraft.driver import EffectDriver, Step
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


class RaftPort(Protocol):
    """What a Raft node's shell does for its driver: one method per effect type."""

    def persist_quorum_state(self, effect: PersistQuorumState) -> None:
        """Write and fsync the quorum-state before returning."""

    def append_batches(self, effect: AppendBatches) -> None:
        """Append at the log end (not yet durable)."""

    def flush(self, effect: Flush) -> None:
        """Make the log durable, then deliver ``events.Flushed(effect.end_offset)``."""

    def truncate_to(self, effect: TruncateTo) -> None:
        """Drop the log from ``effect.offset`` on, durably."""

    def install_snapshot(self, effect: InstallSnapshot) -> None:
        """Replace the log with the fetched snapshot, durably; the state machine loads it."""

    def delete_before(self, effect: DeleteBefore) -> None:
        """Delete the log below ``effect.offset``."""

    def send(self, effect: Send) -> None:
        """Send ``effect.message`` to ``effect.destination`` (never blocks)."""

    def send_records(self, effect: SendRecords) -> None:
        """Fill the response's batches from the log and send it."""

    def send_snapshot_chunk(self, effect: SendSnapshotChunk) -> None:
        """Fill the response's size and chunk from the snapshot and send it."""

    def arm_timer(self, effect: ArmTimer) -> None:
        """Arm (or re-arm) the timer, adding a random jitter in [0, ``jitter_ms``]."""

    def cancel_timer(self, effect: CancelTimer) -> None:
        """Cancel the timer if armed."""

    def role_changed(self, effect: RoleChanged) -> None:
        """Log the move (state-change log) and tell the state machine."""

    def high_watermark(self, effect: HighWatermark) -> None:
        """The committed prefix grew: the state machine may apply up to it."""

    def append_refused(self, effect: AppendRefused) -> None:
        """Tell the state machine its append was not taken."""


EFFECTS: dict[type, Callable[[RaftPort, Any], None]] = {
    PersistQuorumState: lambda port, e: port.persist_quorum_state(e),
    AppendBatches: lambda port, e: port.append_batches(e),
    Flush: lambda port, e: port.flush(e),
    TruncateTo: lambda port, e: port.truncate_to(e),
    InstallSnapshot: lambda port, e: port.install_snapshot(e),
    DeleteBefore: lambda port, e: port.delete_before(e),
    Send: lambda port, e: port.send(e),
    SendRecords: lambda port, e: port.send_records(e),
    SendSnapshotChunk: lambda port, e: port.send_snapshot_chunk(e),
    ArmTimer: lambda port, e: port.arm_timer(e),
    CancelTimer: lambda port, e: port.cancel_timer(e),
    RoleChanged: lambda port, e: port.role_changed(e),
    HighWatermark: lambda port, e: port.high_watermark(e),
    AppendRefused: lambda port, e: port.append_refused(e),
}
"""Effect class -> the port call that carries it out: the one dispatch."""


class RaftDriver(EffectDriver):
    def __init__(self, step: Step, port: RaftPort) -> None:
        super().__init__(step, port, EFFECTS)
