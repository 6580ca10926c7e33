"""``kcontrol audit``: check a running cluster's ZooKeeper state against the invariant catalogue.

Exit 0 when every snapshot invariant holds; otherwise a table (or ``--json``) of violations and
exit 1. Undecodable znodes are violations of ``znode-decodes`` (with the path), not crashes.
``--brokers`` adds ``broker_metadata_matches_zookeeper`` (``adapters.broker.metadata_audit``):
every registered broker's Metadata answer, read over the wire, against the same ZooKeeper read.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from adapters.admin.connection import DEFAULT_CONNECT_TIMEOUT_S
from adapters.broker.metadata_audit import NAME as BROKER_METADATA
from adapters.broker.metadata_audit import broker_metadata_check
from adapters.cli.admin_cmd import session
from adapters.cli.zk_options import HOSTS_FORMAT, ZOOKEEPER_ENV, zookeeper_auth_option
from adapters.zookeeper.audit import AuditViolation, ZkState, audit
from adapters.zookeeper.connect import ZkAuth
from model_check.json_option import json_option, to_stdout, write_json


def violations_table(state: ZkState, rows: list[AuditViolation]) -> Table:
    table = Table(title=f"{len(rows)} invariant violation(s)", title_style="bold red")
    table.add_column("invariant", no_wrap=True)
    table.add_column("partition/entity", overflow="fold")
    table.add_column("detail", overflow="fold")
    for row in rows:
        table.add_row(row.invariant, row.entity, row.detail)
    return table


def summary(state: ZkState) -> str:
    controller = f"controller {state.controller.broker_id}" if state.controller else "no controller"
    return (
        f"{controller}, controller epoch {state.controller_epoch}, "
        f"{len(state.broker_ids)} broker(s), {len(state.topic_names)} topic(s), "
        f"{len(state.partition_states)} partition state(s)"
    )


@click.command("audit", short_help="Check a cluster (ZooKeeper or KRaft) against the invariants.")
@zookeeper_auth_option
@click.option("--connect-timeout", type=click.FloatRange(min=0.1),
              default=DEFAULT_CONNECT_TIMEOUT_S, show_default=True,
              help="Seconds to wait for a ZooKeeper server to answer.")
@click.option("--zookeeper", "hosts", envvar=ZOOKEEPER_ENV, default=None, metavar="HOSTS",
              help=f"The ZooKeeper connect string, {HOSTS_FORMAT}, of a ZooKeeper-mode "
                   f"cluster. Default: ${ZOOKEEPER_ENV}. Not used with --kraft.")
@json_option("audit report")
@click.option("--brokers", "check_brokers", is_flag=True,
              help="Also ask every broker registered in /brokers/ids for its metadata over the "
                   "Kafka protocol and compare it with ZooKeeper.")
@click.option("--listener", default="PLAINTEXT", show_default=True,
              help="With --brokers: the registered listener to ask on.")
@click.option("--settle", type=click.FloatRange(min=0.0), default=10.0, show_default=True,
              help="With --brokers: seconds to keep re-reading while only brokers' metadata "
                   "differs (a broker lags a change by one UpdateMetadata). With --kraft: "
                   "seconds to wait for the controllers to agree on one committed offset and "
                   "the brokers to replay it.")
@click.option("--kraft", "kraft_dir", type=click.Path(path_type=Path), default=None,
              help="Audit a KRaft cluster instead: the directory of `kcontrol cluster up "
                   "--mode kraft --dir D` (its kraft-cluster.json names the nodes).")
@click.option("--kraft-admin", default=None, metavar="ROLE:ID=HOST:PORT,...",
              help="Audit a KRaft cluster whose nodes' admin sockets are these (ROLE: "
                   "controller, broker or combined).")
def audit_cmd(hosts: str | None, connect_timeout: float, zookeeper_auth: ZkAuth | None,
              json_out: Path | None, check_brokers: bool, listener: str, settle: float,
              kraft_dir: Path | None, kraft_admin: str | None) -> None:
    """Read the cluster's znodes (bulk) and check the snapshot invariants: leader in ISR, ISR
    within replicas, ISR never empty, leader registered or -1, controller and epoch agree;
    with --brokers, every broker's metadata (over the wire) agrees with ZooKeeper.

    With --kraft (or --kraft-admin), audit a KRaft cluster: every controller's committed
    image equal at the same offset, the brokers' images current, and the KRaft invariant
    catalogue (specs/kraft-invariants.md) on two readings a moment apart."""
    if kraft_dir is not None or kraft_admin is not None:
        from adapters.cli.kraft_audit_cmd import run_kraft_audit

        raise SystemExit(run_kraft_audit(kraft_dir, kraft_admin, settle, json_out))
    if hosts is None:
        raise click.UsageError("Missing option '--zookeeper' (or --kraft DIR for a KRaft "
                               "cluster).")
    checks = [broker_metadata_check(listener)] if check_brokers else []
    deadline = time.monotonic() + settle
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        while True:
            client.sync("/")
            state, rows = audit(client, checks=checks)
            lagging = rows and all(r.invariant == BROKER_METADATA for r in rows)
            if not lagging or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
    if json_out is not None:
        write_json(json_out, {
            "ok": not rows,
            "controller": state.controller.broker_id if state.controller else None,
            "controller_epoch": state.controller_epoch,
            "brokers": list(state.broker_ids),
            "topics": len(state.topic_names),
            "partitions": len(state.partition_states),
            "violations": [row.to_json() for row in rows],
        })
    console = Console(width=max(Console().width, 120), stderr=to_stdout(json_out))
    console.print(summary(state))
    if rows:
        console.print(violations_table(state, rows))
    else:
        console.print("[green]all invariants hold[/]")
    if rows:
        raise SystemExit(1)
