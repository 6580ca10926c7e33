"""``start_broker(settings, cluster_id, controller_node=None)``: one KRaft broker's parts,
assembled and started; ``.stop()`` (the SIGTERM path) and ``.status()``.

Start order: the client listeners are bound (a port 0 becomes the port the broker registers
and advertises) -> the two controller channels' threads (the core's requests; the forwarded
admin requests) -> the core's event thread (``Start`` with a fresh incarnation id and the
replica directories found under ``log.dirs``) and the ISR expander's (``isr_expander``; not
with ``kcontrol.isr.expander.enable=false``) -> the metadata observer (its committed records
and the leader it follows flow into the core and the channels) -> the client listeners accept
-> the admin socket (``admin_ops``: ``status``, and ``broker_state`` for the audit; in
combined mode added to the node's own socket, ``status`` there named ``broker_status``) ->
the metrics endpoint (``metrics``; ``kcontrol.metrics.port``, broker-only nodes).

``stop()``: SIGTERM to the core -- in RUNNING a controlled shutdown through heartbeats
(``want_shut_down`` until the controller answers ``should_shut_down``), else straight to
SHUTTING_DOWN -- waited for at most ``shutdown_wait_s``; then the ISR expander, the admin
socket, the listeners, the observer, the core's thread and the channels stop, in that order;
last the core hears the process end (``BrokerShell.end``: SHUTTING_DOWN -> NOT_RUNNING in
the state-change log and ``status()``) and the metrics endpoint closes.
An ``Exit`` the core decides by itself (the initial registration timed out) or a halt calls
``on_exit(reason)``; by default the process is sent SIGTERM, which ``run_node``'s loop turns
into this same ``stop()``.

Combined mode (``controller_node``: the ``QuorumNode`` of this process, a voter): the broker
reads the node's own metadata log (``local_feed``) instead of observing the quorum; the rest
is the same (the controller channel connects to whichever voter leads, this one included).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from adapters.kraft_broker.admin_ops import broker_ops
from adapters.kraft_broker.broker_shell import BrokerShell
from adapters.kraft_broker.client_apis import ClientApis
from adapters.kraft_broker.client_listener import ClientListener
from adapters.kraft_broker.controller_channel import ControllerChannel
from adapters.kraft_broker.core_requests import CoreRequests, frame_request
from adapters.kraft_broker.forwarding import Forwarder
from adapters.kraft_broker.isr_changes import IncrementalScan
from adapters.kraft_broker.isr_expander import IsrExpander
from adapters.kraft_broker.local_feed import LocalMetadataFeed
from adapters.kraft_broker.metrics import BrokerMetrics
from adapters.kraft_broker.observer import MetadataObserver
from adapters.kraft_broker.replica_dirs import ReplicaDirs
from adapters.kraft_node.settings import NodeSettings
from adapters.raft_node.admin import AdminServer
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.records.values import BrokerEndpoint

log = logging.getLogger("kcontrol.kraft.broker")

SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
MIN_SHUTDOWN_WAIT_S = 5.0
FORWARD_TIMEOUT_S = 30.0
"""How long a forwarded admin request may take, all tries together (Kafka's broker waits
``request.timeout.ms``, 30 s by default, on its forwarding channel): a CreateTopics is answered
only once committed, which on a loaded machine takes longer than the quorum's 2 s request
timeout."""


class BrokerConfigError(ValueError):
    """The settings cannot run a broker; the message names the key."""


def client_listener_names(settings: NodeSettings) -> list[str]:
    """The broker's listeners for clients: ``listeners`` less the controller listeners."""
    names = [n for n in settings.listeners if n not in settings.controller_listener_names]
    if not names:
        controllers = ", ".join(settings.controller_listener_names)
        raise BrokerConfigError("listeners: a broker needs a listener that is not one of "
                                f"controller.listener.names ({controllers})")
    return names


