"""``kcontrol cluster``: a whole local cluster (up, down, status) and the ``make run`` demo.

``up`` prints the brokers table to stderr and only the ZooKeeper connect string to stdout, so
``ZK=$(kcontrol cluster up)`` captures it (as ``kcontrol zookeeper up`` does).
Exit codes: 0 done; 1 failed (the message says why; ``up`` stops what it started); 2 usage.

``--zookeeper-auth`` given to ``up`` goes to every broker (through the environment) and is
recorded in DIR's state file, which ``status`` and ``down`` read it from (their own
``--zookeeper-auth`` overrides it). The password is never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import click
from click.core import ParameterSource
from rich.console import Console

from adapters.cli.admin_cmd import quiet_kazoo
from adapters.cli.cluster_kraft import run_kraft_up
from adapters.cli.controller_cmd import _valid_hosts
from adapters.cli.log_options import log_config_option
from adapters.cli.zk_options import zookeeper_auth_option, zookeeper_hosts_option
from adapters.cluster import Cluster, ClusterError, NoClusterError
from adapters.cluster.demo import run_demo, status_table
from adapters.cluster.kraft_demo import run_kraft_demo
from adapters.cluster.launcher import DEFAULT_SESSION_TIMEOUT_MS
from adapters.host import thread_priority as priority
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth

DEFAULT_DIR = Path(".kcontrol/cluster")
DEFAULT_KRAFT_DIR = Path(".kcontrol/kraft")
ZOOKEEPER = "zookeeper"
KRAFT = "kraft"
BOTH = "both"
ZOOKEEPER_ONLY = frozenset({"hosts", "session_timeout_ms", "control_plane",
                            "control_plane_priority", "log_config", "zookeeper_auth"})
KRAFT_SNAPSHOT_EVERY = 1000
"""``--mode kraft``: the controllers write a snapshot every this many committed records."""

_dir_option = click.option(
    "--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DIR, show_default=True,
    help="Directory holding the cluster: cluster.json, broker logs, the ensemble.")


_broker_log_config = log_config_option(
    "Give every broker this logging configuration (a JSON file holding a "
    "logging.config.dictConfig dictionary) instead of the default setup.")


def _fail(message: object) -> NoReturn:
    click.echo(f"kcontrol cluster: error: {message}", err=True)
    raise SystemExit(1)


@click.group(short_help="Start, inspect and stop a local cluster.")
def cluster() -> None:
    """Start, inspect and stop a local cluster: ZooKeeper and broker processes."""
    quiet_kazoo()  # kazoo logs every refused connection; the command's message says it once


@cluster.command(short_help="Start ZooKeeper and the brokers, or a KRaft cluster.")
@click.option("--mode", type=click.Choice([ZOOKEEPER, KRAFT]), default=ZOOKEEPER,
              show_default=True,
              help="Which cluster: ZooKeeper and brokers, started in the background; or KRaft "
                   "(a controller quorum and brokers), in the foreground until Ctrl-C.")
@click.option("--brokers", type=click.IntRange(1, 9), default=3, show_default=True,
              help="How many brokers to start.")
@click.option("--controllers", type=click.IntRange(1, 9), default=3, show_default=True,
              help="How many controllers (voters of the metadata quorum) with --mode kraft.")
@zookeeper_hosts_option(required=False, help="Without it an ensemble is started in DIR.")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help=f"Directory holding the cluster [default: {DEFAULT_DIR}; --mode kraft: "
                   f"{DEFAULT_KRAFT_DIR}, cleared first].")
@click.option("--session-timeout-ms", type=click.IntRange(min=1000),
              default=DEFAULT_SESSION_TIMEOUT_MS, show_default=True,
              help="The brokers' ZooKeeper session timeout (how fast a kill -9 is noticed).")
@click.option("--control-plane/--no-control-plane", default=True, show_default=True,
              help="Give each broker a CONTROLLER listener for controller requests (KIP-291).")
@click.option("--control-plane-priority", type=click.Choice(priority.MODES),
              default=priority.AUTO, show_default=True,
              help="Each broker's --control-plane-priority (see `kcontrol broker --help`).")
@click.option("--timeout", type=click.FloatRange(min=1.0), default=90.0, show_default=True,
              help="Seconds to wait for the cluster to be ready.")
@_broker_log_config
@zookeeper_auth_option
def up(mode: str, brokers: int, controllers: int, hosts: str | None,
       directory: Path | None, session_timeout_ms: int,
       control_plane: bool, control_plane_priority: str, timeout: float,
       log_config: tuple[Path, dict[str, Any]] | None, zookeeper_auth: ZkAuth | None) -> None:
    """Start ZooKeeper (unless --zookeeper) and BROKERS brokers; wait until a controller is
    elected and every broker's metadata names every broker. Each broker logs to
    DIR/broker-<id>.log and its state changes to DIR/broker-<id>/state-change.log.

    With --mode kraft: format and start CONTROLLERS controllers (node ids 3000, 3001, ...)
    and BROKERS brokers (1, 2, ...), each from DIR/<role>-<id>.properties; print the
    bootstrap servers (stdout), the quorum and the cluster id; stop everything on Ctrl-C."""
    ctx = click.get_current_context()
    given = {name for name in ctx.params
             if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE}
    if mode == KRAFT:
        for name in sorted(given & ZOOKEEPER_ONLY):
            option = "zookeeper" if name == "hosts" else name.replace("_", "-")
            raise click.UsageError(f"--{option} is for --mode zookeeper only")
        raise SystemExit(run_kraft_up(directory or DEFAULT_KRAFT_DIR, controllers, brokers,
                                      timeout, KRAFT_SNAPSHOT_EVERY))
    if "controllers" in given:
        raise click.UsageError("--controllers is for --mode kraft only")
    directory = directory or DEFAULT_DIR
    if hosts is not None and (problem := _valid_hosts(hosts)):
        raise click.BadParameter(f"{hosts!r}: {problem}", param_hint="--zookeeper")
    try:
        c = Cluster.create(directory, brokers, zookeeper=hosts,
                           session_timeout_ms=session_timeout_ms, control_plane=control_plane,
                           zookeeper_auth=zookeeper_auth,
                           control_plane_priority=control_plane_priority,
                           log_config=log_config[0] if log_config else None)
        if c.ensemble is not None:
            click.echo(f"starting a 3-server ZooKeeper ensemble in {c.ensemble_dir} ...",
                       err=True)
        click.echo(f"starting {brokers} broker(s) (logs: {c.directory}/broker-<id>.log, state "
                   f"changes: {c.directory}/broker-<id>/state-change.log) ...", err=True)
        st = c.up(timeout)
    except ClusterError as exc:
        _fail(exc)
    Console(stderr=True, width=max(Console().width, 120)).print(status_table(st))
    click.echo(f"controller: broker {st.controller} (controller epoch {st.controller_epoch})",
               err=True)
    click.echo(f"admin commands: export KCONTROL_ZOOKEEPER={c.zookeeper}", err=True)
    if zookeeper_auth is not None:
        click.echo(f"ZooKeeper ACLs: znodes are writable by user {zookeeper_auth.user!r} only; "
                   f"give admin commands --zookeeper-auth (or ${AUTH_ENV})", err=True)
    click.echo(f"stop it with: kcontrol cluster down --dir {directory}", err=True)
    click.echo(c.zookeeper)


def _load(directory: Path, zookeeper_auth: ZkAuth | None) -> Cluster:
    """DIR's cluster; a ``--zookeeper-auth`` given overrides the identity it recorded."""
    c = Cluster.load(directory)
    if zookeeper_auth is not None:
        c.zookeeper_auth = zookeeper_auth
    return c


