"""``kcontrol controller``: run one controller candidate against a ZooKeeper ensemble until
SIGINT/SIGTERM. Several may run at once (different ``--broker-id``): they race for
``/controller``. Logs on stderr, and every state change one line each to the state-change log,
``--log-dir``/state-change.log (``adapters.cli.log_options``)."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import click

from adapters.cli.log_options import (
    DEFAULT_LOG_ROOT,
    configure_logging,
    log_config_option,
    log_dir_option,
    state_change_log_options,
)
from adapters.cli.zk_options import zookeeper_auth_option, zookeeper_hosts_option
from adapters.controller import ControllerService, ServiceError
from adapters.controller.event_queue import DEFAULT_CAPACITY
from adapters.controller.service import DEFAULT_SESSION_TIMEOUT_MS
from adapters.host.gc_tuning import tune_for_bursts
from adapters.zookeeper.connect import ZkAuth


def _valid_hosts(hosts: str) -> str | None:
    """Why ``hosts`` is not a ZooKeeper connect string (``h:p,h:p[/chroot]``), or None."""
    servers, _, chroot = hosts.partition("/")
    if not servers:
        return "no servers"
    for item in servers.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep:
            host, port = item.strip(), "2181"
        if not host or any(c.isspace() for c in host) or not port.isdigit() or not 0 < int(port) < 65536:
            return f"bad server {item!r} (expected HOST:PORT)"
    if chroot and chroot.endswith("/"):
        return f"bad chroot '/{chroot}'"
    return None


@click.command(short_help="Run one controller candidate.")
@click.option("--broker-id", type=click.IntRange(min=0), required=True,
              help="The id of the broker this candidate belongs to.")
@zookeeper_hosts_option()
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=None,
              help="Serve Prometheus metrics on this port (0: an ephemeral port). Default: off.")
@click.option("--session-timeout-ms", type=click.IntRange(min=1), show_default=True,
              default=DEFAULT_SESSION_TIMEOUT_MS, help="ZooKeeper session timeout.")
@click.option("--connect-timeout", type=click.FloatRange(min=0.1), default=15.0,
              show_default=True, help="Seconds to wait for the ensemble at start.")
@click.option("--queue-capacity", type=click.IntRange(min=1), default=DEFAULT_CAPACITY,
              show_default=True, help="Bound of the controller's event queue.")
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
              default="INFO", show_default=True,
              help="The lowest level logged (the default setup only).")
@log_dir_option("controller-<BROKER_ID>")
@state_change_log_options
@log_config_option()
@zookeeper_auth_option
def controller(broker_id: int, hosts: str, metrics_port: int | None, session_timeout_ms: int,
               connect_timeout: float, queue_capacity: int, log_level: str,
               log_dir: Path | None, state_change_max_bytes: int, state_change_files: int,
               log_config: tuple[Path, dict[str, Any]] | None,
               zookeeper_auth: ZkAuth | None) -> None:
    """Run one controller candidate until SIGINT/SIGTERM."""
    problem = _valid_hosts(hosts)
    if problem:
        raise click.BadParameter(f"{hosts!r}: {problem}", param_hint="--zookeeper")
    setup = configure_logging(
        log_level, log_dir or DEFAULT_LOG_ROOT / f"controller-{broker_id}", log_config,
        max_bytes=state_change_max_bytes, files=state_change_files)
    try:
        _run(broker_id, hosts, metrics_port, session_timeout_ms, connect_timeout,
             queue_capacity, zookeeper_auth)
    finally:
        setup.close()


def _run(broker_id: int, hosts: str, metrics_port: int | None, session_timeout_ms: int,
         connect_timeout: float, queue_capacity: int, zookeeper_auth: ZkAuth | None) -> None:
    svc = ControllerService(broker_id, hosts, session_timeout_ms=session_timeout_ms,
                            metrics_port=metrics_port, connect_timeout=connect_timeout,
                            queue_capacity=queue_capacity, zookeeper_auth=zookeeper_auth)
    try:
        svc.start()
    except ServiceError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    tune_for_bursts()
    if svc.metrics_port is not None:
        click.echo(f"metrics: http://127.0.0.1:{svc.metrics_port}/metrics", err=True)
    done = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger("kcontrol.controller").info("signal %d: stopping", signum)
        done.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        while not done.wait(0.5):
            pass
    finally:
        svc.stop()