class KRaftBrokerNode:
    def __init__(self, settings: NodeSettings, cluster_id: str, controller_node: Any = None, *,
                 on_exit: Callable[[str], None] | None = None) -> None:
        if not settings.is_broker:
            raise BrokerConfigError("process.roles: this node has no broker role")
        self.settings = settings
        self.cluster_id = cluster_id
        self.broker_id = settings.node_id
        self.on_exit = on_exit
        self.controller_node = controller_node
        self.listeners: dict[str, ClientListener] = {}
        self.channel: ControllerChannel | None = None
        """The core's requests (registration, heartbeats, AlterPartition)."""
        self.forwarding: ControllerChannel | None = None
        """The clients' admin requests, on a connection of their own (a heartbeat never
        waits behind a CreateTopics waiting for its commit), as Kafka's broker keeps one
        channel per purpose."""
        self.shell: BrokerShell | None = None
        self.expander: IsrExpander | None = None
        """Takes live replicas back into the ISRs this broker leads (``isr_expander``);
        None with ``kcontrol.isr.expander.enable=false``."""
        self.observer: MetadataObserver | LocalMetadataFeed | None = None
        self.replicas: ReplicaDirs | None = None
        self.endpoints: tuple[BrokerEndpoint, ...] = ()
        self.admin: AdminServer | None = None
        self.metrics: BrokerMetrics | None = None
        self._stopping = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> KRaftBrokerNode:
        s = self.settings
        request_timeout_s = s.controller_quorum_request_timeout_ms / 1000
        channels: dict[str, ControllerChannel] = {}
        for purpose in ("lifecycle", "forwarding"):
            channels[purpose] = ControllerChannel(
                self.broker_id, s.quorum_voters, frame_request,
                retry_backoff_ms=max(s.controller_quorum_retry_backoff_ms, 1),
                max_backoff_ms=max(1000, s.controller_quorum_retry_backoff_ms),
                purpose=purpose)
        self.channel, self.forwarding = channels["lifecycle"], channels["forwarding"]
        forwarder = Forwarder(self.forwarding, max(request_timeout_s, FORWARD_TIMEOUT_S),
                              budget_factor=1.0)
        apis = ClientApis(self._metadata, self._describe, forwarder, self.cluster_id)
        for name in client_listener_names(s):
            listener = ClientListener(name, s.listeners[name], apis.handler(name),
                                      self.broker_id)
            listener.bind()
            self.listeners[name] = listener
        self.endpoints = self._advertised()
        ops = broker_ops(self._describe, self.status, self._submit, self._hold,
                         self._wait_offset)
        if getattr(self.controller_node, "admin", None) is None:  # bound now, served last
            self.admin = AdminServer(ops, "127.0.0.1", s.admin_port)
        core = KRaftBroker(KRaftBrokerConfig(
            self.broker_id, self.cluster_id, self.endpoints, rack=s.rack,
            heartbeat_interval_ms=s.broker_heartbeat_interval_ms,
            initial_registration_timeout_ms=s.initial_broker_registration_timeout_ms,
            controlled_shutdown_enable=s.controlled_shutdown_enable))
        self.replicas = ReplicaDirs(s.log_dirs[0] if s.log_dirs else s.metadata_log_dir,
                                    self.broker_id, lambda tid: _topic_name(core, tid),
                                    background=True)
        local = self.replicas.scan()
        self.shell = BrokerShell(core, CoreRequests(self.channel, self._submit,
                                                    request_timeout_s, self.broker_id),
                                 self.replicas, on_exit=self._exited)
        if s.isr_expander_enable:
            self.expander = IsrExpander(self.broker_id, self.shell.call, self._submit,
                                        scanner=IncrementalScan(self.shell.changes.take))
            self.shell.on_image_change(self.expander.wake)
        for channel in channels.values():
            channel.start()
        self.shell.start(local)
        if self.expander is not None:
            self.expander.start()

        def on_leader(leader: int, _epoch: int) -> None:
            for channel in channels.values():
                channel.leader_changed(leader)

        if self.controller_node is not None:
            self.observer = LocalMetadataFeed(self.controller_node, self._submit, on_leader)
        else:
            self.observer = MetadataObserver(s, self.cluster_id, self._submit, on_leader,
                                             on_halt=self._halted)
        self.observer.start()
        for listener in self.listeners.values():
            listener.start()
        shared = getattr(self.controller_node, "admin", None)
        if shared is not None:  # combined mode: the node's one admin socket
            shared.add_ops({k: v for k, v in ops.items() if k != "status"} |
                           {"broker_status": ops["status"]})
            admin_port = shared.port
        else:
            assert self.admin is not None
            self.admin.start()
            admin_port = self.admin.port
        if s.metrics_port > 0 and self.controller_node is None:
            self.metrics = BrokerMetrics.serve(self.status, s.metrics_port)
        log.info("[broker %d] started: clients on %s; controllers %s; %d local replicas; "
                 "admin on 127.0.0.1:%d%s", self.broker_id, ", ".join(
                     f"{e.name} {e.host}:{e.port}" for e in self.endpoints),
                 sorted(s.quorum_voters), len(local), admin_port,
                 f"; metrics on http://127.0.0.1:{self.metrics.port}/metrics"
                 if self.metrics is not None else "")
        return self

    def stop(self, timeout: float | None = None) -> None:
        """The SIGTERM path (see the module docstring); idempotent."""
        with self._lock:
            if self._stopping:
                self._stopped.wait(30)
                return
            self._stopping = True
        wait_s = timeout if timeout is not None else self.shutdown_wait_s
        shell = self.shell
        if shell is not None and shell.alive:
            shell.sig_term()
            try:
                shell.wait_for(lambda st: st.state in ("SHUTTING_DOWN", "NOT_RUNNING")
                               or st.failure is not None or not shell.alive, wait_s)
            except TimeoutError:
                log.warning("[broker %d] controlled shutdown not over within %g s: stopping "
                            "anyway (%s)", self.broker_id, wait_s, shell.status.state)
        if self.expander is not None:
            self.expander.stop()
        if self.admin is not None:
            self.admin.close()
        for listener in self.listeners.values():
            listener.stop()
        if self.observer is not None:
            self.observer.stop()
        if shell is not None:
            shell.stop()
        if self.replicas is not None:
            self.replicas.close()
        for channel in (self.channel, self.forwarding):
            if channel is not None:
                channel.close()
        if shell is not None:
            shell.end()
        if self.metrics is not None:
            self.metrics.close()
        log.info("[broker %d] stopped (%s)", self.broker_id,
                 shell.status.state if shell is not None else "never started")
        self._stopped.set()

    @property
    def shutdown_wait_s(self) -> float:
        """How long a controlled shutdown may take: the session timeout (past it the
        controller fences the broker anyway), at least ``MIN_SHUTDOWN_WAIT_S``."""
        return max(MIN_SHUTDOWN_WAIT_S, self.settings.broker_session_timeout_ms / 1000)

    def status(self) -> dict[str, Any]:
        """Lifecycle state, broker epoch, metadata offset, fenced? (and a little more)."""
        out: dict[str, Any] = {"broker_id": self.broker_id}
        if self.shell is not None:
            out |= self.shell.status.as_dict()
        out["active_controller"] = self.channel.leader if self.channel is not None else -1
        obs = self.observer.status if self.observer is not None else None
        if obs is not None:
            out |= {"metadata_high_watermark": obs.high_watermark,
                    "metadata_log_end": obs.log_end_offset}
        out["listeners"] = {e.name: f"{e.host}:{e.port}" for e in self.endpoints}
        return out

    # ------------------------------------------------------------------ parts' callbacks

    def _wait_offset(self, offset: int, timeout: float) -> int:
        """Until the published metadata offset is at least ``offset``; that offset."""
        if self.shell is None:
            raise TimeoutError("the broker has not started")
        return self.shell.wait_for(lambda st: st.metadata_offset >= offset,
                                   timeout).metadata_offset

    def _submit(self, event: object) -> bool:
        return self.shell.submit(event) if self.shell is not None else False

    def _hold(self, key: Any, brokers: Any, seconds: float) -> None:
        if self.expander is not None:
            self.expander.hold(key, brokers, seconds)

    def _metadata(self, topics: tuple[str, ...] | None) -> Any:
        assert self.shell is not None
        return self.shell.metadata(topics)

    def _describe(self, fn: Callable[[Any], Any]) -> Any:
        assert self.shell is not None
        return self.shell.call(fn)

    def _halted(self, reason: str) -> None:
        log.critical("[broker %d] the metadata observer halted: %s", self.broker_id, reason)
        self._exited(f"metadata observer halted: {reason}")

    def _exited(self, reason: str) -> None:
        if self._stopping:
            return
        log.warning("[broker %d] exits: %s", self.broker_id, reason)
        if self.on_exit is not None:
            self.on_exit(reason)
        else:
            os.kill(os.getpid(), signal.SIGTERM)

    def _advertised(self) -> tuple[BrokerEndpoint, ...]:
        s = self.settings
        out = []
        for name, listener in self.listeners.items():
            host, port = s.advertised_listeners.get(name, s.listeners[name])
            if port == 0:
                port = listener.port
            if host in ("", "0.0.0.0", "::"):
                host = "127.0.0.1"
            out.append(BrokerEndpoint(name, host, port, SECURITY_PROTOCOL_IDS.get(name, 0)))
        return tuple(out)


def _topic_name(core: KRaftBroker, topic_id: bytes) -> str | None:
    topic = core.image.topics.get(topic_id)
    return None if topic is None else topic.name


def start_broker(settings: NodeSettings, cluster_id: str, controller_node: Any = None, *,
                 on_exit: Callable[[str], None] | None = None) -> KRaftBrokerNode:
    """The broker role of a node, started (see the module docstring)."""
    node = KRaftBrokerNode(settings, cluster_id, controller_node, on_exit=on_exit)
    try:
        return node.start()
    except Exception:
        node.stop(timeout=1.0)
        raise

