"""The broker's own entry point's command line (``python -m adapters.kraft_broker``), for tests
until ``kcontrol node --config`` runs a broker-only node: ``--node-id N --voters
1@127.0.0.1:P1,... --listener 127.0.0.1:P --dir D --cluster-id C`` and the timeouts, built
straight into ``NodeSettings`` (``broker_settings``) with an error that names the bad
argument."""

from __future__ import annotations

import argparse
from pathlib import Path

from adapters.kraft_node.settings import BROKER, NodeSettings
from adapters.raft_node.args import ArgumentError, parse_voters

CONTROLLER_LISTENER = "CONTROLLER"
CLIENT_LISTENER = "PLAINTEXT"


def broker_settings(node_id: int, voters: dict[int, tuple[str, int]],
                    listener: tuple[str, int], directory: Path, **timeouts: int
                    ) -> NodeSettings:
    """A broker-only node's settings: its client listener PLAINTEXT at ``listener``, the
    voters' controller listener CONTROLLER, the metadata log in ``directory/metadata`` and
    the replicas in ``directory/data``. ``timeouts``: NodeSettings' own names."""
    directory = Path(directory)
    return NodeSettings(
        process_roles=frozenset({BROKER}), node_id=node_id, quorum_voters=dict(voters),
        controller_listener_names=(CONTROLLER_LISTENER,),
        listeners={CLIENT_LISTENER: listener}, metadata_log_dir=directory / "metadata",
        log_dirs=(directory / "data",), advertised_listeners={CLIENT_LISTENER: listener},
        **timeouts)


_TIMEOUTS = {
    "heartbeat-interval-ms": ("broker_heartbeat_interval_ms", 2000),
    "session-timeout-ms": ("broker_session_timeout_ms", 9000),
    "registration-timeout-ms": ("initial_broker_registration_timeout_ms", 60000),
    "request-timeout-ms": ("controller_quorum_request_timeout_ms", 2000),
    "fetch-timeout-ms": ("controller_quorum_fetch_timeout_ms", 2000),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m adapters.kraft_broker",
        description="One KRaft broker (broker role only): observes the metadata quorum, "
                    "registers with the active controller, serves clients on --listener.")
    p.add_argument("--node-id", required=True, help="this broker's id (not one of --voters)")
    p.add_argument("--voters", required=True,
                   help="id@host:port,... (controller.quorum.voters)")
    p.add_argument("--listener", required=True, help="host:port of the client listener "
                   "(port 0: any free port, logged)")
    p.add_argument("--dir", required=True, help="the broker's directory (metadata log, data)")
    p.add_argument("--cluster-id", required=True)
    for name, (_, default) in _TIMEOUTS.items():
        p.add_argument(f"--{name}", default=str(default))
    p.add_argument("--no-controlled-shutdown", action="store_true",
                   help="controlled.shutdown.enable=false")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return p


def _int(name: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ArgumentError(f"--{name} {text!r}: not an integer") from None
    if not low <= value <= high:
        raise ArgumentError(f"--{name} {value}: out of {low}-{high}")
    return value


def parse_args(argv: list[str]) -> tuple[NodeSettings, str, str]:
    """(settings, cluster id, log level); ``ArgumentError`` naming the bad argument."""
    ns = _parser().parse_args(argv)
    node_id = _int("node-id", ns.node_id, 0, 2**31 - 1)
    voters = parse_voters(ns.voters)
    if node_id in voters:
        raise ArgumentError(f"--node-id {node_id} is one of --voters: a broker-only node is "
                            "not a voter")
    host, colon, port_text = ns.listener.rpartition(":")
    if not colon or not host:
        raise ArgumentError(f"--listener {ns.listener!r}: want host:port")
    port = _int("listener", port_text, 0, 65535)
    directory = Path(ns.dir)
    if directory.exists() and not directory.is_dir():
        raise ArgumentError(f"--dir {ns.dir!r} exists and is not a directory")
    if not ns.cluster_id.strip():
        raise ArgumentError("--cluster-id is empty")
    timeouts = {field: _int(name, getattr(ns, name.replace("-", "_")), 1, 3_600_000)
                for name, (field, _) in _TIMEOUTS.items()}
    settings = broker_settings(node_id, voters, (host, port), directory,
                               controlled_shutdown_enable=not ns.no_controlled_shutdown,
                               **timeouts)
    return settings, ns.cluster_id, ns.log_level
