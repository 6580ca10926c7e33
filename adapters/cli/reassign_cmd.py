"""``kcontrol reassign``: Kafka 2.x's ``kafka-reassign-partitions.sh`` (ZooKeeper mode) over
``adapters.admin.reassign`` and ``adapters.admin.reassign_generate``.

Kafka's actions: ``--execute`` and ``--verify`` with ``--reassignment-json-file FILE``;
``--generate`` with ``--topics-to-move-json-file FILE --broker-list IDS``. kcontrol's earlier
forms still work: ``--plan FILE`` (the same option as ``--reassignment-json-file``; alone, it
executes) and ``--status`` (the reassignment in progress, or of the plan, with replicas).
Exit codes: 0 done, 1 refused or failed (or, for ``--verify``, not every partition completed),
2 usage.
"""

from __future__ import annotations

from pathlib import Path

import click

from adapters.admin import reassign, reassign_generate
from adapters.cli.admin_cmd import fail, session, zookeeper_options
from adapters.zookeeper.connect import ZkAuth

ACTIONS = ("--execute", "--verify", "--generate", "--status")


def _read(path: Path, hint: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint=hint) from None


def _read_plan(path: Path) -> reassign.Plan:
    hint = "--reassignment-json-file"
    try:
        return reassign.parse_plan(_read(path, hint), str(path))
    except reassign.PlanError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _read_topics(path: Path) -> list[str]:
    hint = "--topics-to-move-json-file"
    try:
        return reassign_generate.parse_topics_to_move(_read(path, hint), str(path))
    except reassign.PlanError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _broker_list(ctx: click.Context, param: click.Parameter, value: str | None
                 ) -> list[int] | None:
    if value is None:
        return None
    try:
        return reassign_generate.parse_broker_list(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("reassign", short_help="Move partitions between brokers.")
@zookeeper_options
@click.option(
    "--reassignment-json-file",
    "--plan",
    "plan_path",
    type=_FILE,
    metavar="FILE",
    help='The reassignment plan in Kafka\'s JSON, such as {"version": 1, "partitions": '
    '[{"topic": "t", "partition": 0, "replicas": [1, 2]}]}. With --execute it is started, with --verify checked; '
    "--plan is its older name, and given alone it executes.",
)
@click.option("--execute", is_flag=True, help="Start the reassignment of the plan file.")
@click.option(
    "--verify",
    is_flag=True,
    help="Print, for every partition of the plan file, whether its reassignment completed, "
    "failed or is still in progress; exit 1 unless all completed.",
)
@click.option(
    "--generate",
    is_flag=True,
    help="Print the current assignment of the topics of --topics-to-move-json-file and a "
    "proposed plan that moves them onto --broker-list. The proposal is a deterministic round "
    "robin (Kafka's placement rule with the start fixed at the first broker), not Kafka's "
    "randomised assignment.",
)
@click.option(
    "--topics-to-move-json-file",
    "topics_path",
    type=_FILE,
    metavar="FILE",
    help='With --generate, the topics to move in Kafka\'s JSON, such as {"version": 1, '
    '"topics": [{"topic": "t"}]}.',
)
@click.option(
    "--broker-list",
    callback=_broker_list,
    metavar="IDS",
    help="With --generate, the registered brokers to move the topics onto, such as 1,2,3.",
)
@click.option(
    "--status",
    "show_status",
    is_flag=True,
    help="Report each partition of the plan file, or of the reassignment in progress, as in "
    "progress, completed or failed, with its current and target replicas.",
)
def reassign_cmd(
    hosts: str,
    connect_timeout: float,
    zookeeper_auth: ZkAuth | None,
    plan_path: Path | None,
    execute: bool,
    verify: bool,
    generate: bool,
    topics_path: Path | None,
    broker_list: list[int] | None,
    show_status: bool,
) -> None:
    """Move partitions between brokers, as kafka-reassign-partitions.sh does.

    Start a reassignment (--execute; it writes /admin/reassign_partitions), check it (--verify)
    or propose one (--generate)."""
    chosen = [flag for flag, on in zip(ACTIONS, (execute, verify, generate, show_status), strict=True) if on]
    if len(chosen) > 1:
        raise click.UsageError(
            f"Command must include exactly one action: {', '.join(ACTIONS)} "
            f"(got {' and '.join(chosen)})."
        )
    if not chosen:
        if plan_path is None:
            raise click.UsageError(
                "Command must include exactly one action: --execute or --verify with "
                "--reassignment-json-file FILE, --generate, or --status."
            )
        execute = True
    if (topics_path is not None or broker_list is not None) and not generate:
        raise click.UsageError("--topics-to-move-json-file and --broker-list go with --generate.")
    if generate:
        if topics_path is None or broker_list is None:
            raise click.UsageError(
                "If --generate option is used, command must include both "
                "--topics-to-move-json-file and --broker-list options."
            )
        _generate(hosts, connect_timeout, zookeeper_auth, _read_topics(topics_path), broker_list)
        return
    if (execute or verify) and plan_path is None:
        raise click.UsageError(f"{chosen[0]} needs --reassignment-json-file FILE.")
    plan = _read_plan(plan_path) if plan_path is not None else None
    if show_status:
        _status(hosts, connect_timeout, zookeeper_auth, plan)
    elif verify:
        assert plan is not None
        _verify(hosts, connect_timeout, zookeeper_auth, plan)
    else:
        assert plan is not None
        _execute(hosts, connect_timeout, zookeeper_auth, plan)


def _execute(hosts: str, timeout: float, auth: ZkAuth | None, plan: reassign.Plan) -> None:
    with session(hosts, timeout, auth) as client:
        started = reassign.execute(client, plan)
    click.echo("Current partition replica assignment\n")
    click.echo(reassign.plan_json(started.current, log_dirs=True))
    click.echo("\nSave this to use as the --reassignment-json-file option during rollback")
    click.echo("Successfully started reassignment of partitions.")


def _generate(hosts: str, timeout: float, auth: ZkAuth | None, topics: list[str],
              brokers: list[int]) -> None:
    with session(hosts, timeout, auth) as client:
        current, proposed = reassign_generate.generate(client, topics, brokers)
    click.echo("Current partition replica assignment")
    click.echo(reassign.plan_json(current, log_dirs=True) + "\n")
    click.echo("Proposed partition reassignment configuration")
    click.echo(reassign.plan_json(proposed, log_dirs=True))


def _rows(hosts: str, timeout: float, auth: ZkAuth | None, plan: reassign.Plan | None
          ) -> list[reassign.PartitionStatus]:
    with session(hosts, timeout, auth) as client:
        try:
            return reassign.status(client, plan)
        except ValueError as exc:  # ZnodeDecodeError of /admin/reassign_partitions
            fail(exc)


def _verify(hosts: str, timeout: float, auth: ZkAuth | None, plan: reassign.Plan) -> None:
    """Kafka 2.x's ``--verify`` lines (ZooKeeper mode), exit 1 unless every partition completed."""
    rows = _rows(hosts, timeout, auth, plan)
    click.echo("Status of partition reassignment: ")
    for row in rows:
        label = f"{row.tp[0]}-{row.tp[1]}"
        if row.status == reassign.IN_PROGRESS:
            click.echo(f"Reassignment of partition {label} is still in progress")
        elif row.status == reassign.COMPLETED:
            click.echo(f"Reassignment of partition {label} completed successfully")
        else:
            click.echo(f"Reassignment of partition {label} failed")
    if any(row.status != reassign.COMPLETED for row in rows):
        raise SystemExit(1)


def _status(hosts: str, timeout: float, auth: ZkAuth | None, plan: reassign.Plan | None
            ) -> None:
    rows = _rows(hosts, timeout, auth, plan)
    if plan is None and not rows:
        click.echo("No partition reassignment is in progress.")
        return
    click.echo("Status of partition reassignment:")
    for row in rows:
        label = f"{row.tp[0]}-{row.tp[1]}"
        target = ",".join(map(str, row.target))
        current = "none" if row.current is None else ",".join(map(str, row.current))
        if row.status == reassign.IN_PROGRESS:
            click.echo(
                f"Reassignment of partition {label} is still in progress "
                f"(replicas {current}, target {target})"
            )
        elif row.status == reassign.COMPLETED:
            click.echo(f"Reassignment of partition {label} completed successfully")
        else:
            click.echo(
                f"Reassignment of partition {label} failed (replicas {current}, target {target})"
            )
    if any(row.status == reassign.FAILED for row in rows):
        raise SystemExit(1)
