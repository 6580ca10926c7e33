"""The ``kcontrol`` command: one click group, one module per sub-command; ``run`` is the
console script."""

from __future__ import annotations

import click

from adapters.cli import fast_exit
from adapters.cli.admin_cmd import elect_preferred, topics_group
from adapters.cli.audit_cmd import audit_cmd
from adapters.cli.broker_cmd import broker
from adapters.cli.chaos_cmd import chaos
from adapters.cli.check_cmd import check, replay
from adapters.cli.cluster_cmd import cluster
from adapters.cli.cluster_tool_cmd import cluster_id_cmd, unregister_cmd
from adapters.cli.controller_cmd import controller
from adapters.cli.diagrams_cmd import diagrams
from adapters.cli.dump_log_cmd import dump_log
from adapters.cli.metadata_shell_cmd import metadata_shell
from adapters.cli.node_cmd import node
from adapters.cli.quorum_cmd import quorum
from adapters.cli.reassign_cmd import reassign_cmd
from adapters.cli.storage_cmd import storage
from adapters.cli.zookeeper_cmd import zookeeper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kcontrol")
def main() -> None:
    """kcontrol: a Kafka-style cluster controller on explicit state machines."""


main.add_command(zookeeper)
main.add_command(diagrams)
main.add_command(check)
main.add_command(replay)
main.add_command(topics_group)
main.add_command(reassign_cmd)
main.add_command(elect_preferred)
main.add_command(audit_cmd)
main.add_command(controller)
main.add_command(broker)
main.add_command(cluster)
main.add_command(chaos)
main.add_command(quorum)
main.add_command(cluster_id_cmd)
main.add_command(unregister_cmd)
main.add_command(dump_log)
main.add_command(node)
main.add_command(storage)
main.add_command(metadata_shell)


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
