"""``kcontrol chaos --mode kraft``: the KRaft fault campaign (``adapters.kraft_chaos``) -- its
own options, the refusal of the other mode's, and the run."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource
from rich.console import Console

from model_check.json_option import to_stdout
from model_check.progress import Progress

F = TypeVar("F", bound=Callable[..., Any])

ZOOKEEPER_ONLY = {"hosts": "--zookeeper", "zookeeper_auth": "--zookeeper-auth",
                  "log_config": "--log-config"}
KRAFT_ONLY = {"fetch_timeout_ms": "--fetch-timeout-ms", "snapshot_every": "--snapshot-every",
              "background": "--background/--no-background",
              "disk_faults": "--disk-faults/--no-disk-faults",
              "network_faults": "--network-faults/--no-network-faults"}


def kraft_options(command: F) -> F:
    """The options only ``--mode kraft`` takes."""
    for option in reversed([
        click.option("--fetch-timeout-ms", type=click.IntRange(min=500), default=None,
                     help="KRaft: controller.quorum.fetch.timeout.ms [default: 2000]; the "
                          "election timeout is half of it."),
        click.option("--snapshot-every", type=click.IntRange(min=0), default=None,
                     help="KRaft: the controllers snapshot every this many committed records "
                          "(0: never) [default: 500]."),
        click.option("--background/--no-background", default=None,
                     help="KRaft: admin work from a thread during the faults too "
                          "[default: on]."),
        click.option("--disk-faults/--no-disk-faults", default=None,
                     help="KRaft: the disk-full and disk-read-only faults (a tmpfs under one "
                          "controller) [default: on where tmpfs can be mounted]."),
        click.option("--network-faults/--no-network-faults", default=None,
                     help="KRaft: the isolation and one-way loss faults (a proxy before every "
                          "controller listener) [default: on]."),
    ]):
        command = option(command)
    return command


def refuse_other_mode(ctx: click.Context, mode: str) -> None:
    """A usage error naming an option given on the command line that ``mode`` does not take."""
    other = ZOOKEEPER_ONLY if mode == "kraft" else KRAFT_ONLY
    for name, flag in other.items():
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{flag} is for --mode "
                                   f"{'zookeeper' if mode == 'kraft' else 'kraft'} only")


def run_kraft(*, brokers: int, faults: int, seed: int, json_out: Path | None,
              session_timeout_ms: int, directory: Path | None, settle_timeout: float | None,
              op_timeout: float | None, time_limit: float | None, show_plan: bool,
              fetch_timeout_ms: int | None, snapshot_every: int | None,
              background: bool | None, disk_faults: bool | None,
              network_faults: bool | None) -> None:
    from adapters.kraft_chaos.plan import make_plan
    from adapters.kraft_chaos.runner import KSettings, run_kraft_campaign

    if show_plan:
        for step in make_plan(seed, faults, brokers, disks=disk_faults is not False,
                              network=network_faults is not False):
            click.echo(f"{step.index:>4}  {step.action.describe():<40} {step.fault.describe()}")
        return
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="kcontrol-kraft-chaos-"))
    fetch = fetch_timeout_ms or 2000
    settings = KSettings(directory.absolute(), brokers=brokers, faults=faults, seed=seed,
                         session_timeout_ms=session_timeout_ms, fetch_timeout_ms=fetch,
                         election_timeout_ms=max(250, fetch // 2),
                         snapshot_every=500 if snapshot_every is None else snapshot_every,
                         settle_timeout_s=settle_timeout, op_timeout_s=op_timeout,
                         time_limit_s=time_limit, background=background is not False,
                         disks=disk_faults is not False, network=network_faults is not False)
    console = Console(width=max(Console().width, 160), stderr=to_stdout(json_out))
    console.print(f"kcontrol chaos --mode kraft: seed {seed}, {faults} fault(s), 3 controllers "
                  f"and {brokers} brokers; logs in {settings.directory}")
    with Progress(f"kraft chaos seed {seed}", faults, "faults") as bar:
        if bar.console is not None and console.file.isatty():
            console = bar.console
        code, _ = run_kraft_campaign(settings, console, json_out,
                                     on_fault=lambda _: bar.advance())
    raise SystemExit(code)
