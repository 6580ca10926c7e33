"""``kcontrol cluster-id`` and ``kcontrol unregister``: Kafka's ``kafka-cluster.sh cluster-id``
and ``kafka-cluster.sh unregister`` over the wire, against brokers (``--bootstrap-server``:
they answer DescribeCluster and forward UnregisterBroker to the active controller) or
controllers (``--bootstrap-controller``: a standby that answers NOT_CONTROLLER is passed over
for the active one, whose address the controllers give).

Exit codes: 0 done, 1 refused or unreachable (the message says who answered what), 2 usage.
"""

from __future__ import annotations

import click

from adapters.cli.kraft_endpoint import Address, bootstrap_options, fail, learn
from adapters.cli.kraft_endpoint import addresses as bootstrap_addresses
from adapters.kraft_node.wire_client import WireClient, WireError
from fsm.errors import ErrorCode
from fsm.kraft.controller.requests import UnregisterBrokerRequest, UnregisterBrokerResponse

MAX_HOPS = 8


@click.command("cluster-id")
@bootstrap_options
def cluster_id_cmd(bootstrap_server: str | None, bootstrap_controller: str | None,
                   timeout: float) -> None:
    """Print the cluster's id.

    Kafka's kafka-cluster.sh cluster-id.
    """
    problems = []
    for address in bootstrap_addresses(bootstrap_server, bootstrap_controller):
        view = learn(address, timeout)
        if view.cluster_id:
            click.echo(f"Cluster ID: {view.cluster_id}")
            return
        problems.append(view.error or f"{address[0]}:{address[1]} named no cluster id")
    fail("; ".join(problems))


@click.command("unregister")
@bootstrap_options
@click.option("--id", "broker_id", type=click.IntRange(min=0), required=True,
              help="The id of the broker to unregister.")
def unregister_cmd(bootstrap_server: str | None, bootstrap_controller: str | None,
                   timeout: float, broker_id: int) -> None:
    """Unregister a broker that is gone for good.

    Kafka's kafka-cluster.sh unregister: its registration is removed from the metadata.
    """
    answer = ask_active(bootstrap_addresses(bootstrap_server, bootstrap_controller),
                        UnregisterBrokerRequest(broker_id), timeout,
                        follow=bootstrap_controller is not None)
    assert isinstance(answer, UnregisterBrokerResponse)
    if answer.error is ErrorCode.UNSUPPORTED_VERSION:
        click.echo("The target cluster does not support the broker unregistration API.")
        raise SystemExit(1)
    if answer.error is not ErrorCode.NONE:
        fail(f"broker {broker_id} was not unregistered: {answer.error.name}")
    click.echo(f"Broker {broker_id} is no longer registered.")


def ask_active(addresses: list[Address], request: object, timeout: float,
               follow: bool) -> object:
    """The answer of the first node that is not a standby controller; with ``follow``, a
    standby's NOT_CONTROLLER sends the request on to the active controller it names."""
    queue, asked, problems = list(addresses), set(), []
    hops = 0
    while queue and hops < MAX_HOPS:
        address = queue.pop(0)
        if address in asked:
            continue
        asked.add(address)
        hops += 1
        try:
            with WireClient(*address, timeout=timeout) as client:
                answer = client.call_value(request)
        except WireError as e:
            problems.append(str(e))
            continue
        if getattr(answer, "error", None) is not ErrorCode.NOT_CONTROLLER:
            return answer
        problems.append(f"{address[0]}:{address[1]} is not the active controller")
        if follow:
            view = learn(address, timeout, controllers=True)
            active = view.voters.get(view.controller_id)
            if active is not None and active not in asked:
                queue.insert(0, active)
    fail("; ".join(problems) or "no node to ask")
