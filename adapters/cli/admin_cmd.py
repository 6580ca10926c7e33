"""``kcontrol topics|elect-preferred``: Kafka's admin tools (ZooKeeper mode) over the logic in
``adapters.admin``; ``reassign`` is in ``reassign_cmd``, and uses the helpers here.

Every command takes ``--zookeeper HOSTS`` (or ``KCONTROL_ZOOKEEPER``) and ``--connect-timeout``.
Exit codes: 0 done, 1 refused or failed (the message says why; nothing was written), 2 usage.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoAuthError
from kazoo.handlers.threading import KazooTimeoutError

from adapters.admin import elect, topics
from adapters.admin.assignment import parse_replica_assignment
from adapters.admin.connection import DEFAULT_CONNECT_TIMEOUT_S, connect
from adapters.admin.errors import AdminError
from adapters.cli.zk_options import zookeeper_auth_option, zookeeper_hosts_option
from adapters.zookeeper.connect import ZkAuth


def zookeeper_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--zookeeper`` (env ``KCONTROL_ZOOKEEPER``), ``--connect-timeout`` and
    ``--zookeeper-auth`` (env ``KCONTROL_ZOOKEEPER_AUTH``; parameter ``zookeeper_auth``)."""
    command = zookeeper_auth_option(command)
    command = click.option(
        "--connect-timeout",
        type=click.FloatRange(min=0.1),
        default=DEFAULT_CONNECT_TIMEOUT_S,
        show_default=True,
        help="Seconds to wait for a ZooKeeper server to answer.",
    )(command)
    return zookeeper_hosts_option()(command)


def fail(message: object) -> NoReturn:
    ctx = click.get_current_context(silent=True)
    name = ctx.command_path if ctx is not None else "kcontrol"
    click.echo(f"{name}: error: {message}", err=True)
    raise SystemExit(1)


def quiet_kazoo() -> None:
    """kazoo logs every refused connection attempt; the command's own message says it once."""
    log = logging.getLogger("kazoo")
    if not log.handlers:
        log.addHandler(logging.NullHandler())


@contextmanager
def session(hosts: str, timeout: float, auth: ZkAuth | None = None) -> Iterator[KazooClient]:
    """A connected client (digest-authenticated with ``auth``); any ``AdminError`` or
    ZooKeeper failure becomes exit 1."""
    quiet_kazoo()
    try:
        with connect(hosts, timeout, auth) as client:
            yield client
    except AdminError as exc:
        fail(exc)
    except NoAuthError:
        fail("ZooKeeper refused the change (NoAuth): these znodes are protected by an ACL; "
             "give the cluster's identity with --zookeeper-auth USER:PASSWORD "
             "(or $KCONTROL_ZOOKEEPER_AUTH)")
    except (KazooException, KazooTimeoutError) as exc:
        fail(f"ZooKeeper request failed ({type(exc).__name__}): {exc or 'no details'}")


