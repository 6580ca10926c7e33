"""What the KRaft tools (``quorum describe``, ``cluster-id``, ``unregister``) share: the
``--bootstrap-server`` / ``--bootstrap-controller`` options (Kafka's: exactly one of them, a
comma-separated ``HOST:PORT`` list), ``--timeout``, the one-line error and exit 1, and what a
node tells about its cluster (DescribeCluster: the cluster id; from a controller, the voters'
addresses)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import click

from adapters.kraft_node.wire_client import WireClient, WireError, parse_address
from fsm.errors import ErrorCode

Address = tuple[str, int]
DEFAULT_TIMEOUT_S = 5.0
DESCRIBE_CLUSTER = 60


def bootstrap_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT_S,
        show_default=True, help="Seconds to wait for a node to connect and to answer.",
    )(command)
    command = click.option(
        "--bootstrap-controller", metavar="HOST:PORT[,...]",
        help="Controllers to ask (their controller listener).")(command)
    return click.option(
        "--bootstrap-server", metavar="HOST:PORT[,...]",
        help="Brokers to ask (they forward to the active controller).")(command)


def fail(message: object) -> NoReturn:
    ctx = click.get_current_context(silent=True)
    name = ctx.command_path if ctx is not None else "kcontrol"
    click.echo(f"{name}: error: {message}", err=True)
    raise SystemExit(1)


def addresses(bootstrap_server: str | None, bootstrap_controller: str | None) -> list[Address]:
    """The addresses of whichever option was given (exactly one must be): a usage error
    (exit 2) naming the option otherwise."""
    if (bootstrap_server is None) == (bootstrap_controller is None):
        raise click.UsageError("give exactly one of --bootstrap-server or "
                               "--bootstrap-controller")
    option = "--bootstrap-server" if bootstrap_server is not None else "--bootstrap-controller"
    text = bootstrap_server if bootstrap_server is not None else bootstrap_controller
    assert text is not None
    out = []
    for part in text.split(","):
        try:
            out.append(parse_address(part, option))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint=option) from None
    return out



@dataclass
class NodeView:
    """What a node said about its cluster (None / empty when it could not say)."""

    cluster_id: str | None = None
    controller_id: int = -1
    brokers: dict[int, Address] = field(default_factory=dict)
    voters: dict[int, Address] = field(default_factory=dict)
    error: str | None = None


def learn(address: Address, timeout: float, controllers: bool = False) -> NodeView:
    """DescribeCluster to ``address`` (with ``controllers``: KIP-919's endpoint type 2, which
    a controller answers with the voters); never raises (the error is in ``error``)."""
    version, body = ((1, {"include_cluster_authorized_operations": False, "endpoint_type": 2})
                     if controllers else (0, {"include_cluster_authorized_operations": False}))
    try:
        with WireClient(*address, timeout=timeout) as client:
            answer = client.call(DESCRIBE_CLUSTER, version, body)
    except (WireError, ImportError) as e:
        return NodeView(error=str(e))
    code = answer.get("error_code", 0)
    if code != 0:
        return NodeView(error=f"DescribeCluster answered {error_name(code)}")
    nodes = {b["broker_id"]: (b["host"], b["port"]) for b in answer.get("brokers", [])}
    return NodeView(cluster_id=answer.get("cluster_id"),
                    controller_id=answer.get("controller_id", -1),
                    brokers={} if controllers else nodes, voters=nodes if controllers else {})


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error code {code}"
