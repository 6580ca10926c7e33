"""``ControllerService``: one controller candidate bound to a real ZooKeeper ensemble.

Threads:

* the **event thread** (``kcontrol-controller-<id>``) owns the ``Controller`` and is the only
  thread that touches it, reads ZooKeeper for events, executes effects and commits writes;
* kazoo's threads (connection, callbacks) only enqueue: watch callbacks enqueue ``Marker``s
  ("re-read X"), the session listener enqueues ``SessionStateChange``s;
* timer threads only enqueue ``TimerFired``; broker channels only enqueue answers.

Events are handled by the controller's driver (``fsm.driver.ControllerDriver``), the very loop
the checker's world runs, over this service's port (``adapters.controller.port.ServicePort``):
``handle(event)`` -> effects in order; a ``ZkWrite`` is committed at once by ``ZkWriter`` and
its ``WriteResult`` is the next thing handed to the controller; ``LoadCluster`` is read after
the result (``ClusterLoaded`` from bulk reads); the channel manager hears the live brokers
before each ``BrokerChange`` and ``ClusterLoaded``, and again after a bounced broker's
channel is removed.

Election (contract "Election"). At start the service creates the persistent parents Kafka
creates (``fsm.zk_paths.PERSISTENT_PATHS``) and ``/controller_epoch`` = 0 if absent, then
hands the core ``Startup`` and queues a ``controller`` marker: the event thread reads
``/controller`` (exists watch) and ``/controller_epoch`` (value and version) and hands
``ControllerChange`` -- so the election uses the real epoch and version, never a guess. ``/controller`` changes re-read it the same way; ``ControllerChange(active=None)`` makes
the candidate write the election transaction.

Session (``fsm.zk_session_states``; kazoo states mapped; the core moves its ``ZkClientState``
only through the table and logs every move):

* the first connection: ``start()`` returns once kazoo is connected, and only then is
  ``Startup`` queued: ``Startup`` means "a new client is connected", and the core records
  NOT_CONNECTED -> CONNECTING -> CONNECTED from it (kazoo's own first CONNECTED is not handed
  as an event; the world does the same: ``model_check.world.executor``).
* SUSPENDED -> ``SessionStateChange(CONNECTING)`` (at the back of the queue): once the
  controller handled it, it pauses; events processed meanwhile are held by the service (not
  handed) and put back in front once CONNECTED. Before it handled it, a read that fails on
  the lost connection holds its marker the same way (the cluster load too). kazoo forgets
  every watcher on a connection loss and calls it with a NONE event: each such call enqueues
  its marker, so every watch is re-read -- and re-registered -- after reconnecting.
* CONNECTED again (same session) -> ``SessionStateChange(CONNECTED)``: resume. If this
  candidate is not the controller but its session still owns ``/controller`` (it resigned
  while disconnected and could not give it up; or its election was applied but the answer
  was lost with the connection: reported fenced, "lost"), it deletes ``/controller`` now
  (``_release_controller``), or nobody would ever be elected: the session lives on.
* LOST -> the queue is cleared and ``SessionStateChange(CLOSED)`` put (Kafka's ``clearAndPut``):
  the controller resigns and discards everything. kazoo then opens a new session by itself;
  its CONNECTED queues ``Startup`` (a new client: NOT_CONNECTED again) and a ``controller``
  marker: re-read, re-register, re-elect.

Resignation (``Resigned``): the reason logged (and kept in ``resignations``) is the one the
service knows: the epoch check failed ("fenced"), the connection was lost while a write was in
flight, or the session expired -- the core itself only hears "fenced" or "session closed".
Controller-only watches are disowned (their callbacks carry a generation; a stale one enqueues
nothing; queued controller-only markers are dropped), timers cancelled, channels reset. If ``/controller`` is still owned by this client's session (a write
reported fenced after a connection loss: see ``adapters.zookeeper.writer``), the service deletes
it, as Kafka's ``triggerControllerMove`` does, so that an election follows -- after any write
reported fenced while this candidate is not the controller, and again after CONNECTED (a
client that lost its connection cannot delete anything until then).

State-change log: ``controller.state_change_log`` is drained after every ``handle`` and each
record logged as one line on the ``kcontrol.state.change`` logger.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType, KazooState, KeeperState

from adapters.controller.event_queue import CLOSED, DEFAULT_CAPACITY, EventQueue, Marker
from adapters.controller.metrics import IDLE, ControllerMetrics, controller_state_of
from adapters.controller.port import ServicePort
from adapters.controller.timers import Timers
from adapters.host.gc_tuning import CollectorPause
from adapters.network.broker_channels import BrokerChannels, LoggingChannels
from adapters.zookeeper import codec
from adapters.zookeeper.connect import ZkAuth, make_client
from adapters.zookeeper.reads import ZkReader
from adapters.zookeeper.writer import ZkWriter
from fsm import zk_paths as P
from fsm.controller import Controller
from fsm.controller.config import ControllerConfig
from fsm.driver import ControllerDriver
from fsm.effects import (
    ZkWrite,
)
from fsm.events import (
    ClusterLoaded,
    SessionStateChange,
    Startup,
    WriteResult,
)
from fsm.reads.markers import (
    CHANGED,
    CHILDREN,
    CONTROLLER,
    CONTROLLER_ONLY,
    CREATED,
    DELETED,
    LOAD,
    MARKERS,
    queues,
)
from fsm.values import ClusterSnapshot
from fsm.zk_session_states import ZkClientState
from fsm.znodes import ControllerEpochZnode

log = logging.getLogger("kcontrol.controller")
state_log = logging.getLogger("kcontrol.state.change")

DEFAULT_SESSION_TIMEOUT_MS = 6000
_NOTIFICATIONS = {EventType.CREATED: CREATED, EventType.DELETED: DELETED,
                  EventType.CHANGED: CHANGED, EventType.CHILD: CHILDREN}
"""kazoo's notification types by ZooKeeper's names (``fsm.reads.markers``)."""
_RETRYABLE = (ConnectionLoss, ConnectionClosedError, OperationTimeoutError, KazooTimeoutError)
_LOST_REASONS = {
    KeeperState.EXPIRED_SESSION: "ZooKeeper session expired",
    KeeperState.AUTH_FAILED: "ZooKeeper authentication failed (session closed)",
    KeeperState.CLOSED: "ZooKeeper session closed",
}
"""kazoo's LOST, by the client state it comes with."""


