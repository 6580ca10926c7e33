"""``--zookeeper-auth USER:PASSWORD``: the one option every command that talks to ZooKeeper
takes (``adapters.zookeeper.connect``: digest authentication, and Kafka's
``zookeeper.set.acl`` behaviour for every znode the command creates).

Apply :func:`zookeeper_auth_option` to a click command; it adds the parameter
``zookeeper_auth`` (a ``ZkAuth``, or None when neither the option nor
``KCONTROL_ZOOKEEPER_AUTH`` is set), to pass on to ``make_client`` / ``ControllerService`` /
``admin.connection.connect``. A malformed value is a usage error (exit 2) that does not
repeat the password. Processes started by another kcontrol process should get the value
through the environment variable, not the command line (``ps`` shows command lines).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from adapters.zookeeper.connect import AUTH_ENV, ZkAuth, ZkAuthError

F = TypeVar("F", bound=Callable[..., Any])


def parse_zookeeper_auth(ctx: click.Context | None, param: click.Parameter | None,
                         value: str | None) -> ZkAuth | None:
    """click callback: ``USER:PASSWORD`` -> ``ZkAuth``; empty or absent -> None."""
    if value is None or value == "":
        return None
    try:
        return ZkAuth.parse(value)
    except ZkAuthError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def zookeeper_auth_option(command: F) -> F:
    """Adds ``--zookeeper-auth USER:PASSWORD`` (env ``KCONTROL_ZOOKEEPER_AUTH``) as the
    parameter ``zookeeper_auth``."""
    return click.option(
        "--zookeeper-auth",
        "zookeeper_auth",
        envvar=AUTH_ENV,
        default=None,
        metavar="USER:PASSWORD",
        callback=parse_zookeeper_auth,
        help="ZooKeeper digest authentication. Znodes created are then world-readable and "
        "writable by this identity only (Kafka's zookeeper.set.acl). "
        f"Default: ${AUTH_ENV}, else none.",
    )(command)


__all__ = ["parse_zookeeper_auth", "zookeeper_auth_option"]
