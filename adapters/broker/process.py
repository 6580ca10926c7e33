"""``BrokerNode``: one kcontrol broker, the parts of ``adapters.network`` and
``adapters.controller`` assembled around a ``BrokerCore`` (``kcontrol broker`` runs one; tests
and benchmarks may run several in one process).

What it holds, in start order:

1. ``SocketServer`` with a ``BrokerRequestHandler`` over the core: the control plane (when
   ``--control-plane-listener`` names one; controller APIs only, queue of 20, one handler)
   and the data plane (ApiVersions, Metadata, ControlledShutdown; controller APIs too when
   there is no control plane). Port 0 binds an ephemeral port; the bound ports are
   registered;
2. a kazoo session of the broker's own and ``BrokerRegistrar`` on it (with
   ``zookeeper_auth``, this session and the controller's are digest-authenticated and every
   znode they create is world-readable, writable by that identity only);
3. ``BrokerExecutor`` (``effects``): ``BrokerStarted`` -> read metadata -> recovery ->
   ``/brokers/ids/<id>`` (epoch = czxid) -> RUNNING. ``start()`` returns once RUNNING;
4. the controller candidate: ``ControllerService`` (its own session) with a
   ``ControllerChannelManager`` as its channels, sending to the brokers' control-plane
   listeners, and the ``ControlledShutdownRouter`` that hands ControlledShutdown requests
   reaching this broker's data plane to it;
5. the Prometheus endpoint (``metrics``), when a metrics port is given;
6. ``IsrExpander``: leaders take live (in the metadata cache and in ``/brokers/ids``)
   assigned replicas back into the ISR.

One ``threading.Lock`` guards the core: the request handlers, the executor and the expander
all take it for every core call and query, and none does I/O while holding it. A controller
request stamped with a broker epoch newer than the one the broker knows, arriving while it
starts or registers, waits (bounded) for the registration's answer (``_await_own_epoch``):
the controller may see the new registration before the broker does.

Stopping: ``request_shutdown()`` (SIGTERM) hands ``ShutdownRequested`` to the core, which
runs the controlled shutdown (ControlledShutdown v2 with the broker epoch to the
controller, retried on its timer, bounded by ``controlled_shutdown_max_retries``) and
returns ``Exit``; the node then closes everything on a thread of its own (controller
service, listeners, executor, metrics, and last the broker's session, which deletes
``/brokers/ids/<id>``) and sets ``exited``. ``close()`` does the same at once, without a
controlled shutdown. A kill -9 is just the end of the process: the sessions expire on the
ensemble's clock.

Session expiry of the broker's session: kazoo opens a new session by itself; the registrar
reports it, the node hands ``BrokerSessionExpired`` to the core, which reads the metadata
again and registers again (a new epoch). The controller service handles its own session.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from adapters.broker.effects import BrokerExecutor, log_records
from adapters.broker.isr_expander import IsrExpander
from adapters.broker.metrics import BrokerMetricsServer
from adapters.controller import ControllerService, ServiceError
from adapters.controller.service import DEFAULT_SESSION_TIMEOUT_MS
from adapters.network import (
    CONTROL_PLANE_APIS,
    BrokerRequestHandler,
    ControlledShutdownRouter,
    ControllerChannelManager,
    ListenerConfig,
    SocketServer,
    advertised_apis,
)
from adapters.network.codec import RequestHeader
from adapters.zookeeper.broker_registration import BrokerRegistrar
from adapters.zookeeper.connect import ZkAuth, ensure_chroot, make_client
from fsm import zk_paths
from fsm.broker import BrokerConfig, BrokerCore
from fsm.broker_states import BrokerState
from fsm.controller.config import ControllerConfig
from fsm.events import BrokerCrashed, BrokerSessionExpired, BrokerStarted, ShutdownRequested
from fsm.values import Endpoint

log = logging.getLogger("kcontrol.broker")

# a broker in these states may be about to learn a new epoch (see ``_await_own_epoch``)
_REGISTERING = frozenset({BrokerState.NOT_RUNNING, BrokerState.STARTING, BrokerState.RECOVERY})


class BrokerStartError(RuntimeError):
    """The broker cannot start: a port is busy, ZooKeeper is unreachable, its id is taken."""


@dataclass(frozen=True)
class BrokerSettings:
    broker_id: int
    zookeeper: str
    listeners: ListenerConfig
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    connect_timeout_s: float = 15.0
    metrics_port: int | None = None
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    isr_expand_interval_ms: int = 500
    controller: ControllerConfig | None = None
    data_handler_threads: int = 2
    startup_timeout_s: float = 60.0
    rack: str | None = None
    zookeeper_auth: ZkAuth | None = None
    """Digest identity for both sessions (the broker's and its controller's); znodes they
    create are then world-readable, writable by it alone (``adapters.zookeeper.connect``)."""

    @property
    def client_listener(self) -> str:
        """The data-plane listener clients and other brokers use (PLAINTEXT if there is one)."""
        names = [ls.name for ls in self.listeners.data_plane]
        return "PLAINTEXT" if "PLAINTEXT" in names else names[0]

    @property
    def register_timeout_s(self) -> float:
        """How long to wait for a previous incarnation's znode to go (its session expiring)."""
        return max(30.0, 3 * self.session_timeout_ms / 1000.0)

    @property
    def shutdown_deadline_s(self) -> float:
        """A bound on the controlled shutdown: every attempt and its back-off, plus slack."""
        retries = max(self.controlled_shutdown_max_retries, 1)
        return retries * self.controlled_shutdown_retry_backoff_ms / 1000.0 + 10.0


