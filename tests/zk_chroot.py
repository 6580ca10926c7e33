"""A fresh chroot on the test ensemble (shared by the fixtures that need one)."""

from __future__ import annotations

import uuid

from kazoo.client import KazooClient

from adapters.zookeeper.ensemble import Ensemble


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
