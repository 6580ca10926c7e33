"""``NodePort``: each effect of the Raft core (``fsm.raft.effects``) carried out on the
metadata log and the transport, in the order the core gave them: the ``RaftPort`` of
``fsm.raft.driver`` (and, for a hosted controller, the ``QuorumControllerPort`` and
``MetadataLogPort`` of ``fsm.kraft.on_raft``).

Durability, as the contract says: ``PersistQuorumState``, ``TruncateTo``, ``InstallSnapshot``
and ``DeleteBefore`` are durable when their call returns (the log fsyncs), so a vote is on
disk before the ``Send`` that grants it. ``AppendBatches`` is not; ``Flush`` is *deferred*: the
port notes the offset and the shell fsyncs once the burst of events in its queue is handled
(``RaftNodeShell._flush``), then hands the core ``Flushed``. The contract allows it (the core
counts only flushed offsets) and it lets one fsync cover many client appends.

``SendRecords`` reads the batches from the log here, fills the response and sends it; the
core never holds records. A DescribeQuorum answer leaves with its fetch times moved from
the shell's monotonic clock to milliseconds since the epoch, as Kafka's tools print them.
Timers go to ``Deadlines`` with the jitter drawn there. Role
changes, the high watermark and refused appends go to the shell (logging, status, the
controller it may host).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from adapters.host.gc_tuning import CollectorPause
from adapters.raft_log import METADATA, MetadataLog
from adapters.raft_node.encoded import EncodedBatches
from adapters.raft_node.record_bytes import decoded, encoded, to_bytes, to_values
from fsm.kraft.controller.events import MembershipChange, Reply
from fsm.kraft.image import MetadataImage
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
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, DescribeQuorumResponse, OffsetAndEpoch, ReplicaState

if TYPE_CHECKING:
    from adapters.raft_node.shell import RaftNodeShell

log = logging.getLogger("kcontrol.raft")
state_log = logging.getLogger("kcontrol.state.change")

READ_BATCHES = 1024
"""Batches per log read when the controller replays committed records."""
SNAPSHOT_CHUNK_BYTES = 1 << 20
"""Bytes of a snapshot per FetchSnapshot answer."""


class NodeLog(Protocol):
    """What the node needs of its metadata log (``adapters.raft_log.MetadataLog``)."""

    def summary(self) -> LogSummary: ...

    def read_quorum_state(self) -> QuorumState: ...

    def write_quorum_state(self, state: QuorumState, voters: Iterable[int]) -> None: ...

    def append(self, batches: tuple[Batch, ...]) -> None: ...

    def flush(self) -> None: ...

    def read(self, from_offset: int, to_offset: int, max_batches: int) -> tuple[Batch, ...]: ...

    def truncate_to(self, offset: int) -> int: ...

    def close(self) -> None: ...


class NodeTransport(Protocol):
    """What the node needs of its transport (``adapters.raft_transport.RaftTransport``)."""

    def send(self, destination: int, message: Any) -> None: ...


class NodePort:
    """The port of shell ``shell`` (one per shell; event thread only)."""

    __slots__ = ("shell", "log", "transport", "timers", "snapshot_read_s")

    def __init__(self, shell: RaftNodeShell) -> None:
        self.shell = shell
        self.log = shell.log
        self.transport = shell.transport
        self.timers = shell.timers
        self.snapshot_read_s = 0.0
        """Seconds the last ``read_snapshot`` took (read, checked, decoded)."""

    # -- durable ---------------------------------------------------------------------------
    def persist_quorum_state(self, effect: PersistQuorumState) -> None:
        self.log.write_quorum_state(effect.state, self.shell.config.voters)

    def append_batches(self, effect: AppendBatches) -> None:
        if not effect.batches:
            return
        self.log.append(tuple(to_bytes(b) for b in effect.batches))
        self.shell.appended(effect.batches[-1].end_offset)

    def flush(self, effect: Flush) -> None:
        self.shell.flush_wanted(effect.end_offset)

    def truncate_to(self, effect: TruncateTo) -> None:
        self.shell.truncated(self.log.truncate_to(effect.offset))

    def install_snapshot(self, effect: InstallSnapshot) -> None:
        """The chunks the shell gathered from FetchSnapshot answers, checked and made the
        log's start by the log."""
        data = self.shell.snapshot_received(effect.snapshot_id)
        _snapshots(self.log, "install_snapshot")(effect.snapshot_id, data)
        self.shell.snapshot_installed(effect.snapshot_id)

    def delete_before(self, effect: DeleteBefore) -> None:
        start = _snapshots(self.log, "delete_before")(effect.offset)
        self.shell.deleted_before(start if isinstance(start, int) else effect.offset)

    # -- messages and timers -----------------------------------------------------------------
    def send(self, effect: Send) -> None:
        message = effect.message
        if isinstance(message, DescribeQuorumResponse):
            message = _wall_clock(message, time.time() * 1000 - self.shell.now_ms())
        self.transport.send(effect.destination, message)

    def send_records(self, effect: SendRecords) -> None:
        """The log's batches as it holds them on disk when it can give them so (no record
        decoded and encoded again: ``wire_records``), else as values."""
        batches: tuple[Any, ...] = ()
        if effect.to_offset > effect.from_offset:
            read_bytes = getattr(self.log, "read_bytes", None)
            if read_bytes is not None:
                data = read_bytes(effect.from_offset, effect.to_offset, effect.max_batches)
                batches = (EncodedBatches(data),) if data else ()
            else:
                batches = tuple(self.log.read(effect.from_offset, effect.to_offset,
                                              effect.max_batches))
        self.transport.send(effect.destination,
                            dataclasses.replace(effect.response, batches=batches))

    def send_snapshot_chunk(self, effect: SendSnapshotChunk) -> None:
        r = effect.response
        size = _snapshots(self.log, "snapshot_size")(r.snapshot_id)
        chunk = _snapshots(self.log, "read_snapshot_chunk")(r.snapshot_id, r.position,
                                                             SNAPSHOT_CHUNK_BYTES)
        self.transport.send(effect.destination, dataclasses.replace(r, size=size, chunk=chunk))

    def arm_timer(self, effect: ArmTimer) -> None:
        self.timers.arm(effect.kind, effect.destination, effect.delay_ms, effect.jitter_ms,
                        self.shell.now_ms())

    def cancel_timer(self, effect: CancelTimer) -> None:
        self.timers.cancel(effect.kind, effect.destination)

    # -- to the state machine ----------------------------------------------------------------
    def role_changed(self, effect: RoleChanged) -> None:
        self.shell.role_changed(effect)

    def high_watermark(self, effect: HighWatermark) -> None:
        self.shell.high_watermark(effect.offset)

    def append_refused(self, effect: AppendRefused) -> None:
        self.shell.append_refused(effect)

    # -- the hosted quorum controller (``QuorumControllerPort``, ``MetadataLogPort``) --------
    def reply(self, effect: Reply) -> None:
        if not self.shell.replies.answer(effect.token, effect.response):
            log.debug("%s answer to %r: nobody waits for it", self.shell.prefix, effect.token)

    def membership_changed(self, effect: MembershipChange) -> None:
        state_log.info("%s broker %d: %s -> %s at offset %d (%s)", self.shell.prefix,
                       effect.broker_id, effect.source, effect.target, effect.offset,
                       effect.reason)

    def read_committed(self, from_offset: int, to_offset: int) -> list[Batch]:
        """The log's batches covering ``[from_offset, to_offset)``, whole, in order: read in
        rounds of ``READ_BATCHES``, at most ``to_offset - from_offset`` rounds."""
        out: list[Batch] = []
        at = from_offset
        for _ in range(max(to_offset - from_offset, 0)):
            if at >= to_offset:
                break
            got = self.log.read(at, to_offset, READ_BATCHES)
            if not got:
                raise RuntimeError(f"the log has no batch at {at} (committed to {to_offset})")
            out.extend(to_values(b) for b in got)
            at = got[-1].end_offset
        return out

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Sequence[Any]:
        """The snapshot's metadata records: read, checked and decoded batch by batch when
        the log can (``MetadataLog.read_snapshot(serde=...)``), else read as the log holds
        them and decoded after."""
        t0 = time.monotonic()
        read = _snapshots(self.log, "read_snapshot")
        if isinstance(self.log, MetadataLog):
            records = read(snapshot_id, serde=METADATA)
        else:
            records = decoded(read(snapshot_id))
        took = self.snapshot_read_s = time.monotonic() - t0
        log.info("%s snapshot %s read: %d records, read, checked and decoded in %.2f s",
                 self.shell.prefix, snapshot_id, len(records), took)
        return records  # type: ignore[no-any-return]

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch) -> MetadataImage | None:
        """The snapshot's image, built as its batches are read and checked
        (``MetadataLog.read_snapshot_image``: no record values; issue 26), with the cyclic
        collector paused through it (a million images, none in a cycle); None if the log
        cannot, or leaves the snapshot to ``read_snapshot`` (which names what is wrong)."""
        read = getattr(self.log, "read_snapshot_image", None)
        if read is None:
            return None
        t0 = time.monotonic()
        pause = CollectorPause()
        pause.pause()
        try:
            got = read(snapshot_id)
        finally:
            pause.resume()
        if got is None:
            log.info("%s snapshot %s: not the common layout, read as records",
                     self.shell.prefix, snapshot_id)
            return None
        image, records = got
        took = self.snapshot_read_s = time.monotonic() - t0
        log.info("%s snapshot %s read: %d records, read, checked and decoded in %.2f s, "
                 "replayed into the image as read", self.shell.prefix, snapshot_id, records,
                 took)
        return image  # type: ignore[no-any-return]

    def write_snapshot(self, snapshot_id: OffsetAndEpoch, records: Sequence[Any]) -> None:
        _snapshots(self.log, "write_snapshot")(snapshot_id, encoded(records))


def _wall_clock(m: DescribeQuorumResponse, shift_ms: float) -> DescribeQuorumResponse:
    """The core's fetch times are the shell's monotonic milliseconds; a tool prints Kafka's
    (milliseconds since the epoch): shifted by ``shift_ms`` (-1, never, stays -1)."""
    def shifted(r: ReplicaState) -> ReplicaState:
        return ReplicaState(r.replica_id, r.log_end_offset,
                            -1 if r.last_fetch_ms < 0 else int(r.last_fetch_ms + shift_ms),
                            -1 if r.last_caught_up_ms < 0 else int(r.last_caught_up_ms + shift_ms))

    return dataclasses.replace(m, current_voters=tuple(map(shifted, m.current_voters)),
                               observers=tuple(map(shifted, m.observers)))


def _snapshots(log: object, method: str) -> Callable[..., Any]:
    """The log's snapshot call ``method``, or a clear error if this log has none."""
    call = getattr(log, method, None)
    if call is None:
        raise NotImplementedError(f"the metadata log {type(log).__name__} has no {method}: "
                                  "snapshots are not supported by it")
    return call  # type: ignore[no-any-return]


__all__ = ["NodeLog", "NodePort", "NodeTransport", "OffsetAndEpoch"]
