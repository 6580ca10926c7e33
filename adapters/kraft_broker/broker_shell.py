"""``BrokerShell``: the KRaft broker core (``fsm.kraft.broker``) on one event thread.

The event thread (``kcontrol-kraft-broker-<id>``) owns the core and is the only thread that
calls it: it takes one item at a time from one bounded queue, hands events to the core
through ``KRaftBrokerDriver`` and carries out the effects in order (``BrokerPort``):

* ``SendToController`` -> the controller channel (``send``, never blocking); its answer comes
  back later as ``ControllerResponse`` / ``ControllerUnreachable``;
* ``ScheduleHeartbeat`` -> the one heartbeat deadline (re-armed), waited on between items;
  ``HeartbeatDue`` never passes through the queue;
* ``BecomeLeader`` / ``BecomeFollower`` / ``UpdateIsr`` / ``DeleteReplica`` -> ``ReplicaDirs``;
* ``ReplyMetadata`` -> the client waiting on the token (``metadata``);
* ``Exit`` -> the loop ends after this event and ``on_exit`` is called (on its own thread:
  it stops the process, which joins this one); the process's last step, once its parts
  are stopped, is ``end()``: ``Exited`` to the core (SHUTTING_DOWN -> NOT_RUNNING, in the
  state-change log and the status). A crash (kill -9) sends nothing: the process is gone
  before anything could, and the controller learns of it from the lapsed lease;
* ``LifecycleChange`` -> a line of the state-change log (``kcontrol.broker.state.change``)
  and of the server log.

After each item the core's notes (events it ignored, AlterPartition errors) are drained into
the server log, the partitions its metadata named are noted (``changes``, for the ISR
expander's incremental scan), and the listeners of ``on_image_change`` are called if the
metadata offset moved or an AlterPartition was answered (the ISR expander's ``wake``).

Who puts what: the observer's thread puts committed metadata, the channel's thread the
controller's answers, a signal handler ``SigTerm`` -- these wait while the queue is full
(dropping one would leave the core waiting for an answer or looking at a gap); clients put
``MetadataRequest`` and reads (``call``) and are refused at once when it is full. Time is
the shell's monotonic clock; the incarnation id is drawn here (``os.urandom``) at start.
An exception in the core or in an effect halts the broker (``failure`` says why, then
``on_exit``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from adapters.kraft_broker.isr_changes import ChangeLog
from adapters.kraft_broker.replica_dirs import ReplicaDirs, ReplicaEffect
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.effects import (
    Exit,
    LifecycleChange,
    MetadataAnswer,
    ReplyMetadata,
    ScheduleHeartbeat,
    SendToController,
)
from fsm.kraft.broker.events import (
    ControllerResponse,
    ControllerUnreachable,
    Exited,
    HeartbeatDue,
    MetadataRequest,
    SigTerm,
    Start,
)
from fsm.kraft.broker_driver import KRaftBrokerDriver
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller.requests import AlterPartitionRequest

log = logging.getLogger("kcontrol.kraft.broker")
state_log = logging.getLogger("kcontrol.broker.state.change")

DEFAULT_QUEUE_CAPACITY = 10_000
INTERNAL_PUT_WAIT_S = 1.0
"""An internal put waits in rounds of this long, checking that the shell still runs."""
CLIENT_PUT_WAIT_S = 0.5
"""How long a client's item waits for room in a full queue before it is refused."""


class Channel(Protocol):
    def send(self, request: Any) -> None:
        """Send the core's request; its answer (or its loss) comes back as an event."""


@dataclasses.dataclass(frozen=True, slots=True)
class BrokerStatus:
    broker_id: int
    state: str = KRaftBrokerState.NOT_RUNNING.value
    broker_epoch: int | None = None
    metadata_offset: int = -1
    fenced: bool | None = None
    """What the replayed image says of this broker (None: not registered in it)."""
    in_controlled_shutdown: bool = False
    incarnation_id: str | None = None
    replicas: int = 0
    leaders: int = 0
    failure: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(slots=True)
class _Call:
    fn: Callable[[KRaftBroker], Any]
    future: Future[Any]


class _Stop:
    """Queue item: leave the loop after the items before it."""


