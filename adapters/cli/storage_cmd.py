"""``kcontrol storage format|info|random-uuid``: Kafka's ``kafka-storage.sh`` for a KRaft node's
directories (KIP-631). A node refuses to start on directories that are not formatted
(``adapters.kraft_node.meta_properties.check_at_start``), so a configuration change alone can
never point a node at the wrong data.

``format`` writes ``meta.properties`` (version 1) into every directory of ``log.dirs`` and the
``metadata.log.dir``, creating them, and nothing else: the metadata log is created by the node
when it starts. Kafka's StorageTool also writes ``bootstrap.checkpoint`` (a snapshot holding
the ``metadata.version`` feature level, and from 3.5 the initial SCRAM credentials); kcontrol
has no feature levels or credentials to bootstrap, so it does not. It refuses when any
directory is already formatted, unless ``--ignore-formatted``, which skips those -- but not one
formatted for another cluster or node. Every directory is checked before the first is written.

Errors: a bad configuration or argument exits 2 (``kcontrol storage format: error: <key>:
<why>``), a storage problem exits 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from adapters.kraft_node.meta_properties import (
    FILE_NAME,
    MetaProperties,
    StorageError,
    check_cluster_id,
    node_dirs,
    random_cluster_id,
    read_meta,
    write_meta,
)
from adapters.kraft_node.properties import ConfigError, load_settings
from adapters.kraft_node.settings import NodeSettings

CONFIG_HELP = "The node's properties file (the one kcontrol node runs with)."
OVERRIDE_HELP = "Set a configuration key, overriding the file (repeatable; the later wins)."


def _fail(command: str, message: str, code: int) -> NoReturn:
    click.echo(f"kcontrol storage {command}: error: {message}", err=True)
    sys.exit(code)


def _settings(command: str, config: Path | None, overrides: tuple[str, ...]) -> NodeSettings:
    if config is None and not overrides:
        _fail(command, "give --config FILE, or the configuration as --override KEY=VALUE "
                       "flags", 2)
    try:
        return load_settings(config, overrides)
    except ConfigError as exc:
        _fail(command, str(exc), 2)


@click.group(short_help="Format and inspect a KRaft node's storage directories.")
def storage() -> None:
    """Format and inspect a KRaft node's storage directories (Kafka's kafka-storage.sh)."""


def config_option(f):  # type: ignore[no-untyped-def]
    f = click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
                     help=OVERRIDE_HELP)(f)
    return click.option("--config", "-c", "config", default=None, metavar="FILE",
                        type=click.Path(path_type=Path),
                        help=CONFIG_HELP + " Without it, --override gives the whole "
                             "configuration.")(f)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_dir(directory: Path) -> None:
    """Create ``directory`` (and its parents), fsyncing each new entry's parent."""
    missing = []
    probe = directory
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for path in reversed(missing):
        path.mkdir()
        _fsync_dir(path.parent)


def plan_format(settings: NodeSettings, cluster_id: str, ignore_formatted: bool
                ) -> list[tuple[Path, bool]]:
    """(directory, already formatted alike: skip it) for each of the node's directories; a
    ``StorageError`` for the first directory that stops the format."""
    plan = []
    for directory in node_dirs(settings):
        if directory.exists() and not directory.is_dir():
            raise StorageError(f"{directory}: exists and is not a directory")
        meta = read_meta(directory) if directory.exists() else None
        if meta is None:
            plan.append((directory, False))
            continue
        if not ignore_formatted:
            raise StorageError(f"{directory}: already formatted (cluster.id={meta.cluster_id}, "
                               f"node.id={meta.node_id}); use --ignore-formatted to skip "
                               "formatted directories and format the others")
        if meta.cluster_id != cluster_id:
            raise StorageError(f"{directory}: formatted for cluster.id {meta.cluster_id}, not "
                               f"{cluster_id}; --ignore-formatted skips only directories of "
                               "the same cluster")
        if meta.node_id != settings.node_id:
            raise StorageError(f"{directory}: formatted for node.id {meta.node_id}, not "
                               f"{settings.node_id}; --ignore-formatted skips only directories "
                               "of the same node")
        plan.append((directory, True))
    return plan


