"""``kcontrol broker``: run one broker (``adapters.broker.BrokerNode``) until it is stopped.

Signals: SIGTERM or SIGINT starts a controlled shutdown (ControlledShutdown v2 with the broker
epoch, retried at most ``--controlled-shutdown-max-retries`` times), then the process exits 0;
a second signal skips what is left of it. If the shutdown overruns its bound (every attempt
and back-off, plus 10 s) the broker stops without it and exits 1. SIGKILL is just death: the
sessions expire on the ensemble's clock.

Logs: the server log on stderr, the state-change log in ``--log-dir``/state-change.log
(``adapters.cli.log_options``); ``--log-config FILE`` replaces that setup.

Exit codes: 0 stopped on request; 1 could not start (busy port, ZooKeeper unreachable,
``--control-plane-priority realtime`` not permitted, the
broker id held by a live process) or stopped on a fatal error; 2 bad arguments.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import click

from adapters.broker import BrokerNode, BrokerSettings, BrokerStartError
from adapters.broker.logs import defer_logging
from adapters.cli.controller_cmd import _valid_hosts
from adapters.cli.log_options import (
    DEFAULT_LOG_ROOT,
    configure_logging,
    log_config_option,
    log_dir_option,
    state_change_log_options,
)
from adapters.cli.zk_options import zookeeper_auth_option, zookeeper_hosts_option
from adapters.controller.service import DEFAULT_SESSION_TIMEOUT_MS
from adapters.host import thread_priority as priority
from adapters.host.gc_tuning import tune_for_bursts
from adapters.network import ListenerConfig, ListenerConfigError, parse_listener_config
from adapters.zookeeper.connect import ZkAuth

log = logging.getLogger("kcontrol.broker")


def _parse_listeners(ctx: click.Context) -> ListenerConfig:
    params = ctx.params
    try:
        return parse_listener_config(params["listeners"], params["control_plane_listener"])
    except ListenerConfigError as exc:
        hint = "--control-plane-listener" if "control-plane" in str(exc) else "--listeners"
        raise click.BadParameter(str(exc), ctx=ctx, param_hint=hint) from None


@click.command(short_help="Run one broker until SIGTERM.")
@click.option("--id", "broker_id", type=click.IntRange(min=0), required=True,
              help="The broker id (/brokers/ids/<id>).")
@zookeeper_hosts_option()
@click.option("--listeners", required=True, metavar="NAME://HOST:PORT,...",
              help="Loopback listeners, e.g. CONTROLLER://127.0.0.1:9093,"
                   "PLAINTEXT://127.0.0.1:9092 (port 0: any free port).")
@click.option("--control-plane-listener", default=None, metavar="NAME",
              help="The listener that takes only controller requests (KIP-291). Without it "
                   "controller requests share the data plane.")
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=None,
              help="Serve Prometheus metrics on 127.0.0.1:PORT (0: any free port).")
@click.option("--session-timeout-ms", type=click.IntRange(min=1),
              default=DEFAULT_SESSION_TIMEOUT_MS, show_default=True,
              help="ZooKeeper session timeout (the broker's and its controller's).")
@click.option("--connect-timeout", type=click.FloatRange(min=0.1), default=15.0,
              show_default=True, help="Seconds to wait for the ensemble at start.")
@click.option("--controlled-shutdown-max-retries", type=click.IntRange(min=0), default=3,
              show_default=True,
              help="ControlledShutdown attempts before shutting down anyway (0: no "
                   "controlled shutdown).")
@click.option("--controlled-shutdown-retry-backoff-ms", type=click.IntRange(min=1),
              default=5000, show_default=True,
              help="Wait for an answer, and between attempts.")
@click.option("--isr-expand-interval-ms", type=click.IntRange(min=10), default=500,
              show_default=True,
              help="How often a leader takes live replicas back into its ISR.")
@click.option("--control-plane-priority", type=click.Choice(priority.MODES),
              default=priority.AUTO, show_default=True,
              help="Scheduling of the threads that carry controller requests (the "
                   "control-plane listener and handler, this broker's controller's senders): realtime = "
                   "SCHED_FIFO 1, so a busy data plane cannot delay them; auto = realtime "
                   "when permitted, else normal with a warning.")
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
              default="INFO", show_default=True,
              help="The lowest level logged (the default setup only).")
@log_dir_option("broker-<ID>")
@state_change_log_options
@log_config_option()
@zookeeper_auth_option
@click.pass_context
def broker(ctx: click.Context, broker_id: int, hosts: str, listeners: str,
           control_plane_listener: str | None, metrics_port: int | None,
           session_timeout_ms: int, connect_timeout: float,
           controlled_shutdown_max_retries: int, controlled_shutdown_retry_backoff_ms: int,
           isr_expand_interval_ms: int, control_plane_priority: str, log_level: str,
           log_dir: Path | None, state_change_max_bytes: int, state_change_files: int,
           log_config: tuple[Path, dict[str, Any]] | None,
           zookeeper_auth: ZkAuth | None) -> None:
    """Run one broker: listeners, registration, a controller candidate, until SIGTERM."""
    problem = _valid_hosts(hosts)
    if problem:
        raise click.BadParameter(f"{hosts!r}: {problem}", param_hint="--zookeeper")
    config = _parse_listeners(ctx)
    try:
        priority.check(control_plane_priority)
    except priority.PriorityError as exc:
        click.echo(f"kcontrol broker {broker_id}: error: {exc}", err=True)
        sys.exit(1)
    priority.configure(control_plane_priority)
    setup = configure_logging(log_level, log_dir or DEFAULT_LOG_ROOT / f"broker-{broker_id}",
                              log_config, max_bytes=state_change_max_bytes,
                              files=state_change_files)
    deferred = defer_logging()  # state-change lines are written by threads of their own
    try:
        _run(broker_id, hosts, config, metrics_port, session_timeout_ms, connect_timeout,
             controlled_shutdown_max_retries, controlled_shutdown_retry_backoff_ms,
             isr_expand_interval_ms, zookeeper_auth)
    finally:
        for d in deferred:
            d.stop()
        setup.close()


def _run(broker_id: int, hosts: str, config: ListenerConfig, metrics_port: int | None,
         session_timeout_ms: int, connect_timeout: float, controlled_shutdown_max_retries: int,
         controlled_shutdown_retry_backoff_ms: int, isr_expand_interval_ms: int,
         zookeeper_auth: ZkAuth | None) -> None:
    settings = BrokerSettings(
        broker_id, hosts, config, session_timeout_ms=session_timeout_ms,
        connect_timeout_s=connect_timeout, metrics_port=metrics_port,
        controlled_shutdown_enable=controlled_shutdown_max_retries > 0,
        controlled_shutdown_max_retries=max(controlled_shutdown_max_retries, 1),
        controlled_shutdown_retry_backoff_ms=controlled_shutdown_retry_backoff_ms,
        isr_expand_interval_ms=isr_expand_interval_ms, zookeeper_auth=zookeeper_auth)
    node = BrokerNode(settings)
    try:
        node.start()  # Ctrl-C meanwhile: KeyboardInterrupt; start() stops what it started
    except BrokerStartError as exc:
        click.echo(f"kcontrol broker {broker_id}: error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo(f"kcontrol broker {broker_id}: interrupted while starting", err=True)
        sys.exit(1)
    tune_for_bursts()  # after start-up: what it allocated is frozen out of full collections
    signals: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        signals.append(signum)  # the main loop acts on it

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    sys.exit(_serve(node, signals))


def _serve(node: BrokerNode, signals: list[int]) -> int:
    """Wait for the end; returns the exit code."""
    seen = 0
    deadline: float | None = None
    forced = False
    while not node.wait_exited(0.2):
        if len(signals) > seen:
            for signum in signals[seen:]:
                name = signal.Signals(signum).name
                if seen == 0:
                    log.info("%s %s: controlled shutdown", node.prefix, name)
                    node.request_shutdown(controlled=True)
                    deadline = time.monotonic() + node.settings.shutdown_deadline_s
                else:
                    log.info("%s %s again: shutting down now", node.prefix, name)
                    node.request_shutdown(controlled=False)
                seen += 1
        if deadline is not None and time.monotonic() > deadline:
            if forced:
                log.error("%s did not stop in time: closing", node.prefix)
                node.close()
                return 1
            log.error("%s controlled shutdown overran %.0f s: shutting down now", node.prefix,
                      node.settings.shutdown_deadline_s)
            node.request_shutdown(controlled=False)
            forced = True
            deadline = time.monotonic() + 10.0
    if node.exit_error is not None:
        click.echo(f"kcontrol broker {node.broker_id}: error: {node.exit_error}", err=True)
        return 1
    return 1 if forced else 0