class _Handler(BrokerRequestHandler):
    """The wire handler: a controller request first waits (bounded) for the broker to learn
    the epoch it is stamped with (``before_request``), and the core's state-change log is
    written after each one."""

    after_request: Any = None
    before_request: Any = None

    def handle(self, api_key: int, version: int, header: RequestHeader,
               body: dict[str, Any]) -> dict[str, Any] | None:
        if api_key in CONTROL_PLANE_APIS and self.before_request is not None:
            self.before_request(body.get("broker_epoch"))
        try:
            return super().handle(api_key, version, header, body)
        finally:
            if api_key in CONTROL_PLANE_APIS and self.after_request is not None:
                self.after_request()


class BrokerNode:
    def __init__(self, settings: BrokerSettings) -> None:
        self.settings = settings
        self.broker_id = settings.broker_id
        self.lock = threading.Lock()
        self.core_changed = threading.Condition(self.lock)  # the executor changed the core
        self.core = BrokerCore(self._core_config(settings.listeners.endpoints()))
        self.router = ControlledShutdownRouter()
        self.handler = _Handler(self.core, lock=self.lock,
                                advertised=advertised_apis(settings.listeners),
                                client_listener=settings.client_listener, router=self.router,
                                on_effects=self._on_effects)
        self.handler.before_request = self._await_own_epoch
        self.server: SocketServer | None = None
        self.client: KazooClient | None = None
        self.registrar: BrokerRegistrar | None = None
        self.executor: BrokerExecutor | None = None
        self.channels: ControllerChannelManager | None = None
        self.service: ControllerService | None = None
        self.expander: IsrExpander | None = None
        self.metrics: BrokerMetricsServer | None = None
        self.exited = threading.Event()
        self.exit_error: str | None = None
        self._close_lock = threading.Lock()
        self._closing = False
        self.prefix = f"[broker {settings.broker_id}]"
        self.registration_hold_s = min(10.0, settings.register_timeout_s)

    def _core_config(self, endpoints: tuple[Endpoint, ...]) -> BrokerConfig:
        s = self.settings
        return BrokerConfig(
            s.broker_id,
            controlled_shutdown_enable=s.controlled_shutdown_enable,
            controlled_shutdown_max_retries=s.controlled_shutdown_max_retries,
            controlled_shutdown_retry_backoff_ms=s.controlled_shutdown_retry_backoff_ms,
            endpoints=endpoints,
            rack=s.rack,
        )

    # ------------------------------------------------------------------ start

    def start(self) -> BrokerNode:
        """Bind, register, start the controller candidate; returns once RUNNING.
        ``BrokerStartError`` (everything started is stopped again) when it cannot."""
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        s = self.settings
        self.server = SocketServer(s.listeners, self.handler,
                                   data_handler_threads=s.data_handler_threads)
        try:
            self.server.start()
        except OSError as exc:
            self.server = None
            raise BrokerStartError(exc.strerror or str(exc)) from exc
        endpoints = self.server.endpoints()
        with self.lock:
            self.core = BrokerCore(self._core_config(endpoints))
            self.handler.core = self.core
        log.info("%s listening on %s", self.prefix, ", ".join(
            f"{e.listener}://{e.host}:{e.port}"
            + (" (control plane)" if e.listener == s.listeners.control_plane_listener else "")
            for e in endpoints))

        self.client = make_client(s.zookeeper, auth=s.zookeeper_auth,
                                  timeout=s.session_timeout_ms / 1000.0)
        try:
            ensure_chroot(s.zookeeper, s.connect_timeout_s, s.zookeeper_auth)
            self.client.start(timeout=s.connect_timeout_s)
        except KazooTimeoutError as exc:
            raise BrokerStartError(f"cannot connect to ZooKeeper at {s.zookeeper!r} within "
                                   f"{s.connect_timeout_s:g} s (is the ensemble up?)") from exc
        except (ValueError, KazooException) as exc:
            raise BrokerStartError(f"bad ZooKeeper connect string {s.zookeeper!r}: {exc}") \
                from exc
        self.registrar = BrokerRegistrar(self.client, s.broker_id, endpoints, s.rack,
                                         on_expired=self._session_expired)
        self.executor = BrokerExecutor(
            s.broker_id, lambda: self.core, self.lock, self.registrar,
            client_listener=s.client_listener, on_exit=self._on_exit, on_fatal=self._on_fatal,
            register_timeout_s=s.register_timeout_s,
            request_timeout_s=max(s.controlled_shutdown_retry_backoff_ms / 1000.0, 5.0),
            changed=self.core_changed)
        self.handler.after_request = self.executor.drain_log
        self.executor.start()
        self.executor.submit(BrokerStarted())
        self._wait_running(s.startup_timeout_s)

        self.channels = ControllerChannelManager(
            s.broker_id, control_plane_listener=s.listeners.control_plane_listener,
            fallback_listener=s.client_listener, inter_broker_listener=s.client_listener,
            router=self.router)
        service = ControllerService(s.broker_id, s.zookeeper,
                                    session_timeout_ms=s.session_timeout_ms,
                                    config=s.controller, channels=self.channels,
                                    connect_timeout=s.connect_timeout_s,
                                    zookeeper_auth=s.zookeeper_auth)
        self.router.attach(service.submit, lambda: service.is_active)
        try:
            service.start()
        except ServiceError as exc:
            raise BrokerStartError(str(exc)) from exc
        self.service = service

        if s.metrics_port is not None:
            self.metrics = BrokerMetricsServer(self)
            try:
                self.metrics.serve(s.metrics_port)
            except OSError as exc:
                self.metrics = None
                raise BrokerStartError(f"cannot serve metrics on 127.0.0.1:{s.metrics_port}: "
                                       f"{exc.strerror or exc}") from exc
        self.expander = IsrExpander(s.broker_id, lambda: self.core, self.lock,
                                    self.executor.submit_many,
                                    s.isr_expand_interval_ms / 1000.0,
                                    registered=self._registered_brokers).start()
        log.info("%s running with epoch %s%s", self.prefix, self.epoch,
                 f"; metrics on http://127.0.0.1:{self.metrics.port}/metrics"
                 if self.metrics is not None else "")

    def _wait_running(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            state = self.state
            if state is BrokerState.RUNNING:
                return
            if self.exit_error is not None:
                raise BrokerStartError(self.exit_error)
            if self.exited.is_set() or state is BrokerState.SHUTTING_DOWN:
                raise BrokerStartError("the broker shut down while starting")
            if time.monotonic() >= deadline:
                raise BrokerStartError(f"not registered within {timeout:g} s "
                                       f"(still {state.value})")
            self.exited.wait(0.02)

    # ------------------------------------------------------------------ callbacks

    def _await_own_epoch(self, stamped: object) -> None:
        """Hold a controller request stamped with a broker epoch newer than the one the
        broker knows while it is starting or registering, until the registration's answer
        arrives (at most ``registration_hold_s``).

        The controller may read ``/brokers/ids/<id>`` -- and send UpdateMetadata or
        LeaderAndIsr stamped with the new epoch -- between the registration's commit and the
        broker's reading of that commit's answer. Answered at once, such a request would be
        refused (not serving yet) and lost: the controller does not resend. Kafka accepts an
        epoch newer than its own for the same reason (``KafkaApis.isBrokerEpochStale``);
        here the core keeps its exact fence and the request just waits for the epoch. A
        request for an older incarnation is held too (the broker cannot tell it from its
        own before the answer) and then refused by the core as STALE_BROKER_EPOCH.
        """
        if not isinstance(stamped, int) or isinstance(stamped, bool):
            return
        deadline = time.monotonic() + self.registration_hold_s
        with self.core_changed:
            while not self._closing:
                core = self.core
                if core.state not in _REGISTERING or (core.epoch is not None
                                                      and core.epoch >= stamped):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("%s a controller request stamped with broker epoch %d waited "
                                "%.0f s for the registration; answered as it stands",
                                self.prefix, stamped, self.registration_hold_s)
                    return
                self.core_changed.wait(min(left, 0.5))

    def _on_effects(self, effects: list[Any]) -> None:
        executor = self.executor
        if executor is not None:
            executor.execute_later(effects)

    def _session_expired(self) -> None:
        log.warning("%s ZooKeeper session expired: registering again", self.prefix)
        executor = self.executor
        if executor is not None:
            executor.submit(BrokerSessionExpired())

    def _on_exit(self) -> None:
        self._close_in_background()

    def _on_fatal(self, message: str) -> None:
        self.exit_error = message
        self._close_in_background()

    def _close_in_background(self) -> None:
        threading.Thread(target=self.close, name=f"kcontrol-broker-{self.broker_id}-close",
                         daemon=True).start()

    def _registered_brokers(self) -> frozenset[int] | None:
        """The broker ids in ``/brokers/ids`` now (None: ZooKeeper did not answer)."""
        client = self.client
        if client is None:
            return None
        try:
            return frozenset(int(c) for c in client.get_children(zk_paths.BROKER_IDS)
                             if c.isascii() and c.isdigit())
        except (KazooException, KazooTimeoutError):
            return None

    # ------------------------------------------------------------------ stop

    def request_shutdown(self, controlled: bool = True) -> None:
        """SIGTERM: a controlled shutdown (or, ``controlled=False``, straight to exit)."""
        executor = self.executor
        if executor is None or not executor.submit(ShutdownRequested(controlled)):
            self._close_in_background()

    def wait_exited(self, timeout: float) -> bool:
        return self.exited.wait(timeout)

    def close(self) -> None:
        """Stop everything now (idempotent); the broker's session goes last."""
        with self._close_lock:
            if self._closing:
                return
            self._closing = True
        try:
            for stop in (self._stop_expander, self._stop_service, self.router.detach,
                         self._stop_server, self._stop_executor, self._stop_metrics,
                         self._stop_client):
                try:
                    stop()
                except Exception:  # noqa: BLE001 -- stop the rest whatever happens
                    log.exception("%s while stopping", self.prefix)
            with self.lock:
                if self.core.state is not BrokerState.NOT_RUNNING:
                    self.core.handle(BrokerCrashed())
                records = self.core.drain_log()
            log_records(self.prefix, records)
            log.info("%s stopped%s", self.prefix,
                     f" ({self.exit_error})" if self.exit_error else "")
        finally:
            self.exited.set()

    def _stop_expander(self) -> None:
        if self.expander is not None:
            self.expander.stop()

    def _stop_service(self) -> None:
        if self.service is not None:
            self.service.stop()
        elif self.channels is not None:
            self.channels.close()

    def _stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()

    def _stop_executor(self) -> None:
        if self.executor is not None:
            self.executor.stop()

    def _stop_metrics(self) -> None:
        if self.metrics is not None:
            self.metrics.close()

    def _stop_client(self) -> None:
        if self.client is not None:
            self.client.stop()
            self.client.close()

    # ------------------------------------------------------------------ queries

    def state_and_epoch(self) -> tuple[BrokerState, int | None]:
        with self.lock:
            return self.core.state, self.core.epoch

    @property
    def state(self) -> BrokerState:
        return self.state_and_epoch()[0]

    @property
    def epoch(self) -> int | None:
        return self.state_and_epoch()[1]

    @property
    def is_controller(self) -> bool:
        return self.service is not None and self.service.is_active

    @property
    def ports(self) -> dict[str, int]:
        return {} if self.server is None else self.server.ports

    def endpoints(self) -> tuple[Endpoint, ...]:
        return () if self.server is None else self.server.endpoints()

    def port(self, listener: str) -> int:
        return self.ports[listener]
