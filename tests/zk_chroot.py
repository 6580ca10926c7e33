"""A fresh chroot on the test ensemble, and a client rooted there (shared by the fixtures)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from kazoo.client import KazooClient

from adapters.ensemble import Ensemble


def new_chroot(ensemble: Ensemble, prefix: str) -> str:
    """Creates ``/<prefix>-<uuid>`` and returns the connect string that roots clients there."""
    chroot = f"/{prefix}-{uuid.uuid4().hex}"
    client = KazooClient(hosts=ensemble.connect_string)
    client.start(timeout=15)
    try:
        client.ensure_path(chroot)
    finally:
        client.stop()
        client.close()
    return ensemble.connect_string + chroot


@contextmanager
def rooted_client(hosts: str) -> Iterator[KazooClient]:
    """A started client for ``hosts`` (a connect string with its chroot), closed at the end."""
    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()