def _assignment(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return parse_replica_assignment(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_assignment_option = click.option(
    "--replica-assignment",
    "replica_assignment",
    callback=_assignment,
    metavar="B:B,B:B,...",
    help="Manual assignment in kafka-topics' format: partitions separated by commas, each "
    "partition's brokers by colons, the first one its preferred leader (1:2,3:4 puts "
    "partition 0 on brokers 1,2 and partition 1 on 3,4).",
)


# ---------------------------------------------------------------- topics


class KafkaTopicsGroup(click.Group):
    """A group that also takes kafka-topics.sh's action flags: ``topics --describe --topic t``
    runs ``topics describe --topic t`` (``--alter`` is ``add-partitions``)."""

    ACTIONS = {"--create": "create", "--delete": "delete", "--describe": "describe",
               "--list": "list", "--alter": "add-partitions"}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        actions = [a for a in args if a in self.ACTIONS]
        if actions and not (args and args[0] in self.commands):
            if len(actions) > 1:
                raise click.UsageError(
                    "Command must include exactly one action: --list, --describe, --create, "
                    f"--alter or --delete (got {' and '.join(actions)}).", ctx)
            args = [self.ACTIONS[actions[0]], *(a for a in args if a not in self.ACTIONS)]
        return super().parse_args(ctx, args)


@click.group("topics", cls=KafkaTopicsGroup,
             short_help="Create, delete, describe and list topics.")
def topics_group() -> None:
    """Create, delete, describe, grow and list topics (Kafka's kafka-topics, ZooKeeper mode).

    kafka-topics.sh's action flags work too: --create, --delete, --describe, --list, and
    --alter (with --partitions) for add-partitions, as in `kcontrol topics --describe --topic t`.
    """


@topics_group.command("create", short_help="Create a topic.")
@zookeeper_options
@click.option("--topic", required=True, help="The topic to create.")
@click.option("--partitions", type=click.IntRange(min=1), default=None,
              help="The number of partitions (unless --replica-assignment gives them).")
@click.option("--replication-factor", type=click.IntRange(min=1), default=None,
              help="The number of replicas of each partition (unless --replica-assignment "
              "gives them).")
@_assignment_option
@click.option(
    "--start-index",
    type=click.IntRange(min=0),
    default=None,
    help="Index (in the sorted broker list) of partition 0's leader; default random, as Kafka.",
)
def create(
    hosts: str,
    connect_timeout: float,
    zookeeper_auth: ZkAuth | None,
    topic: str,
    partitions: int | None,
    replication_factor: int | None,
    replica_assignment: list[tuple[int, ...]] | None,
    start_index: int | None,
) -> None:
    """Create TOPIC: writes /brokers/topics/TOPIC with Kafka's replica assignment."""
    if replica_assignment is None and (partitions is None or replication_factor is None):
        raise click.UsageError(
            "--partitions and --replication-factor are required unless --replica-assignment "
            "is given"
        )
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        topics.create_topic(
            client,
            topic,
            partitions,
            replication_factor,
            None if replica_assignment is None else dict(enumerate(replica_assignment)),
            start_index=start_index,
        )
    click.echo(f"Created topic {topic}.")


@topics_group.command("delete", short_help="Mark a topic for deletion.")
@zookeeper_options
@click.option("--topic", required=True, help="The topic to mark for deletion.")
def delete(hosts: str, connect_timeout: float, zookeeper_auth: ZkAuth | None,
           topic: str) -> None:
    """Mark TOPIC for deletion: creates /admin/delete_topics/TOPIC."""
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        marked = topics.delete_topic(client, topic)
    if marked:
        click.echo(f"Topic {topic} is marked for deletion.")
    else:
        click.echo(f"Topic {topic} is already marked for deletion.")


@topics_group.command("describe", short_help="Describe topics as kafka-topics does.")
@zookeeper_options
@click.option("--topic", "names", multiple=True,
              help="A topic to describe; repeat it for several (default: every topic).")
@click.option(
    "--under-replicated-partitions",
    is_flag=True,
    help="Print only the partitions whose ISR is smaller than their replication factor.",
)
@click.option(
    "--unavailable-partitions",
    is_flag=True,
    help="Print only the partitions without a leader, or whose leader is not registered.",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Add kcontrol's fields to each partition line: LeaderEpoch, ReassigningTo (the target "
    "in /admin/reassign_partitions) and PreferredElectionPending.",
)
def describe(
    hosts: str,
    connect_timeout: float,
    zookeeper_auth: ZkAuth | None,
    names: tuple[str, ...],
    under_replicated_partitions: bool,
    unavailable_partitions: bool,
    verbose: bool,
) -> None:
    """Print topics and partitions exactly as kafka-topics.sh --describe does.

    Each topic gets its line (partition count, replication factor, configs), then one line per
    partition (leader, replicas, ISR, and the replicas being added and removed while a
    reassignment moves it). Exit 1 if a znode shown could not be decoded (its line says why)."""
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        description = topics.describe_topics(
            client,
            list(names) or None,
            under_replicated=under_replicated_partitions,
            unavailable=unavailable_partitions,
            verbose=verbose,
        )
    for line in description.lines:
        click.echo(line)
    if description.errors:
        click.echo(
            f"{description.errors} znode(s) could not be decoded (see the Error: lines)", err=True
        )
        raise SystemExit(1)


@topics_group.command("add-partitions", short_help="Add partitions to a topic.")
@zookeeper_options
@click.option("--topic", required=True, help="The topic to grow.")
@click.option(
    "--partitions",
    type=click.IntRange(min=1),
    required=True,
    help="The new total number of partitions.",
)
@_assignment_option
def add_partitions(
    hosts: str,
    connect_timeout: float,
    zookeeper_auth: ZkAuth | None,
    topic: str,
    partitions: int,
    replica_assignment: list[tuple[int, ...]] | None,
) -> None:
    """Grow TOPIC to PARTITIONS partitions (rewrites /brokers/topics/TOPIC).

    --replica-assignment lists the new partitions only, or all of them (the existing ones'
    entries are then ignored, as kafka-topics does)."""
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        topics.add_partitions(client, topic, partitions, replica_lists=replica_assignment)
    click.echo("Adding partitions succeeded!")


@topics_group.command("list", short_help="List the topics.")
@zookeeper_options
def list_(hosts: str, connect_timeout: float, zookeeper_auth: ZkAuth | None) -> None:
    """Every topic, one per line (topics pending deletion are marked)."""
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        names = topics.list_topics(client)
        deleting = topics.topics_pending_deletion(client)
    for name in names:
        click.echo(f"{name} - marked for deletion" if name in deleting else name)


# ---------------------------------------------------------------- elect-preferred


@click.command("elect-preferred", short_help="Move leadership to preferred replicas.")
@zookeeper_options
@click.option("--topic", "names", multiple=True, help="A topic to elect leaders for; repeat it for several.")
@click.option(
    "--partition",
    "partitions",
    type=click.IntRange(min=0),
    multiple=True,
    help="Partition(s) of the one --topic, or one per --topic, in order.",
)
@click.option("--all", "all_partitions", is_flag=True, help="Every partition of every topic.")
def elect_preferred(
    hosts: str,
    connect_timeout: float,
    zookeeper_auth: ZkAuth | None,
    names: tuple[str, ...],
    partitions: tuple[int, ...],
    all_partitions: bool,
) -> None:
    """Move leadership to the preferred replica (writes /admin/preferred_replica_election)."""
    if all_partitions == bool(names):
        raise click.UsageError("give either --all or --topic T [--partition P ...]")
    if all_partitions and partitions:
        raise click.UsageError("--partition goes with --topic, not with --all")
    if len(names) > 1 and partitions and len(partitions) != len(names):
        raise click.UsageError(
            "with several --topic options, give one --partition per --topic (or none)"
        )
    with session(hosts, connect_timeout, zookeeper_auth) as client:
        chosen = elect.select_partitions(client, names, partitions, all_partitions)
        elect.start_election(client, chosen)
    labels = ",".join(f"{t}-{p}" for t, p in chosen)
    click.echo(f"Created preferred replica election path with {labels}")
    click.echo("Successfully started preferred replica election for partitions " + labels)
