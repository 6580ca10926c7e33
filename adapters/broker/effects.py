"""``BrokerExecutor``: the broker process's event thread, which hands events to its
``BrokerCore`` and carries out the effects the core returns.

Who feeds it (every producer only enqueues; ``submit`` never blocks for long):

* the process itself: ``BrokerStarted``, ``ShutdownRequested`` (SIGTERM);
* the request handlers: effects other than ``Respond`` that a controller request produced
  (``execute_later``);
* the ISR expander: ``IsrChangeWanted``;
* the broker's kazoo session: ``BrokerSessionExpired`` (through ``BrokerRegistrar``);
* timers: ``TimerFired`` (controlled-shutdown retry);
* the controlled-shutdown sender thread: ``ControlledShutdownAnswered``.

Every call into the core is made holding ``lock`` (the lock the request handlers hold too);
I/O is never done under it. Events are handed in rounds by the broker core's driver
(``fsm.driver.BrokerDriver``), the very loop the checker's world runs, over this executor's
port (``adapters.broker.port.ExecutorPort``): a round's events are handed, then their
effects are executed in order, on this thread, and what they produce is the next round:

* ``LoadBrokerMetadata`` -> bulk read of assignments and partition states ->
  ``BrokerMetadataLoaded`` (handed to the core at once);
* ``Register`` -> ``BrokerRegistrar.register()`` (``/brokers/ids/<id>``, epoch = czxid) ->
  ``BrokerRegistered(epoch)``. A znode held by another live session past the timeout is
  fatal (another process runs with this id): ``on_fatal``;
* ``BrokerZkWrite`` -> conditional writes, each op on its own (ISR updates, ISR change
  notifications) -> ``BrokerWriteResult``; the writes of one round go out together,
  pipelined, and their ISR change notifications are merged (``_write_many``);
* ``SendControlledShutdown`` -> a short-lived thread finds the controller (``/controller``,
  then its registration), sends ControlledShutdown v2 to its data-plane listener and submits
  the answer (or an error answer) as ``ControlledShutdownAnswered`` stamped with the epoch
  the request carried; the core's retry timer bounds the wait;
* ``StartTimer`` / ``CancelTimer`` -> ``adapters.controller.timers.Timers``;
* ``Exit`` -> ``on_exit()``: the process closes everything (not on this thread).

A read or registration that fails on a connection problem is tried again after
``retry_s`` (the effect is queued again), so a ZooKeeper outage delays the broker without
stopping it. The state-change log is drained after every core call and written one line
per record on the ``kcontrol.broker.state.change`` logger.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from adapters.broker.port import ExecutorPort
from adapters.controller.timers import Timers
from adapters.network.client import WireClient
from adapters.network.codec import ApiKey, CodecError
from adapters.network.codec import convert as C
from adapters.zookeeper.broker_registration import BrokerRegistrar, RegistrationError
from adapters.zookeeper.reads import ZkReader
from adapters.zookeeper.writer import WriteAborted
from fsm import zk_paths
from fsm.broker import BrokerCore, BrokerLogRecord
from fsm.driver import BrokerDriver
from fsm.effects import (
    BrokerZkWrite,
    CreateOp,
    LoadBrokerMetadata,
    Register,
    SetDataOp,
)
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerRegistered,
    BrokerWriteResult,
    ControlledShutdownAnswered,
    WriteFailure,
)
from fsm.requests import ControlledShutdownRequest, ControlledShutdownResponse
from fsm.values import Endpoint
from fsm.znodes import IsrChangeZnode

log = logging.getLogger("kcontrol.broker")
state_log = logging.getLogger("kcontrol.broker.state.change")

_STOP = object()
_HANDLE_SLICE = 500  # events handed to the core per acquisition of its lock
ISR_NOTIFICATION_MAX = 1000  # partitions per merged /isr_change_notification znode (~40 KB)
_ISR_NOTIFICATION = zk_paths.isr_change(zk_paths.ISR_CHANGE_PREFIX)


def _is_isr_notification(write: BrokerZkWrite) -> bool:
    """The core's ISR change notification: one sequential create under the prefix."""
    if len(write.ops) != 1:
        return False
    op = write.ops[0]
    return (isinstance(op, CreateOp) and op.sequential and op.path == _ISR_NOTIFICATION
            and isinstance(op.data, IsrChangeZnode))
