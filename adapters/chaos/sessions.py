"""Expire a ZooKeeper session on the server side, from outside the process that owns it.

ZooKeeper lets any client attach to an existing session if it presents the session id and
the session password, and a ``closeSession`` from that client ends the session for everyone:
the server deletes its ephemeral znodes at once and the owner's next request (or ping) is
answered ``SESSION_EXPIRED``. This is the "session expired on the server side" fault, the
same one Kafka's and Curator's tests provoke with a second client.

The session id of a broker's session is public: it is the ``ephemeralOwner`` of the znode
the session created (``/brokers/ids/<id>``, ``/controller``). The password is not published
anywhere, but it carries no secret: ZooKeeper's server derives it from the session id alone
(``ZooKeeperServer.generatePasswd``: 16 bytes of ``java.util.Random(id ^ 0xB3415C00)``; the
server's own comment calls it a checksum "that carries no security weight"). So the password
is recomputed here instead of being exported by the broker (no debug file, no metric, no
change to the broker). ``derive_password`` is checked against kazoo's own ``client_id`` in
the tests, and ``expire_session`` verifies the outcome: the session's ephemeral znodes must
be gone afterwards, or it raises.
"""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from adapters.zookeeper.connect import ZkAuth, make_client

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
ZOOKEEPER_PASSWORD_SECRET = 0xB3415C00
"""``ZooKeeperServer.superSecret``: mixed into the session id to seed the password."""
PASSWORD_BYTES = 16


class SessionExpiryError(RuntimeError):
    """The session could not be attached to or did not end."""


def java_random_bytes(seed: int, count: int) -> bytes:
    """``new java.util.Random(seed).nextBytes(new byte[count])``: the 48-bit linear
    congruential generator of the Java platform, four bytes per ``nextInt``, low byte first."""
    state = (seed ^ _MULTIPLIER) & _MASK
    out = bytearray()
    while len(out) < count:
        state = (state * _MULTIPLIER + _ADDEND) & _MASK
        word = state >> 16  # next(32)
        for _ in range(min(count - len(out), 4)):
            out.append(word & 0xFF)
            word >>= 8
    return bytes(out)


def derive_password(session_id: int) -> bytes:
    """The password ZooKeeper gave session ``session_id``."""
    seed = (session_id ^ ZOOKEEPER_PASSWORD_SECRET) & 0xFFFFFFFFFFFFFFFF
    return java_random_bytes(seed, PASSWORD_BYTES)


def expire_session(hosts: str, session_id: int, *, auth: ZkAuth | None = None,
                   timeout: float = 10.0, watch: KazooClient | None = None,
                   owned_path: str | None = None) -> float:
    """Attach to ``session_id`` and close it: the server ends the session. Returns the seconds
    it took. With ``watch`` and ``owned_path`` (an ephemeral znode of that session), checks
    through ``watch`` that the znode is gone or owned by another session afterwards;
    ``SessionExpiryError`` otherwise, or when attaching fails."""
    t0 = time.monotonic()
    servers = hosts.partition("/")[0]  # the chroot plays no part in a session
    client = make_client(servers, auth=auth, timeout=timeout,
                         client_id=(session_id, derive_password(session_id)),
                         connection_retry={"max_tries": 3, "delay": 0.1, "max_delay": 1.0})
    try:
        client.start(timeout=timeout)
        attached = client.client_id[0] if client.client_id else None
        if attached != session_id:
            raise SessionExpiryError(
                f"attached to session 0x{attached or 0:x}, not 0x{session_id:x} "
                "(the session had already ended, or the password was refused)")
    except (KazooException, KazooTimeoutError) as exc:
        raise SessionExpiryError(f"cannot attach to session 0x{session_id:x}: "
                                 f"{type(exc).__name__}: {exc}") from exc
    finally:
        client.stop()  # sends closeSession: the server ends the session for every holder
        client.close()
    if watch is not None and owned_path is not None:
        watch.sync(owned_path)
        stat = watch.exists(owned_path)
        if stat is not None and stat.ephemeralOwner == session_id:
            raise SessionExpiryError(f"{owned_path} is still owned by session 0x{session_id:x} "
                                     "after closing it")
    return time.monotonic() - t0


__all__ = ["SessionExpiryError", "derive_password", "expire_session", "java_random_bytes"]
