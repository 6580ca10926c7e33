"""``RaftNodeShell``: one metadata-quorum voter (or observer) around the pure Raft core.

Threads:

* the **event thread** (``kcontrol-raft-<id>``) owns the core, the log and the timers, and is
  the only thread that touches them: it takes one item at a time from one bounded queue
  (``inbox``: the other voters' messages before the clients' work), hands it to the core and
  carries out the effects in order through ``NodePort``;
* the transport's threads only enqueue ``Received`` (``deliver``); local clients only enqueue
  ``LocalAppend`` (``append``), controller requests (``request``) and reads (``call``); when
  the queue is full they wait (backpressure), then the item is dropped with an ERROR line (a
  message lost on the wire is one Raft survives; a client hears that it failed).

Timers are deadlines the event thread waits on between items (``timers``); ``TimerFired``
never passes through the queue.

Flush. ``Flush`` effects are deferred: once the queue is empty (or after ``flush_every``
items) the event thread fsyncs the log once and hands the core one ``Flushed`` with the
largest end asked (one answer may stand for several flushes). A burst of client appends thus
costs one fsync and one step of the core. ``Flushed`` does not pass
through the queue either: the event thread is the queue's only consumer and must never
block on it.

Start: the log was opened (recovered) by the caller; the core is built from its quorum-state
and summary, and handed ``Start``. Any exception in the core or in carrying out an effect
(an fsync that failed) halts the node: the event thread stops, ``status.failure`` says why,
and ``on_halt`` is called (the process exits). Continuing after a failed write of the log or
of the quorum-state could break the promises Raft rests on.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from adapters.raft_node.appends import MAX_PENDING, AppendTicket, LocalAppend, PendingAppends
from adapters.raft_node.calls import Call, Replies
from adapters.raft_node.halt_reason import halt_reason
from adapters.raft_node.inbox import CLOSED, Inbox
from adapters.raft_node.port import NodeLog, NodePort, NodeTransport
from adapters.raft_node.status import NodeStatus
from adapters.raft_node.timers import Deadlines
from fsm.errors import ErrorCode
from fsm.kraft.controller.events import ControllerRequest, Tick
from fsm.raft.config import RaftConfig
from fsm.raft.core import RaftNode
from fsm.raft.driver import RaftDriver
from fsm.raft.effects import AppendRefused, RoleChanged
from fsm.raft.events import ClientAppend, Flushed, Received, Resign, Start, TimerFired
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import FetchSnapshotResponse, OffsetAndEpoch
from fsm.raft.roles import RaftRole

log = logging.getLogger("kcontrol.raft")

DEFAULT_QUEUE_CAPACITY = 10_000
DEFAULT_FLUSH_EVERY = 256
"""At most this many items are handled between an asked ``Flush`` and the fsync (a steady
stream of items never postpones it for long)."""
RESIGN_GRACE_S = 3.0
"""How long a resigning leader waits to hear of its successor before it stops anyway."""
MAX_SNAPSHOT_BYTES = 1 << 30
"""Bound on a snapshot fetched from the leader."""
HW_LOG_INTERVAL_S = 1.0
"""The high watermark is logged at INFO at most this often (every move at DEBUG)."""


TICK_MS = 250
"""How often a hosted quorum controller hears ``Tick`` (its broker leases) at least; sooner
when a lease runs out sooner (``_next_tick_ms``): a broker that stops heartbeating is fenced
when its session ends, not up to a tick later (issue 26)."""
MIN_TICK_MS = 10
"""Never sooner than this (a lease that runs out and fences nothing must not spin)."""
TICK = "controller-tick"
"""The shell's own timer kind (never handed to the Raft core)."""


class RaftCore(Protocol):
    def handle(self, event: object) -> list[object]: ...


class Runner(Protocol):
    """What the event thread hands each event to: the Raft driver over the port, or the
    glue (``fsm.kraft.on_raft.ControllerOnRaft``) that drives the Raft core and the quorum
    controller over the same port."""

    def process(self, event: object) -> None: ...