class BrokerShell:
    def __init__(self, core: KRaftBroker, channel: Channel, replicas: ReplicaDirs, *,
                 on_exit: Callable[[str], None] | None = None,
                 queue_capacity: int = DEFAULT_QUEUE_CAPACITY) -> None:
        self.core = core
        self.channel = channel
        self.replicas = replicas
        self.on_exit = on_exit
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=queue_capacity)
        self.driver = KRaftBrokerDriver(core.handle, BrokerPort(self))
        self.prefix = f"[broker {core.broker_id}]"
        self._t0 = time.monotonic()
        self._heartbeat_at: int | None = None  # now_ms of the next HeartbeatDue
        self._replies: dict[int, Future[MetadataAnswer]] = {}
        self._next_token = 0
        self._tokens = threading.Lock()
        self._cond = threading.Condition()
        self._status = BrokerStatus(core.broker_id)
        self._image_listeners: list[Callable[[], None]] = []
        self.changes = ChangeLog()
        """The partitions the metadata changed since the ISR expander last looked (its
        ``IncrementalScan`` takes them, on this thread)."""
        self._counted: tuple[int, KRaftBrokerState] | None = None
        self._counts = (0, 0)
        self._running = False
        self._exiting = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self, local_replicas: tuple[Any, ...] = ()) -> BrokerShell:
        incarnation = os.urandom(16)
        self._running = True
        self.queue.put(Start(incarnation, self.now_ms(), tuple(local_replicas)))
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-kraft-broker-{self.core.broker_id}")
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Leave the loop (after the items queued) and join the thread; no controlled
        shutdown (``sig_term`` is that)."""
        if self._thread is None:
            return
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._put(_Stop())
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.error("%s event thread did not stop within %g s", self.prefix, timeout)
        self._running = False
        self._fail_replies("the broker stopped")

    def end(self) -> None:
        """The process ends (after ``stop``, its parts stopped): ``Exited`` to the core, on
        the caller's thread -- the event thread is over. After ``Exit`` the core moves
        SHUTTING_DOWN -> NOT_RUNNING and forgets (the state-change log's last line, the
        status's last state); in any other state (stopped without a shutdown) it ignores it.
        Nothing after a halt (the core failed mid-event) or while the thread still runs."""
        if self._thread is None or self._thread.is_alive() or self._status.failure is not None:
            return
        self.driver.process(Exited())
        self._publish(listeners=False)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    # ------------------------------------------------------------------ other threads

    def submit(self, event: object) -> bool:
        """An internal event (metadata, a controller's answer, SigTerm): waits for room while
        the shell runs; False once it has stopped."""
        return self._put(event)

    def sig_term(self) -> bool:
        return self._put(SigTerm())

    def metadata(self, topics: tuple[str, ...] | None) -> Future[MetadataAnswer]:
        """A client's Metadata, answered from the core's image (``ReplyMetadata``)."""
        future: Future[MetadataAnswer] = Future()
        with self._tokens:
            self._next_token += 1
            token = self._next_token
            self._replies[token] = future
        if not self._put(MetadataRequest(token, topics), client=True):
            with self._tokens:
                self._replies.pop(token, None)
            future.set_exception(RuntimeError("the broker's queue is full or it stopped"))
        return future

    def call(self, fn: Callable[[KRaftBroker], Any]) -> Future[Any]:
        """Run ``fn(core)`` on the event thread between two events (reads of the image)."""
        future: Future[Any] = Future()
        if not self._put(_Call(fn, future), client=True):
            future.set_exception(RuntimeError("the broker's queue is full or it stopped"))
        return future

    def on_image_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` on the event thread after each item that moved the metadata
        offset or answered an AlterPartition (it must only signal: ``IsrExpander.wake``). Add
        listeners before ``start``."""
        self._image_listeners.append(listener)

    @property
    def status(self) -> BrokerStatus:
        return self._status

    def wait_for(self, predicate: Callable[[BrokerStatus], bool], timeout: float
                 ) -> BrokerStatus:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._status):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.prefix} not within {timeout:g} s: "
                                       f"{self._status}")
                self._cond.wait(left)
            return self._status

    def _put(self, item: object, client: bool = False) -> bool:
        if client:
            if not self._running:
                return False
            try:
                self.queue.put(item, timeout=CLIENT_PUT_WAIT_S)
                return True
            except queue.Full:
                log.warning("%s queue full (%d): %s refused", self.prefix,
                            self.queue.maxsize, type(item).__name__)
                return False
        while self._running:
            try:
                self.queue.put(item, timeout=INTERNAL_PUT_WAIT_S)
                return True
            except queue.Full:
                log.warning("%s queue full (%d): %s waits", self.prefix, self.queue.maxsize,
                            type(item).__name__)
        return False

    # ------------------------------------------------------------------ event thread

    def _run(self) -> None:
        try:
            while not self._exiting:
                try:
                    item = self.queue.get(timeout=self._wait_s())
                except queue.Empty:
                    item = None
                if isinstance(item, _Stop):
                    break
                if isinstance(item, _Call):
                    _run_call(item, self.core)
                elif item is not None:
                    self.driver.process(item)
                    self.changes.note(item)
                self._fire_due()
                self._publish(_answers_alter_partition(item))
        except Exception as exc:  # noqa: BLE001 -- halts the broker, never silently
            reason = f"{type(exc).__name__}: {exc}"
            log.critical("%s halted: %s", self.prefix, reason, exc_info=exc)
            self._status = dataclasses.replace(self._status, failure=reason)
            self._exiting = True
            self._publish()
        finally:
            self._running = False
            self._fail_replies("the broker stopped")
        if self._exiting and self.on_exit is not None:
            reason = self._status.failure or "the core exited"
            threading.Thread(target=self.on_exit, args=(reason,), daemon=True,
                             name=f"kcontrol-kraft-broker-{self.core.broker_id}-exit").start()

    def _wait_s(self) -> float:
        if self._heartbeat_at is None:
            return 1.0
        return max(0.0, (self._heartbeat_at - self.now_ms()) / 1000.0)

    def _fire_due(self) -> None:
        if self._exiting or self._heartbeat_at is None:
            return
        now = self.now_ms()
        if now >= self._heartbeat_at:
            self._heartbeat_at = None
            self.driver.process(HeartbeatDue(now))

    def _publish(self, wake: bool = False, listeners: bool = True) -> None:
        core = self.core
        for note in core.drain_notes():  # logged, so the list stays short
            log.info("%s %s", self.prefix, note)
        me = core.image.brokers.get(core.broker_id)
        key = (core.metadata_offset, core.state)
        if key != self._counted:  # replicas change with the metadata (and at RECOVERY) only
            self._counted, self._counts = key, core.replica_counts()
        replicas, leaders = self._counts
        incarnation = core.incarnation_id
        moved = wake or core.metadata_offset != self._status.metadata_offset
        self._status = dataclasses.replace(
            self._status, state=core.state.value, broker_epoch=core.broker_epoch,
            metadata_offset=core.metadata_offset, fenced=None if me is None else me.fenced,
            in_controlled_shutdown=bool(me is not None and me.in_controlled_shutdown),
            incarnation_id=None if incarnation is None else incarnation.hex(),
            replicas=replicas, leaders=leaders)
        with self._cond:
            self._cond.notify_all()
        if moved and listeners:
            for listener in self._image_listeners:
                listener()

    def _fail_replies(self, why: str) -> None:
        with self._tokens:
            replies, self._replies = self._replies, {}
        for future in replies.values():
            if not future.done():
                future.set_exception(RuntimeError(why))

    # ------------------------------------------------------------------ from the port

    def _reply(self, e: ReplyMetadata) -> None:
        with self._tokens:
            future = self._replies.pop(e.token, None)  # type: ignore[call-overload]
        if future is not None and not future.done():
            future.set_result(e.response)

    def _exit(self) -> None:
        self._exiting = True
        self._heartbeat_at = None


