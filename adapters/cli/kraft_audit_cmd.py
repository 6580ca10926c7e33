"""``kcontrol audit --kraft DIR`` (or ``--kraft-admin ROLE:ID=HOST:PORT,...``): the KRaft
invariant catalogue over a live cluster (``adapters.kraft_audit``). Exit 0 when everything
holds, 1 with a table (or ``--json``) of the violations, 2 when the nodes cannot be found or
no controller answers."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from adapters.kraft_audit.audit import audit
from adapters.kraft_audit.targets import Target, TargetError, from_list, from_plan
from model_check.json_option import to_stdout, write_json


def _error(message: object) -> None:
    click.echo(f"kcontrol audit: error: {message}", err=True)


def targets_of(plan_dir: Path | None, admin: str | None) -> list[Target]:
    if plan_dir is not None and admin is not None:
        raise TargetError("give --kraft or --kraft-admin, not both")
    return from_plan(plan_dir) if plan_dir is not None else from_list(admin or "")


def run_kraft_audit(plan_dir: Path | None, admin: str | None, settle: float,
                    json_out: Path | None) -> int:
    console = Console(width=max(Console().width, 120), stderr=to_stdout(json_out))
    try:
        targets = targets_of(plan_dir, admin)
    except TargetError as exc:
        _error(exc)
        return 2
    controllers = {t.node_id: t.ask() for t in targets if "controller" in t.roles}
    brokers = {t.node_id: t.ask() for t in targets if "broker" in t.roles}
    if not controllers:
        _error("no controller among the nodes given")
        return 2
    try:
        report = audit(controllers, brokers, settle_s=settle, catch_up_s=settle)
    except ConnectionError as exc:
        _error(exc)
        return 2
    if json_out is not None:
        write_json(json_out, report.to_json())
    console.print(report.summary())
    for node_id, why in sorted(report.last.unreachable.items()):
        console.print(f"[yellow]node {node_id} did not answer: {why}[/]")
    if report.violations:
        table = Table(title=f"{len(report.violations)} invariant violation(s)",
                      title_style="bold red")
        table.add_column("invariant", no_wrap=True)
        table.add_column("detail", overflow="fold")
        for v in report.violations:
            table.add_row(v.invariant, v.detail)
        console.print(table)
        return 1
    console.print(f"[green]all {len(report.checked)} invariants hold[/]")
    return 0