@storage.command("format", short_help="Format the node's directories for a cluster.")
@config_option
@click.option("--cluster-id", "-t", "cluster_id", required=True, metavar="ID",
              help="The cluster's id: 22 characters of URL-safe base64 (see random-uuid).")
@click.option("--ignore-formatted", "-g", is_flag=True, default=False,
              help="Skip directories already formatted for this cluster and node.")
def format_cmd(config: Path | None, overrides: tuple[str, ...], cluster_id: str,
               ignore_formatted: bool) -> None:
    """Format the node's directories for a cluster: a meta.properties in each."""
    settings = _settings("format", config, overrides)
    try:
        check_cluster_id(cluster_id)
    except ValueError as exc:
        _fail("format", f"--cluster-id: {exc}", 2)
    meta = MetaProperties(cluster_id=cluster_id, node_id=settings.node_id)
    ids = f"(cluster.id={cluster_id}, node.id={settings.node_id})"
    try:
        plan = plan_format(settings, cluster_id, ignore_formatted)
        for directory, skip in plan:
            if skip:
                click.echo(f"Skipping {directory}: already formatted {ids}")
                continue
            try:
                _make_dir(directory)
                write_meta(directory, meta)
            except OSError as exc:
                raise StorageError(f"{directory}: cannot be formatted "
                                   f"({exc.strerror or exc})") from None
            click.echo(f"Formatting {directory} {ids}")
    except StorageError as exc:
        _fail("format", str(exc), 1)
    if all(skip for _, skip in plan):
        click.echo("All of the node's directories are already formatted.")


def describe_dirs(settings: NodeSettings) -> tuple[list[str], int]:
    """One line per directory and the number of problems among them."""
    lines, problems = [], 0
    first: tuple[Path, str] | None = None
    for directory in node_dirs(settings):
        role = "metadata.log.dir" if directory == settings.metadata_log_dir else "log.dirs"
        if directory in settings.log_dirs and directory == settings.metadata_log_dir:
            role = "log.dirs, metadata.log.dir"
        head = f"{directory} ({role}):"
        problem = None
        if not directory.exists():
            problem = "does not exist (not formatted)"
        elif not directory.is_dir():
            problem = "is not a directory"
        else:
            try:
                meta = read_meta(directory)
            except StorageError as exc:
                meta, problem = None, str(exc)
            if meta is None and problem is None:
                problem = f"no {FILE_NAME} (not formatted)"
            elif meta is not None:
                lines.append(f"{head} {FILE_NAME} version {meta.version}, "
                             f"cluster.id={meta.cluster_id}, node.id={meta.node_id}")
                if meta.node_id != settings.node_id:
                    problem = (f"node.id {meta.node_id} is not the configured node.id "
                               f"{settings.node_id}")
                elif first is None:
                    first = (directory, meta.cluster_id)
                elif meta.cluster_id != first[1]:
                    problem = (f"cluster.id {meta.cluster_id} differs from {first[0]}'s "
                               f"{first[1]}")
        if problem is not None:
            problems += 1
            lines.append(f"{head} PROBLEM: {problem}")
    return lines, problems


@storage.command("info", short_help="Show what each of the node's directories holds.")
@config_option
def info_cmd(config: Path | None, overrides: tuple[str, ...]) -> None:
    """Show each of the node's directories' meta.properties and flag problems (exit 1 if any)."""
    settings = _settings("info", config, overrides)
    lines, problems = describe_dirs(settings)
    for line in lines:
        click.echo(line)
    if problems:
        click.echo(f"{problems} problem(s) found.")
        sys.exit(1)
    meta = read_meta(settings.metadata_log_dir)
    count = f"{len(lines)} director{'y' if len(lines) == 1 else 'ies'}"
    click.echo(f"OK: {count} formatted (cluster.id={meta.cluster_id if meta else '?'}, "
               f"node.id={settings.node_id}).")


@storage.command("random-uuid", short_help="Print a new random cluster id.")
def random_uuid_cmd() -> None:
    """Print a new random cluster id (22 characters of URL-safe base64)."""
    click.echo(random_cluster_id())