def _answers_alter_partition(item: object) -> bool:
    return isinstance(item, (ControllerResponse, ControllerUnreachable)) and \
        isinstance(item.request, AlterPartitionRequest)


def _run_call(call: _Call, core: KRaftBroker) -> None:
    try:
        call.future.set_result(call.fn(core))
    except Exception as exc:  # noqa: BLE001 -- the caller hears it
        call.future.set_exception(exc)


class BrokerPort:
    """The core's effects carried out (``fsm.kraft.broker_driver.KRaftBrokerPort``); event
    thread only."""

    __slots__ = ("shell",)

    def __init__(self, shell: BrokerShell) -> None:
        self.shell = shell

    def send_to_controller(self, effect: SendToController) -> None:
        self.shell.channel.send(effect.request)

    def schedule_heartbeat(self, effect: ScheduleHeartbeat) -> None:
        self.shell._heartbeat_at = self.shell.now_ms() + effect.delay_ms

    def replica_role(self, effect: ReplicaEffect) -> None:
        self.shell.replicas.apply(effect)

    def reply_metadata(self, effect: ReplyMetadata) -> None:
        self.shell._reply(effect)

    def exit(self, effect: Exit) -> None:
        log.info("%s exits (%s)", self.shell.prefix, self.shell.core.state.value)
        self.shell._exit()

    def lifecycle_changed(self, effect: LifecycleChange) -> None:
        core = self.shell.core
        for logger in (state_log, log):  # the state-change log, and the server log too
            logger.info("%s lifecycle %s -> %s (broker epoch %s, metadata offset %d)",
                        self.shell.prefix, effect.source.value, effect.target.value,
                        core.broker_epoch, core.metadata_offset)
