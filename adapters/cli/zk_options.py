"""The ZooKeeper options of every command: ``--zookeeper HOSTS`` and ``--zookeeper-auth``.

``--zookeeper HOSTS`` (:func:`zookeeper_hosts_option`) defaults to ``$KCONTROL_ZOOKEEPER`` on
every command where it is required (admin commands, ``audit``, ``controller``, ``broker``).
Where it is optional (``cluster up``, ``chaos``: without it they start a private ensemble) the
variable is not read, so that an exported connect string of an earlier cluster never makes a
new cluster join it.

``--zookeeper-auth USER:PASSWORD`` is the one option every command that talks to ZooKeeper
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

ZOOKEEPER_ENV = "KCONTROL_ZOOKEEPER"

HOSTS_FORMAT = "host:port[,host:port...][/chroot]"


def zookeeper_hosts_option(*, required: bool = True, help: str | None = None
                           ) -> Callable[[F], F]:
    """``--zookeeper HOSTS`` as the parameter ``hosts``. Required: defaults to
    ``$KCONTROL_ZOOKEEPER``. Optional: None when not given, the variable not read; ``help``
    then says what happens without it."""
    if required:
        return click.option(
            "--zookeeper", "hosts", envvar=ZOOKEEPER_ENV, required=True, metavar="HOSTS",
            help=f"The ZooKeeper connect string, {HOSTS_FORMAT}. Default: ${ZOOKEEPER_ENV}.",
        )
    return click.option(
        "--zookeeper", "hosts", default=None, metavar="HOSTS",
        help=f"The ZooKeeper connect string, {HOSTS_FORMAT}, of an ensemble to use. {help} "
        f"${ZOOKEEPER_ENV} is not read here.",
    )


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


__all__ = ["ZOOKEEPER_ENV", "parse_zookeeper_auth", "zookeeper_auth_option",
           "zookeeper_hosts_option"]
