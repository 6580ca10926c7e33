"""The ``kcontrol`` command: one click group, one module per sub-command, each imported only
when used (``COMMANDS``); ``run`` is the console script."""

from __future__ import annotations

import click

from adapters.cli import fast_exit
from adapters.cli.lazy_commands import LazyCommands

#: Every sub-command: its name and where it is defined, imported when the command line (or
#: the listing of ``kcontrol --help``) asks for it -- a node's start imports only
#: ``node_cmd`` (``lazy_commands``).
COMMANDS = {
    "zookeeper": "adapters.cli.zookeeper_cmd:zookeeper",
    "diagrams": "adapters.cli.diagrams_cmd:diagrams",
    "check": "adapters.cli.check_cmd:check",
    "replay": "adapters.cli.check_cmd:replay",
    "topics": "adapters.cli.admin_cmd:topics_group",
    "reassign": "adapters.cli.reassign_cmd:reassign_cmd",
    "elect-preferred": "adapters.cli.admin_cmd:elect_preferred",
    "audit": "adapters.cli.audit_cmd:audit_cmd",
    "controller": "adapters.cli.controller_cmd:controller",
    "broker": "adapters.cli.broker_cmd:broker",
    "cluster": "adapters.cli.cluster_cmd:cluster",
    "chaos": "adapters.cli.chaos_cmd:chaos",
    "quorum": "adapters.cli.quorum_cmd:quorum",
    "cluster-id": "adapters.cli.cluster_tool_cmd:cluster_id_cmd",
    "unregister": "adapters.cli.cluster_tool_cmd:unregister_cmd",
    "dump-log": "adapters.cli.dump_log_cmd:dump_log",
    "node": "adapters.cli.node_cmd:node",
    "storage": "adapters.cli.storage_cmd:storage",
    "metadata-shell": "adapters.cli.metadata_shell_cmd:metadata_shell",
}


@click.group(commands=LazyCommands(COMMANDS),
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kcontrol")
def main() -> None:
    """kcontrol: a Kafka-style cluster controller on explicit state machines."""


def run() -> None:
    """The console script: ``main``, and for a command that asked for it (a finished local
    search) an exit without the interpreter's teardown (``fast_exit``)."""
    try:
        main()
    except SystemExit as e:
        if not fast_exit.requested():
            raise
        code = e.code
        fast_exit.exit_now(code if isinstance(code, int) else (0 if code is None else 1))
