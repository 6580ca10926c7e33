"""``kcontrol chaos``: the fault campaign on a cluster it starts and stops -- ZooKeeper mode
(``adapters.chaos``, the default) or KRaft mode (``--mode kraft``: ``adapters.kraft_chaos``,
through ``adapters.cli.chaos_kraft``). Options of one mode given with the other are refused.

While it runs, the faults done of ``--faults`` show with their rate and the time left on
standard error (``model_check.progress``: a bar on a terminal, else a plain line at most every
10 s).

Exit codes: 0 when no audit violation, no loss and no stuck operation was found; 1 otherwise
(or when the cluster could not be started); 2 usage; 130 interrupted (everything started is
stopped in every case).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from adapters.chaos.plan import make_plan
from adapters.chaos.runner import Settings, run_campaign
from adapters.cli.admin_cmd import quiet_kazoo
from adapters.cli.chaos_kraft import kraft_options, refuse_other_mode, run_kraft
from adapters.cli.controller_cmd import _valid_hosts
from adapters.cli.log_options import log_config_option
from adapters.cli.zk_options import zookeeper_auth_option, zookeeper_hosts_option
from adapters.zookeeper.connect import ZkAuth
from model_check.json_option import json_option, to_stdout
from model_check.progress import Progress


@click.command("chaos", short_help="Run a seeded fault campaign on a local cluster.")
@click.option("--mode", type=click.Choice(["zookeeper", "kraft"]), default="zookeeper",
              show_default=True, help="ZooKeeper mode (brokers and an ensemble) or KRaft mode "
                                      "(3 controllers and the brokers).")
@click.option("--brokers", type=click.IntRange(2, 9), default=3, show_default=True,
              help="How many brokers the cluster has.")
@click.option("--faults", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="How many faults to inject (one admin action before each).")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seeds the plan: the same seed gives the same actions and faults.")
@zookeeper_hosts_option(
    required=False,
    help="Without it a private 3-server ensemble is started; with it, ZooKeeper server faults "
    "are left out.")
@zookeeper_auth_option
@json_option("campaign report")
@click.option("--session-timeout-ms", type=click.IntRange(min=2000), default=6000,
              show_default=True, help="The brokers' session timeout (ZooKeeper session; KRaft: "
                                      "broker.session.timeout.ms).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Where the cluster lives (logs, state); default: a new "
                                 "temporary directory, kept afterwards for the logs.")
@click.option("--settle-timeout", type=click.FloatRange(min=5.0), default=None,
              help="Seconds to wait for the cluster to settle after each fault "
                   "[default: max(60, 12 session timeouts)].")
@click.option("--op-timeout", type=click.FloatRange(min=5.0), default=None,
              help="Seconds after which an admin operation not complete is stuck "
                   "[default: max(90, 15 session timeouts)].")
@click.option("--time-limit", type=click.FloatRange(min=10.0), default=None,
              help="Stop injecting after this many seconds [default: 300 + 90 per fault].")
@click.option("--plan", "show_plan", is_flag=True,
              help="Print the plan the seed gives and exit (starts nothing).")
@log_config_option("Give every broker of the campaign this logging configuration (a JSON file "
                   "holding a logging.config.dictConfig dictionary) instead of the default "
                   "setup.")
@kraft_options
@click.pass_context
def chaos(ctx: click.Context, mode: str, brokers: int, faults: int, seed: int, hosts: str | None,
          zookeeper_auth: ZkAuth | None, json_out: Path | None, session_timeout_ms: int,
          directory: Path | None, settle_timeout: float | None, op_timeout: float | None,
          time_limit: float | None, show_plan: bool,
          log_config: tuple[Path, dict[str, Any]] | None, fetch_timeout_ms: int | None,
          snapshot_every: int | None, background: bool | None, disk_faults: bool | None,
          network_faults: bool | None) -> None:
    """Run a seeded fault campaign on a local cluster: admin actions interleaved with kill -9,
    SIGSTOP past the session timeout, controlled shutdowns, ZooKeeper server kills and
    server-side session expiry; after each fault, wait for recovery and audit ZooKeeper and
    every broker's metadata. Exit 0 only with no violation, loss or stuck operation.

    With --mode kraft: 3 controllers and the brokers, kill -9 and SIGSTOP of the active
    controller, a standby and brokers, controlled shutdowns, one controller's metadata disk
    full or read-only, a controller isolated and one-way message loss (a proxy before every
    listener), admin work throughout; after each fault the live audit and the ledger of
    committed records. Exit 0 only with no violation, loss (of topics or of committed
    records), stuck operation, or recovery over the session timeout plus 2 s."""
    refuse_other_mode(ctx, mode)
    if mode == "kraft":
        run_kraft(brokers=brokers, faults=faults, seed=seed, json_out=json_out,
                  session_timeout_ms=session_timeout_ms, directory=directory,
                  settle_timeout=settle_timeout, op_timeout=op_timeout, time_limit=time_limit,
                  show_plan=show_plan, fetch_timeout_ms=fetch_timeout_ms,
                  snapshot_every=snapshot_every, background=background,
                  disk_faults=disk_faults, network_faults=network_faults)
        return
    quiet_kazoo()
    if hosts is not None and (problem := _valid_hosts(hosts)):
        raise click.BadParameter(f"{hosts!r}: {problem}", param_hint="--zookeeper")
    if show_plan:
        for step in make_plan(seed, faults, brokers, zookeeper_faults=hosts is None):
            click.echo(f"{step.index:>4}  {step.action.describe():<40} {step.fault.describe()}")
        return
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="kcontrol-chaos-"))
    settings = Settings(directory.absolute(), brokers=brokers, faults=faults, seed=seed,
                        zookeeper=hosts, auth=zookeeper_auth,
                        session_timeout_ms=session_timeout_ms,
                        settle_timeout_s=settle_timeout, op_timeout_s=op_timeout,
                        time_limit_s=time_limit,
                        log_config=log_config[0] if log_config else None)
    console = Console(width=max(Console().width, 160), stderr=to_stdout(json_out))
    console.print(f"kcontrol chaos: seed {seed}, {faults} fault(s), {brokers} brokers; "
                  f"logs in {settings.directory}")
    with Progress(f"chaos seed {seed}", faults, "faults") as bar:
        if bar.console is not None and console.file.isatty():
            console = bar.console  # the same screen: narrate above the bar, not through it
        code, _ = run_campaign(settings, console, json_out, on_fault=lambda _: bar.advance())
    raise SystemExit(code)