_ISR_LINES = 10  # more ISR records than this in one batch: one summary line at INFO
_ZK_ERRORS = (KazooException, KazooTimeoutError)


class _Effects:
    """Effects to execute (from a request handler thread, or a retry)."""

    __slots__ = ("effects",)

    def __init__(self, effects: list[Any]) -> None:
        self.effects = effects


class _Events:
    """Events to hand to the core together (``submit_many``: the ISR expander's scan)."""

    __slots__ = ("events",)

    def __init__(self, events: list[object]) -> None:
        self.events = events


def log_records(prefix: str, records: list[BrokerLogRecord]) -> None:
    """One line per state-change record: lifecycle moves and ISR changes at INFO, rejected
    input at WARNING, per-partition applications and ignored events at DEBUG -- and one INFO
    line summing up the partitions a batch of records applied (a LeaderAndIsr for 10,000
    partitions is one line, not 10,000)."""
    applied = [r for r in records if r.kind == "applied"]
    if applied:
        shown = "; ".join(f"{r.entity} {r.detail}" for r in applied[:3])
        more = f"; and {len(applied) - 3} more" if len(applied) > 3 else ""
        state_log.info("%s applied %d partition change(s): %s%s", prefix, len(applied),
                       shown, more)
    isr = [r for r in records if r.kind == "isr"]
    many_isr = len(isr) > _ISR_LINES
    if many_isr:
        state_log.info("%s %d ISR record(s), e.g. %s: %s", prefix, len(isr), isr[0].entity,
                       isr[0].detail)
    for rec in records:
        if rec.kind == "rejected":
            level = logging.WARNING
        elif rec.kind == "transition" or (rec.kind == "isr" and not many_isr):
            level = logging.INFO
        else:
            level = logging.DEBUG
        if state_log.isEnabledFor(level):
            state_log.log(level, "%s %s %s: %s", prefix, rec.kind, rec.entity, rec.detail)


