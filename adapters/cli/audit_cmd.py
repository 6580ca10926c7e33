"""``kcontrol audit``: check a running cluster's ZooKeeper state against the invariant catalogue.

Exit 0 when every snapshot invariant holds; otherwise a table (or ``--json``) of violations and
exit 1. Undecodable znodes are violations of ``znode-decodes`` (with the path), not crashes.
"""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from adapters.cli.admin_cmd import session, zookeeper_options
from adapters.zookeeper.audit import AuditViolation, ZkState, audit


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


@click.command("audit")
@zookeeper_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report instead of a table.")
def audit_cmd(hosts: str, connect_timeout: float, as_json: bool) -> None:
    """Read the cluster's znodes (bulk) and check the snapshot invariants: leader in ISR, ISR
    within replicas, ISR never empty, leader registered or -1, controller and epoch agree."""
    with session(hosts, connect_timeout) as client:
        state, rows = audit(client)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": not rows,
                    "controller": state.controller.broker_id if state.controller else None,
                    "controller_epoch": state.controller_epoch,
                    "brokers": list(state.broker_ids),
                    "topics": len(state.topic_names),
                    "partitions": len(state.partition_states),
                    "violations": [row.to_json() for row in rows],
                },
                indent=2,
            )
        )
    else:
        console = Console(width=max(Console().width, 120))
        console.print(summary(state))
        if rows:
            console.print(violations_table(state, rows))
        else:
            console.print("[green]all invariants hold[/]")
    if rows:
        raise SystemExit(1)