CoreFactory = Callable[[RaftConfig, QuorumState, LogSummary], RaftCore]
RunnerFactory = Callable[[RaftCore, NodePort], Runner]


def raft_driver(core: RaftCore, port: NodePort) -> Runner:
    """The Raft core alone, its effects to the port through the driver's table."""
    return RaftDriver(core.handle, port)


def _default_core(config: RaftConfig, state: QuorumState, summary: LogSummary) -> RaftCore:
    return RaftNode(config, state, summary)


class _Stop:
    """Queue item: leave the event loop after the items before it."""


class RaftNodeShell:
    """One Raft node: ``start()``, then it runs until ``stop()`` or a halt."""

    def __init__(
        self,
        config: RaftConfig,
        log_: NodeLog,
        transport: NodeTransport | None,
        *,
        make_core: CoreFactory = _default_core,
        make_runner: RunnerFactory = raft_driver,
        hosts_controller: bool = False,
        queue_capacity: int = DEFAULT_QUEUE_CAPACITY,
        flush_every: int = DEFAULT_FLUSH_EVERY,
        timers: Deadlines | None = None,
        on_halt: Callable[[str], None] | None = None,
    ) -> None:
        if flush_every < 1:
            raise ValueError(f"flush_every must be at least 1, not {flush_every}")
        self.config = config
        self.log = log_
        self.transport = transport
        self.timers = timers if timers is not None else Deadlines()
        self.queue = Inbox(queue_capacity, put_timeout=5.0)
        self.flush_every = flush_every
        self.on_halt = on_halt
        self._make_core = make_core
        self._make_runner = make_runner
        self.hosts_controller = hosts_controller
        """A quorum controller appends to the log; local appends are refused."""
        self.core: RaftCore | None = None
        self.runner: Runner | None = None
        self.replies = Replies()
        self.port = NodePort(self)
        self._status = NodeStatus(config.node_id)
        self._cond = threading.Condition()
        self._pending = PendingAppends()
        self._flushes: list[int] = []  # the ends of the Flush effects not yet answered
        self._since_flush = 0
        self._last_hw_log = 0.0
        self._ticket: AppendTicket | None = None  # the LocalAppend being handed to the core
        self._snapshot_id: OffsetAndEpoch | None = None  # the snapshot being fetched
        self._snapshot_data = bytearray()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()
        self._start_t = self._t0
        self._start_snapshot: OffsetAndEpoch | None = None
        self.prefix = f"[raft {config.node_id}]"

    # ------------------------------------------------------------------ lifecycle

    def attach_transport(self, transport: NodeTransport) -> None:
        """The transport, when it is made after the shell (it delivers into ``deliver``)."""
        if self._thread is not None:
            raise RuntimeError("the transport is attached before start()")
        self.transport = self.port.transport = transport

    def start(self) -> None:
        """Build the core from the (recovered) log and start the event thread."""
        if self.transport is None:
            raise RuntimeError("start() needs a transport (attach_transport)")
        self._start_t = time.monotonic()
        summary = self.log.summary()
        self._start_snapshot = summary.snapshot_id
        state = self.log.read_quorum_state()
        self.core = self._make_core(self.config, state, summary)
        self.runner = self._make_runner(self.core, self.port)
        self._status = NodeStatus(self.config.node_id, epoch=state.epoch,
                                  leader_id=state.leader_id,
                                  log_end_offset=summary.end_offset,
                                  flushed_offset=summary.end_offset,
                                  log_start_offset=summary.log_start_offset)
        log.info("%s starting: epoch %d, leader %d, voted %d; log end %d, start %d, "
                 "snapshot %s; voters %s", self.prefix, state.epoch, state.leader_id,
                 state.voted_id, summary.end_offset, summary.log_start_offset,
                 summary.snapshot_id, list(self.config.voters))
        self.queue.put(Start(self.now_ms()))
        if self.hosts_controller:
            self.timers.arm(TICK, -1, TICK_MS, 0, self.now_ms())
        self._thread = threading.Thread(target=self._run, name=f"kcontrol-raft-"
                                        f"{self.config.node_id}", daemon=True)
        self._thread.start()

    def stop(self, *, resign: bool = False, timeout: float = 10.0) -> None:
        """Stop the event thread, then close the log and the transport. ``resign``: a leader
        first resigns (EndQuorumEpoch) and keeps running until it hears of a leader in a
        later epoch, at most ``RESIGN_GRACE_S`` -- its voters elect a successor at once
        instead of waiting out their fetch timeout."""
        if self._thread is not None and self._thread.is_alive():
            st = self._status
            if resign and st.is_leader:
                self.queue.put(Resign(self.now_ms()))
                try:
                    self.wait_for(lambda s: s.epoch > st.epoch or s.failure is not None,
                                  RESIGN_GRACE_S)
                except TimeoutError:
                    log.info("%s no successor within %g s of resigning", self.prefix,
                             RESIGN_GRACE_S)
            self.queue.put(_Stop())
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.error("%s event thread did not stop within %g s", self.prefix, timeout)
        self.queue.close()
        self._pending.fail_all("node stopped")
        self.replies.fail_all("node stopped")
        for part in (self.transport, self.log):
            close = getattr(part, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 -- best effort on the way out
                    log.debug("%s closing %r", self.prefix, part, exc_info=True)

    # ------------------------------------------------------------------ other threads

    def now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def deliver(self, source: int, message: Any) -> bool:
        """The transport's callback: a message from node ``source``."""
        return self.queue.put(Received(source, message, self.now_ms()))

    def submit(self, event: object) -> bool:
        return self.queue.put(event)

    def append(self, records: tuple[Any, ...]) -> AppendTicket:
        """Queue ``records`` as one batch; the ticket says when they are committed."""
        ticket = AppendTicket()
        if not records:
            ticket.fail("no records to append")
        elif not self.queue.put(LocalAppend(tuple(records), ticket), client=True):
            ticket.fail("the node's queue is full or closed")
        return ticket

    def call(self, fn: Callable[[], Any]) -> Future[Any]:
        """Run ``fn`` on the event thread, between two events (reads of what the event thread
        owns: the log, the controller's image)."""
        future: Future[Any] = Future()
        if not self.queue.put(Call(fn, future), client=True):
            future.set_exception(RuntimeError("the node's queue is full or closed"))
        return future

    def request(self, request: Any) -> Future[Any]:
        """Hand ``request`` to the hosted quorum controller; the future holds its answer."""
        if not self.hosts_controller:
            raise RuntimeError("this node hosts no quorum controller")
        token, future = self.replies.open()
        if not self.queue.put(ControllerRequest(token, request), client=True):
            self.replies.fail(token, "the node's queue is full or closed")
        return future

    @property
    def status(self) -> NodeStatus:
        return self._status

    def wait_for(self, predicate: Callable[[NodeStatus], bool], timeout: float) -> NodeStatus:
        """The status once ``predicate`` holds; ``TimeoutError`` (with the last status)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._status):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.prefix} not within {timeout:g} s: "
                                       f"{self._status}")
                self._cond.wait(left)
            return self._status

    # ------------------------------------------------------------------ event thread

    def _run(self) -> None:
        try:
            while True:
                item = self.queue.get(self._wait_s())
                if item is not None:
                    if item is CLOSED or isinstance(item, _Stop):
                        break
                    self._item(item)
                    self._since_flush += 1
                self._fire_due()
                if self._flushes and (
                        self.queue.size == 0 or self._since_flush >= self.flush_every):
                    self._flush()
                self._publish()
        except Exception as exc:  # noqa: BLE001 -- halts the node, never silently
            self._halt(exc)

    def _wait_s(self) -> float | None:
        if self._flushes:
            return 0.0
        deadline = self.timers.next_deadline()
        if deadline is None:
            return 1.0
        return max(0.0, (deadline - self.now_ms()) / 1000.0)

    def _item(self, item: object) -> None:
        if isinstance(item, Received) and isinstance(item.message, FetchSnapshotResponse):
            self._gather(item.message)
        if isinstance(item, LocalAppend):
            self._local_append(item)
        elif isinstance(item, Call):
            item.run()
        else:
            self._step(item)
            if isinstance(item, Start):
                self._started()

    def _started(self) -> None:
        """After ``Start``: a hosted controller has loaded the snapshot its log begins with
        (when the runner was made: built into an image as it was read,
        ``port.read_snapshot_image``, or read and decoded, ``port.read_snapshot``, and
        replayed with ``Start``). Said once, with the time since ``start()`` began."""
        snap = self._start_snapshot
        if snap is None or not self.hosts_controller:
            return
        took = time.monotonic() - self._start_t
        controller = getattr(self.runner, "controller", None)
        image = getattr(controller, "committed", None)
        partitions = image.partition_count() if image is not None else -1
        log.info("%s controller image loaded from snapshot %s: %d topics, %d partitions, "
                 "%.2f s after the start (read, checked and decoded in %.2f s); %.2f s of CPU "
                 "since the process started", self.prefix, snap,
                 len(getattr(image, "topics", ())), partitions, took, self.port.snapshot_read_s,
                 time.process_time())
        self._status = _with(self._status, snapshot_loaded_offset=snap.offset,
                             snapshot_loaded_at=time.time())

    def _fire_due(self) -> None:
        for kind, destination in self.timers.pop_due(self.now_ms()):
            if kind == TICK:
                self._step(Tick(self.now_ms()))
                self.timers.arm(TICK, -1, self._next_tick_ms(), 0, self.now_ms())
            else:
                self._step(TimerFired(kind, destination, self.now_ms()))

    def _next_tick_ms(self) -> int:
        """Until the next ``Tick``: ``TICK_MS``, or less if a lease of the hosted controller
        runs out before (it is fenced on the first tick past it; a heartbeat meanwhile only
        makes that tick find nothing to do)."""
        controller = getattr(self.runner, "controller", None)
        deadline = controller.next_deadline() if controller is not None else None
        if deadline is None:
            return TICK_MS
        return int(min(TICK_MS, max(MIN_TICK_MS, deadline + 1 - self.now_ms())))

    def _flush(self) -> None:
        flushes, self._flushes, self._since_flush = self._flushes, [], 0
        self.log.flush()
        self._status = _with(self._status, flushed_offset=self._status.log_end_offset)
        self._step(Flushed(max(flushes)))  # one answer for them all (the contract allows it)

    def _step(self, event: object) -> None:
        assert self.runner is not None
        self.runner.process(event)

    def _local_append(self, item: LocalAppend) -> None:
        st = self._status
        if self.hosts_controller:
            item.ticket.fail("the quorum controller owns this log's appends")
            return
        if not st.is_leader:
            item.ticket.fail(f"not the leader (role {st.role.value}, leader {st.leader_id}, "
                             f"epoch {st.epoch})")
            return
        if len(self._pending) >= MAX_PENDING:
            item.ticket.fail(f"{MAX_PENDING} appends already wait for their commit")
            return
        t = item.ticket
        t.epoch, t.base_offset = st.epoch, st.log_end_offset
        self._ticket = t
        try:
            self._step(ClientAppend(st.epoch, st.log_end_offset, item.records))
        finally:
            self._ticket = None
        if t.done:  # refused
            return
        t.end_offset = t.base_offset + len(item.records)
        self._pending.add(t)
        self._pending.committed(self._status.high_watermark)

    def _publish(self) -> None:
        replayed = getattr(self.runner, "applied", None)  # the glue's, on a controller
        if type(replayed) is int and replayed != self._status.replayed_offset:
            self._status = _with(self._status, replayed_offset=replayed)
        with self._cond:
            self._cond.notify_all()

    def _halt(self, exc: BaseException) -> None:
        reason = halt_reason(exc, getattr(self.log, "directory", None))
        log.critical("%s halted: %s", self.prefix, reason, exc_info=exc)
        self._status = _with(self._status, failure=reason)
        self.queue.close()
        self.timers.cancel_all()
        self._pending.fail_all(f"node halted: {reason}")
        self.replies.fail_all(f"node halted: {reason}")
        self._publish()
        if self.on_halt is not None:
            self.on_halt(reason)

    # ------------------------------------------------------------------ from the port

    def appended(self, end_offset: int) -> None:
        self._status = _with(self._status, log_end_offset=end_offset)

    def truncated(self, offset: int) -> None:
        st = self._status
        self._status = _with(st, log_end_offset=offset,
                             flushed_offset=min(st.flushed_offset, offset))

    def _gather(self, m: FetchSnapshotResponse) -> None:
        """Keep a snapshot chunk a FetchSnapshot answer carries, at its position (one snapshot
        at a time; a chunk for another snapshot starts over). The core decides what to ask
        next; the log checks the whole at ``InstallSnapshot``."""
        chunk = m.chunk
        if m.error is not ErrorCode.NONE or not isinstance(chunk, bytes | bytearray):
            return
        if self._snapshot_id != m.snapshot_id:
            self._snapshot_id, self._snapshot_data = m.snapshot_id, bytearray()
        buf = self._snapshot_data
        if m.position > len(buf):
            return  # a gap: the core asks again from where it is
        if m.position + len(chunk) > MAX_SNAPSHOT_BYTES:
            raise RuntimeError(f"snapshot {m.snapshot_id} over {MAX_SNAPSHOT_BYTES} bytes")
        buf[m.position:m.position + len(chunk)] = chunk

    def snapshot_received(self, snapshot_id: OffsetAndEpoch) -> bytes:
        """The snapshot gathered for ``InstallSnapshot`` (and forgotten here)."""
        if self._snapshot_id != snapshot_id:
            raise RuntimeError(f"install of snapshot {snapshot_id}: none was received")
        data, self._snapshot_id, self._snapshot_data = bytes(self._snapshot_data), None, \
            bytearray()
        return data

    def snapshot_installed(self, snapshot_id: OffsetAndEpoch) -> None:
        st = self._status
        log.info("%s installed snapshot %s from the leader (log end was %d)", self.prefix,
                 snapshot_id, st.log_end_offset)
        self._status = _with(st, log_end_offset=snapshot_id.offset,
                             flushed_offset=snapshot_id.offset,
                             log_start_offset=snapshot_id.offset,
                             snapshots_installed=st.snapshots_installed + 1)

    def deleted_before(self, offset: int) -> None:
        log.info("%s log below %d deleted (a snapshot covers it)", self.prefix, offset)
        self._status = _with(self._status, log_start_offset=offset)

    def flush_wanted(self, end_offset: int) -> None:
        self._flushes.append(end_offset)

    def role_changed(self, e: RoleChanged) -> None:
        st = self._status
        log.info("%s %s -> %s in epoch %d (leader %d); log end %d, high watermark %d",
                 self.prefix, e.source.value, e.target.value, e.epoch, e.leader_id,
                 st.log_end_offset, st.high_watermark)
        if st.role is RaftRole.LEADER and (e.target is not RaftRole.LEADER
                                           or e.epoch != st.epoch):
            self._pending.fail_all(f"leadership of epoch {st.epoch} ended before the commit "
                                   "(the outcome is unknown)")
        self._status = _with(st, role=e.target, epoch=e.epoch, leader_id=e.leader_id)

    def high_watermark(self, offset: int) -> None:
        self._status = _with(self._status, high_watermark=offset)
        self._pending.committed(offset)
        now = time.monotonic()
        if now - self._last_hw_log >= HW_LOG_INTERVAL_S:
            self._last_hw_log = now
            log.info("%s high watermark %d (epoch %d, %s)", self.prefix, offset,
                     self._status.epoch, self._status.role.value)
        else:
            log.debug("%s high watermark %d", self.prefix, offset)

    def append_refused(self, e: AppendRefused) -> None:
        log.info("%s append refused in epoch %d (node's epoch %d): %s", self.prefix, e.epoch,
                 e.leader_epoch, e.reason)
        if self._ticket is not None:
            self._ticket.fail(f"refused: {e.reason}")


def _with(st: NodeStatus, **changes: Any) -> NodeStatus:
    return dataclasses.replace(st, **changes)
