"""``NodeSettings``: one KRaft node's configuration, parsed and checked (``properties``).

Kafka's keys, snake_cased: ``process.roles`` -> ``process_roles`` and so on. Durations are
milliseconds. Defaults are Kafka's released ones (3.x ``KafkaConfig``), except where seed 004's
table differs and says so in a comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

BROKER = "broker"
CONTROLLER = "controller"
ROLES = frozenset({BROKER, CONTROLLER})

Address = tuple[str, int]


@dataclass(frozen=True, slots=True)
class NodeSettings:
    process_roles: frozenset[str]
    """``process.roles``: {"broker"}, {"controller"} or both (combined mode)."""
    node_id: int
    """``node.id``."""
    quorum_voters: dict[int, Address]
    """``controller.quorum.voters``: id -> (host, port) of each voter's controller listener."""
    controller_listener_names: tuple[str, ...]
    """``controller.listener.names``: the listeners that carry the quorum and controller
    APIs. The first is the one brokers connect to."""
    listeners: dict[str, Address]
    """``listeners``: name -> (host, port), e.g. PLAINTEXT -> ("127.0.0.1", 9092) and
    CONTROLLER -> ("127.0.0.1", 9093). A controller has a controller listener whose address
    is its own entry of ``quorum_voters``; a broker has at least one listener that is not a
    controller listener (its clients' listener)."""
    metadata_log_dir: Path
    """``metadata.log.dir`` (default: the first of ``log.dirs``): holds
    ``__cluster_metadata-0``."""
    log_dirs: tuple[Path, ...]
    """``log.dirs`` (or ``log.dir``): every one holds a ``meta.properties``."""
    advertised_listeners: dict[str, Address] = field(default_factory=dict)
    """``advertised.listeners`` (default: ``listeners``, for a broker's non-controller
    listeners): what the broker registers and Metadata answers name."""
    inter_broker_listener_name: str = "PLAINTEXT"
    """``inter.broker.listener.name``: the listener other brokers and tools use."""
    broker_heartbeat_interval_ms: int = 2000
    """``broker.heartbeat.interval.ms`` (Kafka 2000; seed 004's table 3000)."""
    broker_session_timeout_ms: int = 9000
    """``broker.session.timeout.ms`` (Kafka 9000; seed 004's table 18000)."""
    initial_broker_registration_timeout_ms: int = 60000
    """``initial.broker.registration.timeout.ms``."""
    controller_quorum_election_timeout_ms: int = 1000
    controller_quorum_fetch_timeout_ms: int = 2000
    controller_quorum_election_backoff_max_ms: int = 1000
    controller_quorum_request_timeout_ms: int = 2000
    controller_quorum_retry_backoff_ms: int = 20
    metadata_snapshot_every_records: int = 0
    """Committed records between two snapshots the controller writes (0: never). Kafka's
    ``metadata.log.max.record.bytes.between.snapshots`` counts bytes; we count records."""
    num_partitions: int = 1
    """``num.partitions``: CreateTopics' default when a request gives -1."""
    default_replication_factor: int = 1
    """``default.replication.factor``."""
    controlled_shutdown_enable: bool = True
    """``controlled.shutdown.enable``."""
    isr_expander_enable: bool = True
    """Our own ``kcontrol.isr.expander.enable``: a leader broker takes its live replicas back
    into the ISR (``adapters.kraft_broker.isr_expander``; there is no follower fetching)."""
    rack: str | None = None
    """``broker.rack``."""
    admin_port: int = 0
    """Our own: the loopback admin socket (0: any free port, logged)."""
    metrics_port: int = 0
    """Our own: the Prometheus endpoint (0: none)."""
    extra: dict[str, str] = field(default_factory=dict)
    """Keys we do not interpret (kept, logged once at start)."""

    @property
    def is_controller(self) -> bool:
        return CONTROLLER in self.process_roles

    @property
    def is_broker(self) -> bool:
        return BROKER in self.process_roles

    @property
    def controller_address(self) -> Address:
        """Where this node's controller listener listens (its entry of the voters)."""
        return self.quorum_voters[self.node_id]
