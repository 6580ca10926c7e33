"""``run_node(settings, cluster_id)``: one KRaft node process's parts, started from its
``NodeSettings`` and run until SIGTERM/SIGINT (what ``kcontrol node --config F`` calls).

* **controller** role: a ``QuorumNode`` (``adapters.raft_node``) hosting the quorum
  controller -- the metadata log in ``metadata.log.dir``, the controller listener on the
  node's own entry of ``controller.quorum.voters`` serving the quorum's APIs and the
  controller's (``controller_apis``), the admin socket;
* **broker** role: ``adapters.kraft_broker.start_broker(settings, cluster_id,
  controller_node)`` -- given the ``QuorumNode`` in combined mode, else None;
* both (combined mode): one process, the controller started first and stopped last (the
  broker's controlled shutdown needs the controller).

Exit status as ``python -m adapters.raft_node``'s (``process``): 0 after a signal (a leader
resigns first), 3 after a halt (an fsync that failed, a bug in a core, a broker that exited
by itself: its ``on_exit``), 1 when a part did not start (the port taken, the log directory
unusable, the broker role not built).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from adapters.host.gc_tuning import tune_for_bursts
from adapters.kraft_node.settings import NodeSettings
from adapters.raft_node.args import NodeArgs
from adapters.raft_node.node import QuorumNode
from adapters.raft_node.process import (
    EXIT_START_FAILED,
    Lifetime,
    configure_logging,
    run_until_stopped,
)

log = logging.getLogger("kcontrol.node")


def node_args(settings: NodeSettings, cluster_id: str) -> NodeArgs:
    """The controller role's ``NodeArgs`` from the node's settings."""
    return NodeArgs(
        node_id=settings.node_id, voters=dict(settings.quorum_voters),
        directory=settings.metadata_log_dir, controller=True, admin_port=settings.admin_port,
        cluster_id=cluster_id,
        election_timeout_ms=settings.controller_quorum_election_timeout_ms,
        fetch_timeout_ms=settings.controller_quorum_fetch_timeout_ms,
        election_backoff_max_ms=settings.controller_quorum_election_backoff_max_ms,
        request_timeout_ms=settings.controller_quorum_request_timeout_ms,
        retry_backoff_ms=settings.controller_quorum_retry_backoff_ms,
        snapshot_every=settings.metadata_snapshot_every_records,
        session_timeout_ms=settings.broker_session_timeout_ms,
        default_partitions=settings.num_partitions,
        default_replication_factor=settings.default_replication_factor,
        broker_listener=settings.inter_broker_listener_name)


class _Parts:
    """What this process runs, started in order and stopped in reverse."""

    def __init__(self, settings: NodeSettings, cluster_id: str, lifetime: Lifetime) -> None:
        self.settings = settings
        self.cluster_id = cluster_id
        self.lifetime = lifetime
        self.controller: QuorumNode | None = None
        self.broker: Any = None
        self.metrics: Any = None

    def start(self) -> None:
        s = self.settings
        if s.is_controller:
            self.controller = QuorumNode(node_args(s, self.cluster_id),
                                         on_halt=self.lifetime.on_halt)
            self.controller.start()
            self.metrics = _start_metrics(s, self.controller)
        if s.is_broker:
            from adapters.kraft_broker import start_broker

            extra = {}
            if "on_exit" in inspect.signature(start_broker).parameters:
                extra["on_exit"] = self.lifetime.on_halt  # a broker that exits by itself: 3
            self.broker = start_broker(s, self.cluster_id, controller_node=self.controller,
                                       **extra)

    def stop(self, graceful: bool) -> None:
        if self.broker is not None:
            try:
                self.broker.stop()
            except Exception:  # noqa: BLE001 -- the controller still stops
                log.exception("node %d: the broker did not stop cleanly", self.settings.node_id)
        if self.metrics is not None:
            self.metrics.close()
        if self.controller is not None:
            self.controller.stop(resign=graceful)


def _start_metrics(settings: NodeSettings, node: QuorumNode) -> Any:
    if settings.metrics_port <= 0:
        return None
    try:
        from adapters.kraft_node.metrics import KRaftMetrics
    except ImportError:
        log.warning("node %d: metrics are not built yet", settings.node_id)
        return None
    return KRaftMetrics.serve(node, settings.metrics_port)


def run_node(settings: NodeSettings, cluster_id: str) -> int:
    """Runs the node until SIGTERM/SIGINT; the exit status (0, 3 halted, 1 failed start)."""
    configure_logging()
    roles = "+".join(sorted(settings.process_roles))
    if settings.extra:
        log.info("node %d: keys not interpreted: %s", settings.node_id,
                 ", ".join(sorted(settings.extra)))
    if settings.is_broker:
        try:
            import adapters.kraft_broker  # noqa: F401 -- only whether it is there
        except ImportError:
            log.error("node %d: the broker role is not built yet (process.roles=%s)",
                      settings.node_id, ",".join(sorted(settings.process_roles)))
            return EXIT_START_FAILED
    tune_for_bursts()  # a controller's snapshot of 1M partitions is 3M objects (issue 26)
    lifetime = Lifetime()
    parts = _Parts(settings, cluster_id, lifetime)
    log.info("node %d (%s) of cluster %s starting", settings.node_id, roles, cluster_id)
    status = run_until_stopped(parts.start, parts.stop, lifetime,
                               f"node {settings.node_id} ({roles})", log)
    log.info("node %d stopped (exit status %d)", settings.node_id, status)
    return status
