"""``kcontrol node --config FILE [--override KEY=VALUE ...]``: run one KRaft node -- a broker, a
controller, or both in one process -- from a Kafka-style properties file until SIGINT/SIGTERM.
Without ``--config`` the ``--override`` flags are the whole configuration
(``kcontrol node --override process.roles=controller --override node.id=1 ...``).

Before anything opens: the configuration is checked (a bad key exits 2 with ``kcontrol node:
error: <key>: <why>``) and so is the storage (every directory formatted by ``kcontrol storage
format`` for this node, with one cluster id; else exit 1 with what is wrong and how to format).
Then one line says what the node is, and ``adapters.kraft_node.runtime.run_node`` runs it; its
return value is the exit code. Logs on stderr, the state-change log in ``--log-dir``
(``adapters.cli.log_options``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import click

from adapters.cli.log_options import (
    DEFAULT_LOG_ROOT,
    configure_logging,
    log_config_option,
    log_dir_option,
    state_change_log_options,
)
from adapters.cli.storage_cmd import CONFIG_HELP, OVERRIDE_HELP
from adapters.kraft_node.meta_properties import StorageError, check_at_start
from adapters.kraft_node.properties import ConfigError, load_settings
from adapters.kraft_node.settings import NodeSettings

log = logging.getLogger("kcontrol.node")
RUNTIME_MODULE = "adapters.kraft_node.runtime"


def config_hint(config: Path | None, overrides: tuple[str, ...]) -> str:
    """How the storage tool is to be given this node's configuration, for a hint."""
    flags = " ".join(f"--override {o}" for o in overrides)
    return (f"--config {config}" if config is not None else "") + (" " if config and flags else "") + flags


def summary(settings: NodeSettings, cluster_id: str) -> str:
    """One line: what this node is."""
    roles = ",".join(sorted(settings.process_roles))
    listeners = ",".join(f"{n}://{h}:{p}" for n, (h, p) in settings.listeners.items())
    voters = ",".join(f"{i}@{h}:{p}" for i, (h, p) in settings.quorum_voters.items())
    return (f"node {settings.node_id} roles={roles} cluster.id={cluster_id} "
            f"listeners={listeners} voters={voters} metadata.log.dir={settings.metadata_log_dir}")


@click.command(short_help="Run one KRaft node (broker, controller or both).")
@click.option("--config", "-c", "config", default=None, metavar="FILE",
              type=click.Path(path_type=Path),
              help=CONFIG_HELP + " Without it, the node is configured by --override alone.")
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE", help=OVERRIDE_HELP)
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
              default="INFO", show_default=True,
              help="The lowest level logged (the default setup only).")
@log_dir_option("node-<NODE_ID>")
@state_change_log_options
@log_config_option()
def node(config: Path | None, overrides: tuple[str, ...], log_level: str, log_dir: Path | None,
         state_change_max_bytes: int, state_change_files: int,
         log_config: tuple[Path, dict[str, Any]] | None) -> None:
    """Run one KRaft node from a properties file until SIGINT/SIGTERM."""
    warnings: list[str] = []
    try:
        if config is None and not overrides:
            raise click.UsageError("give --config FILE, or the configuration as "
                                   "--override KEY=VALUE flags")
        settings = load_settings(config, overrides, warnings.append)
    except ConfigError as exc:
        click.echo(f"kcontrol node: error: {exc}", err=True)
        sys.exit(2)
    setup = configure_logging(
        log_level, log_dir or DEFAULT_LOG_ROOT / f"node-{settings.node_id}", log_config,
        max_bytes=state_change_max_bytes, files=state_change_files)
    try:
        for warning in warnings:
            log.warning("%s", warning)
        try:
            cluster_id = check_at_start(settings, config_hint(config, overrides))
        except StorageError as exc:
            click.echo(f"kcontrol node: {exc}", err=True)
            sys.exit(1)
        log.info("%s", summary(settings, cluster_id))
        try:
            from adapters.kraft_node.runtime import run_node
        except ModuleNotFoundError as exc:
            if exc.name != RUNTIME_MODULE:
                raise
            click.echo("kcontrol node: the node runtime is not built yet", err=True)
            sys.exit(1)
        sys.exit(run_node(settings, cluster_id))
    finally:
        setup.close()
