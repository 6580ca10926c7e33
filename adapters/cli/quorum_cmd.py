"""``kcontrol quorum describe``: Kafka's ``kafka-metadata-quorum.sh describe`` over the wire
(DescribeQuorum to the metadata quorum's leader; see ``adapters.kraft_node.quorum_describe``).

Exit codes: 0 described, 1 no leader could be asked (the message says whom we tried and what
each said), 2 usage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from adapters.cli.kraft_endpoint import addresses as bootstrap_addresses
from adapters.cli.kraft_endpoint import bootstrap_options, fail, learn
from adapters.kraft_node import quorum_describe as qd
from model_check.json_option import json_option, to_stdout, write_json


@click.group("quorum")
def quorum() -> None:
    """Describe the KRaft metadata quorum.

    Kafka's kafka-metadata-quorum.sh, over the wire.
    """


@quorum.command("describe")
@bootstrap_options
@click.option("--status", "show_status", is_flag=True,
              help="Print a short summary: leader, epoch, high watermark, lag, voters.")
@click.option("--replication", "show_replication", is_flag=True,
              help="Print one row per voter and observer: log end offset, lag, fetch times.")
@json_option("quorum's description")
def describe(bootstrap_server: str | None, bootstrap_controller: str | None, timeout: float,
             show_status: bool, show_replication: bool, json_out: Path | None) -> None:
    """Describe the metadata quorum as its leader sees it.

    Any controller may be named: one that is not the leader names the leader, which is
    then asked (its address learnt from the controller when not given).
    """
    if show_status == show_replication:
        raise click.UsageError("give exactly one of --status or --replication")
    addresses = bootstrap_addresses(bootstrap_server, bootstrap_controller)
    try:
        answer = qd.ask_leader(addresses, timeout, voters=lambda a: learn(a, timeout, controllers=True).voters)
    except qd.QuorumToolError as e:
        hint = ("; a broker answers DescribeQuorum only if it forwards it to the controllers: "
                "try --bootstrap-controller" if bootstrap_server is not None else "")
        fail(f"{e}{hint}")
    if show_status:
        cluster_id = learn(addresses[0], timeout).cluster_id
        figures = qd.status(answer, cluster_id)
        text = qd.status_text(figures)
        report: object = figures
    else:
        rows = qd.replication(answer)
        text = qd.replication_text(rows)
        report = rows
    if json_out is not None:
        write_json(json_out, report)
        if to_stdout(json_out):
            click.echo(text, file=sys.stderr)
            return
    click.echo(text)
