"""Open a kazoo client for one admin command, with a bounded connect time and a clear failure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from adapters.admin.errors import ZooKeeperUnreachable
from adapters.zookeeper.connect import ZkAuth, make_client

DEFAULT_CONNECT_TIMEOUT_S = 10.0


@contextmanager
def connect(hosts: str, timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
            auth: ZkAuth | None = None) -> Iterator[KazooClient]:
    """A started client on ``hosts`` (``h:p,h:p/chroot``), stopped and closed afterwards; with
    ``auth``, digest-authenticated and creating znodes world-readable, writable by ``auth``
    alone (``adapters.zookeeper.connect``).

    ``ZooKeeperUnreachable`` when no server answers within ``timeout`` seconds or the connect
    string cannot be parsed; the client is then stopped, so no reconnect thread lingers."""
    try:
        client = make_client(hosts, auth=auth, timeout=min(timeout, 10.0),
                             connection_retry=None)
    except (ValueError, TypeError) as exc:
        raise ZooKeeperUnreachable(f"bad ZooKeeper connect string {hosts!r}: {exc}") from exc
    try:
        client.start(timeout=timeout)
    except KazooTimeoutError:
        _close(client)
        raise ZooKeeperUnreachable(
            f"could not connect to ZooKeeper at {hosts} within {timeout:g} s "
            "(is the ensemble running? check --zookeeper or KCONTROL_ZOOKEEPER)"
        ) from None
    except Exception as exc:  # a bad host name, a refused chroot
        _close(client)
        raise ZooKeeperUnreachable(f"could not connect to ZooKeeper at {hosts}: {exc}") from exc
    try:
        yield client
    finally:
        _close(client)


def _close(client: KazooClient) -> None:
    try:
        client.stop()
    finally:
        client.close()