class ServiceError(RuntimeError):
    """The service cannot start (bad connect string, ensemble unreachable)."""


class ControllerService:
    """One controller candidate: ``start()``, then it runs until ``stop()``."""

    def __init__(
        self,
        broker_id: int,
        hosts: str,
        *,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        config: ControllerConfig | None = None,
        channels: BrokerChannels | None = None,
        queue_capacity: int = DEFAULT_CAPACITY,
        metrics_port: int | None = None,
        max_request_bytes: int | None = None,
        connect_timeout: float = 15.0,
        metrics_refresh_s: float = 1.0,
        zookeeper_auth: ZkAuth | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.hosts = hosts
        self.config = config or ControllerConfig(broker_id=broker_id)
        if self.config.broker_id != broker_id:
            raise ValueError("config.broker_id differs from broker_id")
        self.session_timeout_ms = session_timeout_ms
        self.connect_timeout = connect_timeout
        self.controller = Controller(self.config)
        self.channels: BrokerChannels = channels if channels is not None else LoggingChannels()
        self.queue = EventQueue(queue_capacity)
        self.metrics = ControllerMetrics(metrics_refresh_s)
        self.metrics.queue_size.set_function(lambda: self.queue.size)
        self.metrics_port = metrics_port
        self.timers = Timers(self.queue.put)
        # with zookeeper_auth: digest-authenticated, and every znode it creates (persistent
        # parents, /controller, partition states...) is world-readable, writable by it alone
        self.client = make_client(hosts, auth=zookeeper_auth, timeout=session_timeout_ms / 1000.0)
        self.reader = ZkReader(self.client, timeout=max(session_timeout_ms / 1000.0 * 2, 10.0))
        wopts = {} if max_request_bytes is None else {"max_request_bytes": max_request_bytes}
        self.writer = ZkWriter(self.client, **wopts)
        self.before_write: Callable[[ZkWrite], None] | None = None
        """Test hook: called on the event thread before each write is committed."""
        self.resignations: list[str] = []
        self.elections: list[int] = []  # epochs won
        self.last_load_s: float | None = None
        self._gen = 0  # watch generation: bumped on election and resignation
        self._watchers: dict[tuple[int, str, str], Callable[[Any], None]] = {}
        self._held: deque[object] = deque()
        self._connected_once = False
        self._lost = False
        self._lost_reason = "ZooKeeper session closed"  # what kazoo's LOST meant, in words
        self._handling: object | None = None  # the event being handed to the controller
        self._force_metrics = False  # refresh every gauge after this event (elected, resigned)
        self._first_handled: object | None = None  # the first event an item handed
        self.driver = ControllerDriver(self._step, ServicePort(self))
        """The controller's loop (``fsm.driver``), over this service's port."""
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._idle = threading.Condition()
        self._busy = False
        self._log_prefix = f"[controller {broker_id}]"
        self._gc = CollectorPause()  # off from a cluster load until its item is handled

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        client = self.client
        client.add_listener(self._on_session_state)
        try:
            client.start(timeout=self.connect_timeout)
        except KazooTimeoutError as exc:
            self._close_client()
            raise ServiceError(f"cannot connect to ZooKeeper at {self.hosts!r} within "
                               f"{self.connect_timeout:g} s (is the ensemble up?)") from exc
        except (ValueError, KazooException) as exc:
            self._close_client()
            raise ServiceError(f"bad ZooKeeper connect string {self.hosts!r}: {exc}") from exc
        self._connected_once = True
        self._ensure_layout()
        if self.metrics_port is not None:
            self.metrics_port = self.metrics.serve(self.metrics_port)
            log.info("%s metrics on http://127.0.0.1:%d/metrics", self._log_prefix,
                     self.metrics_port)
        self.channels.start(self.submit)
        self.queue.put(Startup())
        self.queue.put(Marker(CONTROLLER))
        self._thread = threading.Thread(target=self._run, name=f"kcontrol-controller-"
                                        f"{self.broker_id}", daemon=True)
        self._thread.start()
        log.info("%s started (session 0x%x)", self._log_prefix, client.client_id[0])

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping = True
        self.queue.close()
        if self._thread is not None:
            self._thread.join(timeout)
        self.timers.cancel_all()
        self.channels.close()
        self.metrics.close()
        self._close_client()
        log.info("%s stopped", self._log_prefix)

    def _close_client(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # noqa: BLE001 -- best effort on the way out
            log.debug("closing the kazoo client", exc_info=True)

    def _ensure_layout(self) -> None:
        """Kafka's startup znodes: the persistent parents and ``/controller_epoch`` = 0."""
        for path in P.PERSISTENT_PATHS:
            self.client.ensure_path(path)
        with contextlib.suppress(NodeExistsError):
            self.client.create(P.CONTROLLER_EPOCH,
                               codec.encode(P.CONTROLLER_EPOCH, ControllerEpochZnode(0)))

    # ------------------------------------------------------------------ outside input

    def submit(self, event: object) -> bool:
        """Enqueue an event for the event thread (channels: broker answers)."""
        return self.queue.put(event)

    @property
    def is_active(self) -> bool:
        return self.controller.is_active

    @property
    def epoch(self) -> int:
        return self.controller.epoch

    def wait_idle(self, timeout: float) -> bool:
        """Until the queue is empty and the event thread idle (tests)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self.queue.size or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.1))
        return True

    def _on_session_state(self, state: str) -> None:
        """kazoo's listener (its connection thread): enqueue only."""
        if self._stopping:
            return
        if state == KazooState.SUSPENDED:
            self.queue.put(SessionStateChange(ZkClientState.CONNECTING))
        elif state == KazooState.LOST:
            self._lost = True
            self._lost_reason = _LOST_REASONS.get(self.client.client_state,
                                                  "ZooKeeper session closed")
            self.queue.clear_and_put(SessionStateChange(ZkClientState.CLOSED))
        elif state == KazooState.CONNECTED and self._connected_once:
            if self._lost:
                self._lost = False
                self.queue.put(Startup())  # a new session: a new client (contract)
                self.queue.put(Marker(CONTROLLER))  # re-read /controller, re-elect
            else:
                self.queue.put(SessionStateChange(ZkClientState.CONNECTED))

    def _watch(self, kind: str, arg: str = "") -> Callable[[Any], None] | None:
        """The kazoo watcher for marker ``(kind, arg)`` in the current generation (one callable
        per key, so kazoo's per-path watcher sets do not grow)."""
        gen = self._gen if kind in CONTROLLER_ONLY else 0
        key = (gen, kind, arg)
        w = self._watchers.get(key)
        if w is None:
            marker = Marker(kind, arg)

            def w(event: Any, _gen: int = gen, _marker: Marker = marker) -> None:
                if self._stopping or (_gen and _gen != self._gen):
                    return
                if event is not None and event.type != EventType.NONE \
                        and not queues(_marker.kind, _NOTIFICATIONS.get(event.type, "")):
                    return  # a notification the table ignores (EventType.NONE: the
                    # connection was lost -- every watcher is called, everything is re-read)
                self.queue.put(_marker)

            if len(self._watchers) > 100_000:
                self._watchers = {k: v for k, v in self._watchers.items() if k[0] in (0, gen)}
            self._watchers[key] = w
        return w

    # ------------------------------------------------------------------ event thread

    def _run(self) -> None:
        while True:
            got = self.queue.get()
            if got is None:
                continue
            item, enqueued = got
            if item is CLOSED:
                break
            with self._idle:
                self._busy = True
            try:
                self.metrics.queue_time.observe((time.monotonic() - enqueued) * 1000.0)
                self._process(item)
            except Exception:  # noqa: BLE001 -- the event thread never dies
                log.exception("%s event %r failed", self._log_prefix, item)
            finally:
                with self._idle:
                    self._busy = False
                    self._idle.notify_all()

    def _process(self, item: object) -> None:
        ctl = self.controller
        if isinstance(item, SessionStateChange) and item.state is ZkClientState.CLOSED:
            self._held.clear()
        if ctl.paused and not isinstance(item, SessionStateChange):
            self._held.append(item)
            return
        t0 = time.monotonic()
        self._first_handled = None
        try:
            self.driver.process(item)
        finally:
            self._gc.resume()
        if self._first_handled is not None:  # the time of the whole item, writes included
            self.metrics.handled(self._first_handled, time.monotonic() - t0)
        self.metrics.state.set(IDLE)
        self.metrics.refresh(ctl, force=self._force_metrics)
        self._force_metrics = False
        if isinstance(item, SessionStateChange) and not self.controller.paused and self._held:
            held, self._held = list(self._held), deque()
            self.queue.put_front_many(held)

    def _materialize(self, m: Marker) -> object | None:
        """A marker -> the event it stands for, read now (None: nothing to hand):
        ``fsm.reads.materialize``, the world's reader too."""
        ctl = self.controller
        known = ctl.topic_names() if MARKERS[m.kind].reads_topics else frozenset()
        if m.kind == LOAD:
            # millions of objects, no cycles: the collector stays off through the read and
            # the core's handling of ClusterLoaded (``_process`` turns it back on)
            self._gc.pause()
        t0 = time.monotonic()
        try:
            event = self.reader.materialize(m, active=ctl.is_active, known_topics=known,
                                            watch=self._watch)
        except _RETRYABLE as exc:
            log.warning("%s reading for %s: %s: held until reconnected", self._log_prefix,
                        m.describe(), type(exc).__name__)
            self._held.append(m)
            return None
        except SessionExpiredError:
            log.warning("%s reading for %s: session expired", self._log_prefix, m.describe())
            return None
        if isinstance(event, ClusterLoaded):
            self._loaded(event.snapshot, time.monotonic() - t0)
        return event

    def _loaded(self, snap: ClusterSnapshot, seconds: float) -> None:
        self.last_load_s = seconds
        log.info("%s loaded %d brokers, %d topics, %d partition states in %.3f s%s",
                 self._log_prefix, len(snap.live_brokers), len(snap.topics),
                 len(snap.partition_states), self.last_load_s,
                 f" ({len(snap.bad_input)} malformed znodes skipped)" if snap.bad_input else "")

    def _step(self, event: object) -> list[object]:
        """The controller's ``handle`` as the driver calls it: the metrics' state while it
        runs, the event kept for the resignation's reason, the state-change log drained."""
        self.metrics.state.set(controller_state_of(event))
        self._handling = event
        if self._first_handled is None:
            self._first_handled = event
        effects = self.controller.handle(event)  # type: ignore[arg-type]
        self._drain_log()
        return effects  # type: ignore[return-value]

    def _commit(self, write: ZkWrite) -> WriteResult:
        if self.before_write is not None:
            self.before_write(write)
        t0 = time.monotonic()
        result = self.writer.execute(write)
        dt = time.monotonic() - t0
        if result.fenced:
            log.warning("%s write #%d (%d ops) reported fenced: %s", self._log_prefix,
                        write.token, len(write.ops), self.writer.fence_reason)
        else:
            log.info("%s write #%d: %d ops in %.3f s%s", self._log_prefix, write.token,
                     len(write.ops), dt,
                     "".join(f"; {f.path} {f.code}" for f in result.failures[:10]))
        return result

    def _drain_log(self) -> None:
        records = self.controller.drain_state_change_log()
        if not records:
            return
        self.metrics.count_elections(records)
        prefix = f"{self._log_prefix} epoch={self.controller.epoch}"
        for rec in records:
            state_log.info("%s %s", prefix, rec)

    def _became(self, epoch: int) -> None:
        self._gen += 1
        self._force_metrics = True
        self.elections.append(epoch)
        log.info("%s became controller with epoch %d", self._log_prefix, epoch)

    def _resignation_reason(self, reason: str) -> str:
        """What made the controller resign, as this service knows it. The core hears only
        ``WriteResult(fenced=True)`` or ``SessionStateChange(CLOSED)``, and a write that could
        not finish is reported fenced too (its outcome is unknown): the writer and the session
        listener say which it was -- fenced by the epoch check, connection lost, session
        expired."""
        ev = self._handling
        if isinstance(ev, WriteResult) and ev.fenced and self.writer.fence_reason:
            return self.writer.fence_reason
        if isinstance(ev, SessionStateChange) and ev.state is ZkClientState.CLOSED:
            return self._lost_reason
        return reason

    def _resigned(self, reason: str) -> None:
        self._gen += 1
        self._force_metrics = True
        reason = self._resignation_reason(reason)
        log.warning("%s resigned: %s", self._log_prefix, reason)
        self.resignations.append(reason)
        self.queue.retain(lambda it: not (isinstance(it, Marker) and it.kind in CONTROLLER_ONLY))
        self._held = deque(it for it in self._held
                           if not (isinstance(it, Marker) and it.kind in CONTROLLER_ONLY))
        self.timers.cancel_all()
        self.channels.reset()
        self._release_controller()

    def _release_controller(self) -> None:
        """Delete ``/controller`` if this session still owns it (Kafka's controller move)."""
        try:
            stat = self.client.exists_async(P.CONTROLLER).get(timeout=self.reader.timeout)
            if stat is None or stat.ephemeralOwner != self.client.client_id[0]:
                return
            self.client.delete_async(P.CONTROLLER, stat.version).get(timeout=self.reader.timeout)
            log.info("%s deleted its own /controller after resigning", self._log_prefix)
        except NoNodeError:
            pass
        except (KazooException, KazooTimeoutError, TypeError) as exc:
            log.info("%s could not check /controller after resigning: %s", self._log_prefix,
                     type(exc).__name__)
