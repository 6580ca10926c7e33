"""``kcontrol zookeeper``: a real ZooKeeper ensemble on loopback ports (up, down, status, run).

``up`` prints the servers to stderr and only the connect string to stdout, so
``ZK=$(kcontrol zookeeper up --dir D)`` captures it.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from adapters.ensemble import (
    Ensemble,
    EnsembleError,
    EnsembleStatus,
    NoEnsembleError,
)
from model_check.json_option import json_option, to_stdout, write_json

DEFAULT_DIR = Path(".kcontrol/zookeeper")

_dir_option = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DIR,
    show_default=True,
    help="Directory holding the ensemble: configs, data, logs and ensemble.json.",
)


def _ensemble_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--servers",
            type=click.IntRange(1, 9),
            default=3,
            show_default=True,
            help="Number of servers; 1 runs a standalone server.",
        ),
        click.option(
            "--base-port",
            type=click.IntRange(1, 65535),
            default=None,
            help="Server i of N: client port P+i-1, peer P+N+i-1, election P+2N+i-1. "
            "Default: free ports.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            default=30.0,
            show_default=True,
            help="Seconds to wait for a quorum.",
        ),
        click.option("--tick-ms", type=click.IntRange(1), default=500, show_default=True,
                     help="ZooKeeper's tickTime, in milliseconds."),
        click.option(
            "--min-session-timeout-ms", type=click.IntRange(1), default=1000, show_default=True,
            help="The shortest session timeout the servers grant.",
        ),
        click.option(
            "--max-session-timeout-ms", type=click.IntRange(1), default=30000, show_default=True,
            help="The longest session timeout the servers grant.",
        ),
        click.option(
            "--fsync/--no-fsync",
            default=False,
            show_default=True,
            help="Make every server fsync each transaction (ZooKeeper's forceSync).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _create(directory: Path, **options: Any) -> Ensemble:
    return Ensemble.create(
        directory,
        options["servers"],
        base_port=options["base_port"],
        tick_time_ms=options["tick_ms"],
        min_session_timeout_ms=options["min_session_timeout_ms"],
        max_session_timeout_ms=options["max_session_timeout_ms"],
        force_sync=options["fsync"],
    )


def _fail(message: object) -> NoReturn:
    click.echo(f"kcontrol zookeeper: {message}", err=True)
    raise SystemExit(1)


def status_table(status: EnsembleStatus) -> Table:
    quorum = "[green]quorum[/]" if status.has_quorum else "[red]no quorum[/]"
    table = Table(title=f"ZooKeeper {status.connect_string} ({quorum})")
    for column in ("server", "client port", "pid", "process", "mode", "zxid"):
        table.add_column(column)
    colours = {"leader": "bold green", "follower": "green", "standalone": "bold green"}
    for row in status.servers:
        table.add_row(
            str(row.id),
            str(row.client_port),
            "-" if row.pid is None else str(row.pid),
            "alive" if row.alive else "[red]gone[/]",
            Text(row.mode, style=colours.get(row.mode, "red")),
            row.zxid_hex or "-",
        )
    return table


@click.group(short_help="Start, inspect and stop a ZooKeeper ensemble.")
def zookeeper() -> None:
    """Start, inspect and stop a real ZooKeeper ensemble on loopback ports."""


@zookeeper.command(short_help="Start the servers and wait for a quorum.")
@_dir_option
@_ensemble_options
def up(directory: Path, timeout: float, **options: Any) -> None:
    """Start the servers, wait for a quorum, print the connect string (last line of stdout)."""
    try:
        ensemble = _create(directory, **options)
        status = ensemble.up(timeout)
    except EnsembleError as exc:
        _fail(exc)
    Console(stderr=True).print(status_table(status))
    click.echo(f"stop it with: kcontrol zookeeper down --dir {directory}", err=True)
    click.echo(ensemble.connect_string)


@zookeeper.command(short_help="Stop the servers that up started.")
@_dir_option
def down(directory: Path) -> None:
    """Stop exactly the servers that `up` recorded in DIR."""
    try:
        ensemble = Ensemble.load(directory)
    except NoEnsembleError:
        click.echo(f"nothing to stop: {directory} holds no ensemble")
        return
    except EnsembleError as exc:
        _fail(exc)
    results = ensemble.stop()
    for result in results:
        click.echo(result.describe())
    if all(result.outcome in ("not running", "not ours") for result in results):
        click.echo(f"nothing was running in {directory}")


@zookeeper.command(short_help="Show each server's state.")
@_dir_option
@json_option("status")
def status(directory: Path, json_out: Path | None) -> None:
    """Show each server's process, mode and zxid; exit 1 when no quorum serves."""
    try:
        current = Ensemble.load(directory).status()
    except EnsembleError as exc:
        if json_out is not None:
            write_json(json_out, {"connect_string": None, "quorum": False, "servers": []})
        _fail(exc)
    if json_out is not None:
        write_json(json_out, current.to_json())
    Console(stderr=to_stdout(json_out)).print(status_table(current))
    if not current.has_quorum:
        raise SystemExit(1)


class _StopRequested(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _StopRequested(signum)


@zookeeper.command(short_help="Run the servers until Ctrl-C.")
@_dir_option
@_ensemble_options
def run(directory: Path, timeout: float, **options: Any) -> None:
    """Start the servers, show their status live until Ctrl-C (or SIGTERM), then stop them."""
    console = Console()
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, _raise_stop) for signum in handled}
    ensemble: Ensemble | None = None
    failure: str | None = None
    try:
        ensemble = _create(directory, **options)
        ensemble.start()  # not up(): the clean-up below reports what it stops
        ensemble.wait_for_quorum(timeout)
        console.print(f"connect string: {ensemble.connect_string}")
        console.print("Ctrl-C stops the ensemble.")

        def render() -> Group:
            return Group(status_table(ensemble.status()), Text(time.strftime("updated %H:%M:%S")))

        with Live(render(), console=console, refresh_per_second=4) as live:
            while True:
                time.sleep(1.0)  # the refresh interval, not a synchronisation
                live.update(render())
    except _StopRequested as stop:
        console.print(f"{stop}: stopping the ensemble")
    except EnsembleError as exc:
        failure = str(exc)
    finally:
        for signum in handled:  # a second Ctrl-C must not interrupt the clean-up
            signal.signal(signum, signal.SIG_IGN)
        try:
            if ensemble is not None:
                for result in ensemble.stop():
                    if result.outcome != "not running":
                        console.print(result.describe())
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if failure is not None:
        _fail(failure)