class BrokerExecutor:
    def __init__(
        self,
        broker_id: int,
        core: Callable[[], BrokerCore],
        lock: threading.Lock,
        registrar: BrokerRegistrar,
        *,
        client_listener: str,
        on_exit: Callable[[], None],
        on_fatal: Callable[[str], None],
        register_timeout_s: float = 30.0,
        request_timeout_s: float = 30.0,
        retry_s: float = 1.0,
        read_timeout_s: float = 10.0,
        queue_capacity: int = 10_000,
        changed: threading.Condition | None = None,
    ) -> None:
        self.broker_id = broker_id
        self._core = core
        self.lock = lock
        self.changed = changed  # notified (under ``lock``) after every core call here
        self.registrar = registrar
        self.client_listener = client_listener
        self.on_exit = on_exit
        self.on_fatal = on_fatal
        self.register_timeout_s = register_timeout_s
        self.request_timeout_s = request_timeout_s
        self.retry_s = retry_s
        self.reader = ZkReader(registrar.client, timeout=read_timeout_s)
        self._cs_reader = ZkReader(registrar.client, timeout=read_timeout_s)
        self.timers = Timers(self.submit)
        self._queue: queue.Queue[object] = queue.Queue(maxsize=queue_capacity)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-broker-{broker_id}-events")
        self._stopping = threading.Event()
        self._retries: set[threading.Timer] = set()
        self.prefix = f"[broker {broker_id}]"
        self.driver = BrokerDriver(ExecutorPort(self))
        """The broker core's loop (``fsm.driver``), over this executor's port."""

    # ------------------------------------------------------------------ producers

    def start(self) -> BrokerExecutor:
        self._thread.start()
        return self

    def submit(self, event: object) -> bool:
        """Queue an event for the core; False when stopping or the queue stayed full."""
        if self._stopping.is_set():
            return False
        try:
            self._queue.put(event, timeout=10.0)
            return True
        except queue.Full:
            log.error("%s event queue full: %r dropped", self.prefix, event)
            return False

    def submit_many(self, events: list[object]) -> bool:
        """Queue events handed to the core in one round: the ZooKeeper writes they produce
        are sent together (``_write_many``)."""
        return self.submit(_Events(list(events))) if events else True

    def execute_later(self, effects: list[Any]) -> None:
        """Effects a request handler got from the core (run on the event thread, in order)."""
        if effects:
            self.submit(_Effects(list(effects)))

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.timers.cancel_all()
        for t in list(self._retries):
            t.cancel()
        with contextlib.suppress(queue.Full):  # full: the loop sees _stopping after a get
            self._queue.put_nowait(_STOP)
        if self._thread.ident is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def drain_log(self) -> None:
        """Write what the core logged (handler threads call this after a request)."""
        with self.lock:
            core = self._core()
            records = core.drain_log()
            prefix = self._prefix(core)
        log_records(prefix, records)

    def _prefix(self, core: BrokerCore) -> str:
        return f"{self.prefix} epoch={core.epoch}"

    # ------------------------------------------------------------------ event thread

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP or self._stopping.is_set():
                return
            try:
                if isinstance(item, _Effects):
                    self.driver.execute(item.effects)
                elif isinstance(item, _Events):
                    self.driver.process(item.events)
                else:
                    self.driver.process((item,))
            except Exception:  # noqa: BLE001 -- the event thread never dies
                log.exception("%s handling %r failed", self.prefix, item)

    def _handle_all(self, events: list[object]) -> list[Any]:
        """The effects of ``events``, in order; the core's lock is taken per slice of
        ``_HANDLE_SLICE`` events, so requests are not held up by a long round."""
        effects: list[Any] = []
        for start in range(0, len(events), _HANDLE_SLICE):
            with self.lock:
                core = self._core()
                for event in events[start:start + _HANDLE_SLICE]:
                    effects.extend(core.handle(event))
                records = core.drain_log()
                prefix = self._prefix(core)
                if self.changed is not None:
                    self.changed.notify_all()
            log_records(prefix, records)
        return effects

    def _retry_later(self, effect: object, what: str, exc: BaseException) -> None:
        log.warning("%s %s failed (%s: %s); again in %.1f s", self.prefix, what,
                    type(exc).__name__, exc or "no details", self.retry_s)

        def again() -> None:
            self._retries.discard(timer)
            self.execute_later([effect])

        timer = threading.Timer(self.retry_s, again)
        timer.daemon = True
        self._retries.add(timer)
        timer.start()

    # ------------------------------------------------------------------ ZooKeeper effects

    def _load(self) -> object | None:
        try:
            loaded = self.reader.broker_metadata()
        except _ZK_ERRORS as exc:
            self._retry_later(LoadBrokerMetadata(), "reading the cluster metadata", exc)
            return None
        log.info("%s read %d topics, %d partition states", self.prefix, len(loaded.topics),
                 len(loaded.partition_states))
        return loaded

    def _register(self) -> object | None:
        try:
            epoch = self.registrar.register(timeout=self.register_timeout_s)
        except RegistrationError as exc:
            log.error("%s %s", self.prefix, exc)
            self.on_fatal(str(exc))
            return None
        except _ZK_ERRORS as exc:
            self._retry_later(Register(), "registration", exc)
            return None
        return BrokerRegistered(epoch)

    def _write(self, write: BrokerZkWrite) -> BrokerWriteResult:
        try:
            return self.registrar.execute(write)
        except _ZK_ERRORS as exc:
            log.warning("%s write #%d failed: %s", self.prefix, write.token,
                        type(exc).__name__)
            return BrokerWriteResult(write.token, tuple(
                WriteFailure(op.path, "ConnectionLoss") for op in write.ops))

    def _write_many(self, writes: list[BrokerZkWrite]) -> list[BrokerWriteResult]:
        """The results of ``writes``, in order, for about the cost of one write.

        The core asks for one write per partition (an ISR update conditional on its
        version; after it commits, an ISR change notification naming that partition). Done
        one by one, 10,000 ISR changes are 20,000 round trips. Here:

        * the conditional ``SetDataOp``s of every write are sent together, pipelined, each
          still on its own (``execute_unfenced_ops``: one failing does not fail the others);
        * the ISR change notifications are merged: one ``/isr_change_notification`` znode
          lists the partitions of up to ``ISR_NOTIFICATION_MAX`` of them (what the
          controller reads is the set of partitions; Kafka's leaders batch them the same
          way), each merged write answered with that znode's outcome.

        Writes of other shapes, or several naming the same path, go one by one."""
        if len(writes) == 1:
            return [self._write(writes[0])]
        notes = [w for w in writes if _is_isr_notification(w)]
        plain = [w for w in writes if not _is_isr_notification(w)]
        paths = [op.path for w in plain for op in w.ops]
        if len(set(paths)) != len(paths) or not all(
                isinstance(op, SetDataOp) for w in plain for op in w.ops):
            return [self._write(w) for w in writes]
        results: dict[int, BrokerWriteResult] = {}
        if plain:
            failed = self._unfenced([op for w in plain for op in w.ops])
            for w in plain:
                results[id(w)] = BrokerWriteResult(
                    w.token, tuple(failed[op.path] for op in w.ops if op.path in failed))
        for start in range(0, len(notes), ISR_NOTIFICATION_MAX):
            chunk = notes[start:start + ISR_NOTIFICATION_MAX]
            tps = sorted({tp for w in chunk for tp in w.ops[0].data.partitions})
            op = CreateOp(_ISR_NOTIFICATION, IsrChangeZnode(tuple(tps)), sequential=True)
            failure = self._unfenced([op]).get(op.path)
            for w in chunk:
                results[id(w)] = BrokerWriteResult(w.token, () if failure is None else (
                    WriteFailure(w.ops[0].path, failure.code),))
        if len(writes) > 2:
            log.info("%s %d ZooKeeper writes in one round (%d ISR updates, %d notifications "
                     "merged into %d)", self.prefix, len(writes), len(plain), len(notes),
                     -(-len(notes) // ISR_NOTIFICATION_MAX))
        return [results[id(w)] for w in writes]

    def _unfenced(self, ops: list[Any]) -> dict[str, WriteFailure]:
        """path -> failure of ``ops`` written each on its own, pipelined; a connection
        problem fails them all (ConnectionLoss: the core treats it as not committed)."""
        try:
            failures, _ = self.registrar.writer.execute_unfenced_ops(ops)
        except (WriteAborted, *_ZK_ERRORS) as exc:
            log.warning("%s %d writes failed: %s", self.prefix, len(ops), type(exc).__name__)
            return {op.path: WriteFailure(op.path, "ConnectionLoss") for op in ops}
        return {f.path: f for f in failures}

    # ------------------------------------------------------------------ controlled shutdown

    def _send_controlled_shutdown(self, request: ControlledShutdownRequest) -> None:
        threading.Thread(target=self._ask_controller, args=(request,), daemon=True,
                         name=f"kcontrol-broker-{self.broker_id}-controlled-shutdown").start()

    def _ask_controller(self, request: ControlledShutdownRequest) -> None:
        try:
            response = self.controlled_shutdown_call(request)
        except (OSError, CodecError, *_ZK_ERRORS) as exc:
            log.warning("%s ControlledShutdown (epoch %d) failed: %s: %s", self.prefix,
                        request.broker_epoch, type(exc).__name__, exc)
            response = ControlledShutdownResponse(ErrorCode.NETWORK_EXCEPTION)
        remaining = ", ".join(f"{t}-{p}" for t, p in response.remaining[:10])
        log.info("%s ControlledShutdown (epoch %d) answered %s%s", self.prefix,
                 request.broker_epoch, response.error.name,
                 f"; still leading {len(response.remaining)}: {remaining}"
                 if response.remaining else "")
        self.submit(ControlledShutdownAnswered(response, broker_epoch=request.broker_epoch))

    def controller_endpoint(self) -> tuple[int, Endpoint] | None:
        """The active controller and its data-plane endpoint, read from ZooKeeper."""
        active = self._cs_reader.controller_change().active
        if active is None or active < 0:
            return None
        info = next((b for b in self._cs_reader.live_brokers() if b.broker_id == active), None)
        if info is None or not info.endpoints:
            return None
        ep = next((e for e in info.endpoints if e.listener == self.client_listener), None)
        return active, ep if ep is not None else info.endpoints[-1]

    def controlled_shutdown_call(self, request: ControlledShutdownRequest
                                 ) -> ControlledShutdownResponse:
        found = self.controller_endpoint()
        if found is None:
            return ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)
        controller, ep = found
        log.info("%s asking controller %d (%s:%d) for a controlled shutdown, epoch %d",
                 self.prefix, controller, ep.host, ep.port, request.broker_epoch)
        with WireClient(ep.host, ep.port, client_id=f"broker-{self.broker_id}",
                        timeout=self.request_timeout_s, connect_timeout=5.0) as client:
            body = client.request(ApiKey.CONTROLLED_SHUTDOWN, 2,
                                  C.controlled_shutdown_request_to_wire(request))
        return C.controlled_shutdown_response_from_wire(body)