@cluster.command(short_help="Stop what up started.")
@_dir_option
@zookeeper_auth_option
def down(directory: Path, zookeeper_auth: ZkAuth | None) -> None:
    """Stop exactly what `up` started in DIR: brokers (controlled shutdown, the controller
    last), then its ZooKeeper ensemble."""
    try:
        c = _load(directory, zookeeper_auth)
    except NoClusterError:
        click.echo(f"nothing to stop: {directory} holds no cluster")
        return
    except ClusterError as exc:
        _fail(exc)
    lines = c.down()
    for line in lines:
        click.echo(line)


@cluster.command(short_help="Show the brokers and the controller.")
@_dir_option
@zookeeper_auth_option
def status(directory: Path, zookeeper_auth: ZkAuth | None) -> None:
    """The brokers, the controller and what each broker's metadata says; exit 1 unless every
    broker runs, is registered and agrees on the brokers and the controller."""
    try:
        c = _load(directory, zookeeper_auth)
        st = c.status()
    except ClusterError as exc:
        _fail(exc)
    Console(width=max(Console().width, 120)).print(status_table(st))
    problems = st.problems()
    for p in problems:
        click.echo(f"not ready: {p}")
    if problems:
        raise SystemExit(1)
    click.echo(f"controller: broker {st.controller} (controller epoch {st.controller_epoch})")


@cluster.command(short_help="Run the make run walk-through.")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path(".kcontrol/demo"), show_default=True,
              help="Directory holding the demo's cluster, its logs and the plan it moves "
                   "(the KRaft stage's cluster in DIR/kraft).")
@click.option("--mode", type=click.Choice([ZOOKEEPER, KRAFT, BOTH]), default=BOTH,
              show_default=True,
              help="Which stages to run: ZooKeeper mode, KRaft mode, or both (ZooKeeper "
                   "first).")
@click.option("--session-timeout-ms", type=click.IntRange(min=1000), default=4000,
              show_default=True, help="The brokers' ZooKeeper session timeout.")
@_broker_log_config
@zookeeper_auth_option
def demo(directory: Path, mode: str, session_timeout_ms: int,
         log_config: tuple[Path, dict[str, Any]] | None, zookeeper_auth: ZkAuth | None) -> None:
    """The `make run` walk-through. ZooKeeper mode: create a topic, kill -9 the controller's
    broker, bring it back, move a partition, delete the topic, audit. KRaft mode: format, start
    a 3-controller quorum and 3 brokers, create a topic with a stock AdminClient, kill -9 the
    active controller, shut a broker down through its heartbeats, read the latest snapshot.
    Each stage stops everything it started."""
    directory = directory.absolute()
    code = 0
    if mode in (ZOOKEEPER, BOTH):
        code = run_demo(directory, session_timeout_ms=session_timeout_ms,
                        zookeeper_auth=zookeeper_auth,
                        log_config=log_config[0] if log_config else None)
    if code == 0 and mode in (KRAFT, BOTH):
        code = run_kraft_demo(directory / "kraft")
    raise SystemExit(code)
