"""The node's command line: ``--node-id N --voters 1@127.0.0.1:P1,2@...,3@... --dir D
[--controller] [--admin-port P]``, parsed into ``NodeArgs`` with an error that names the bad
argument (issue 25's ``kcontrol node`` reads the same settings from a properties file)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

MAX_VOTERS = 15
DEFAULT_CLUSTER_ID = "kcontrol-raft-cluster0"
DEFAULTS = {"election-timeout-ms": 1000, "fetch-timeout-ms": 2000,
            "election-backoff-max-ms": 1000, "flush-every": 256}
"""Kafka's defaults for the quorum's timeouts (``fsm.raft.config.RaftConfig``)."""


class ArgumentError(ValueError):
    """A bad argument; the message says which and why."""


@dataclass(frozen=True, slots=True)
class NodeArgs:
    node_id: int
    voters: dict[int, tuple[str, int]]  # id -> (host, port): controller.quorum.voters
    directory: Path
    controller: bool = False
    admin_port: int = 0
    cluster_id: str = DEFAULT_CLUSTER_ID
    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    flush_every: int = 256
    snapshot_every: int = 0
    log_level: str = "INFO"
    request_timeout_ms: int = 2000  # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20  # controller.quorum.retry.backoff.ms
    session_timeout_ms: int = 18_000  # broker.session.timeout.ms (the controller's leases)
    default_partitions: int = 1  # num.partitions
    default_replication_factor: int = 3  # default.replication.factor
    broker_listener: str | None = None
    """The brokers' listener whose endpoints DescribeCluster names (None: each one's first)."""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> tuple[str, int]:
        """Where this node listens: its own entry of the voters."""
        return self.voters[self.node_id]


def parse_voters(text: str) -> dict[int, tuple[str, int]]:
    """``1@host:port,2@host:port`` -> ``{1: (host, port), ...}`` (Kafka's
    ``controller.quorum.voters``)."""
    voters: dict[int, tuple[str, int]] = {}
    if not text.strip():
        raise ArgumentError("--voters is empty: want id@host:port[,id@host:port...]")
    for part in text.split(","):
        entry = part.strip()
        ident, at, address = entry.partition("@")
        host, colon, port_text = address.rpartition(":")
        if not at or not colon or not host:
            raise ArgumentError(f"--voters entry {entry!r}: want id@host:port")
        try:
            node_id, port = int(ident), int(port_text)
        except ValueError:
            raise ArgumentError(f"--voters entry {entry!r}: the id and the port are "
                                "integers") from None
        if node_id < 0:
            raise ArgumentError(f"--voters entry {entry!r}: a node id is not negative")
        if not 0 < port < 65536:
            raise ArgumentError(f"--voters entry {entry!r}: port {port} out of 1-65535")
        if node_id in voters:
            raise ArgumentError(f"--voters names node {node_id} twice")
        voters[node_id] = (host, port)
    if len(voters) > MAX_VOTERS:
        raise ArgumentError(f"--voters names {len(voters)} nodes; at most {MAX_VOTERS}")
    return voters


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m adapters.raft_node",
        description="One voter of the KRaft metadata quorum (KIP-595) on a local fsync'd log; "
                    "with --controller it hosts the quorum controller (active on the leader).")
    p.add_argument("--node-id", required=True, help="this node's id (one of --voters)")
    p.add_argument("--voters", required=True, help="id@host:port,... (controller.quorum.voters)")
    p.add_argument("--dir", required=True, help="the metadata log directory (created if missing)")
    p.add_argument("--controller", action="store_true", help="host the quorum controller")
    p.add_argument("--admin-port", default="0",
                   help="loopback port of the admin socket (0: any free port, logged)")
    p.add_argument("--cluster-id", default=DEFAULT_CLUSTER_ID)
    for name, default in DEFAULTS.items():
        p.add_argument(f"--{name}", default=str(default),
                       help="at most this many events between an asked flush and the fsync"
                       if name == "flush-every" else None)
    p.add_argument("--snapshot-every", default="0",
                   help="with --controller: committed records between snapshots (0: never)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return p


def _int(name: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ArgumentError(f"--{name} {text!r}: not an integer") from None
    if not low <= value <= high:
        raise ArgumentError(f"--{name} {value}: out of {low}-{high}")
    return value


def parse_args(argv: list[str]) -> NodeArgs:
    """``NodeArgs`` from ``argv``; ``ArgumentError`` naming the bad argument (argparse's own
    usage errors exit with status 2, as usual)."""
    ns = _parser().parse_args(argv)
    node_id = _int("node-id", ns.node_id, 0, 2**31 - 1)
    voters = parse_voters(ns.voters)
    if node_id not in voters:
        raise ArgumentError(f"--node-id {node_id} is not one of --voters "
                            f"({', '.join(map(str, voters))}); observers are issue 25's")
    directory = Path(ns.dir)
    if directory.exists() and not directory.is_dir():
        raise ArgumentError(f"--dir {ns.dir!r} exists and is not a directory")
    if ns.snapshot_every not in ("0", "") and not ns.controller:
        raise ArgumentError("--snapshot-every needs --controller (the controller writes them)")
    if not ns.cluster_id.strip():
        raise ArgumentError("--cluster-id is empty")
    return NodeArgs(
        node_id=node_id, voters=voters, directory=directory, controller=ns.controller,
        admin_port=_int("admin-port", ns.admin_port, 0, 65535), cluster_id=ns.cluster_id,
        election_timeout_ms=_int("election-timeout-ms", ns.election_timeout_ms, 10, 600_000),
        fetch_timeout_ms=_int("fetch-timeout-ms", ns.fetch_timeout_ms, 10, 600_000),
        election_backoff_max_ms=_int("election-backoff-max-ms", ns.election_backoff_max_ms,
                                     0, 600_000),
        flush_every=_int("flush-every", ns.flush_every, 1, 1_000_000),
        snapshot_every=_int("snapshot-every", ns.snapshot_every, 0, 100_000_000),
        log_level=ns.log_level)
