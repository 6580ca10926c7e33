"""Helpers for the controller-service tests (imported as a top-level module: the test
directory is on sys.path)."""

from __future__ import annotations

import time
from collections.abc import Callable

from kazoo.client import KazooClient

from adapters.controller import ControllerService
from adapters.zookeeper import codec
from fsm import zk_paths as P

SESSION_MS = 4000


def wait_until(cond: Callable[[], object], timeout: float, what: str) -> object:
    """Poll ``cond`` until truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {what}")
        time.sleep(0.05)


def active(services: list[ControllerService]) -> list[ControllerService]:
    return [s for s in services if s.is_active]


def controller_znode(client: KazooClient) -> tuple[int | None, int, int]:
    """(/controller's broker id or None, /controller_epoch value, its version)."""
    stat = client.exists(P.CONTROLLER)
    cid = None
    if stat is not None:
        data, _ = client.get(P.CONTROLLER)
        cid = codec.decode(P.CONTROLLER, data).broker_id
    data, st = client.get(P.CONTROLLER_EPOCH)
    return cid, codec.decode(P.CONTROLLER_EPOCH, data).epoch, st.version


def expire_on_server(client: KazooClient, hosts: str) -> None:
    """Expire ``client``'s session on the ensemble: attach a second connection to the same
    session (id and password) and close it. The second client has no chroot: kazoo's start
    would otherwise read the chroot, a request the server's moving of the session between
    connections may answer with a connection loss."""
    sid, pwd = client._session_id, client._session_passwd
    other = KazooClient(hosts=hosts.split("/", 1)[0], client_id=(sid, pwd),
                        timeout=SESSION_MS / 1000)
    other.start(timeout=15)
    other.stop()
    other.close()


