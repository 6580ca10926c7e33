"""The one place kcontrol makes a ZooKeeper client, with or without digest authentication.

``--zookeeper-auth user:password`` (or ``KCONTROL_ZOOKEEPER_AUTH``) is parsed by
:meth:`ZkAuth.parse`. With it, :func:`make_client` returns a kazoo client that

- authenticates every session (also the new one after an expiry) with the ``digest`` scheme
  (``auth_data``), and
- creates every znode -- whoever's code asks for it: ``create``, ``ensure_path``, the
  writer's ``multi`` batches (which read the client's ``default_acl``) -- with
  :func:`secure_acl`: world READ, and ALL for that digest
  identity. This is Kafka's ``zookeeper.set.acl=true``: everybody can read the cluster's
  metadata, only the cluster's own identity can change it.

Without it the client is a plain one and znodes get ZooKeeper's open ACL, as before.
Znodes that already exist keep the ACL they were created with (Kafka's
``zookeeper-security-migration`` tool is what changes those; kcontrol has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.security import ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, make_digest_acl

DIGEST = "digest"
AUTH_ENV = "KCONTROL_ZOOKEEPER_AUTH"
"""The environment variable the ``--zookeeper-auth`` option also reads (keeps the password
out of process listings: child processes should get it this way)."""


class ZkAuthError(ValueError):
    """A ``--zookeeper-auth`` value that is not ``user:password``. The message never repeats
    the password."""


@dataclass(frozen=True)
class ZkAuth:
    """A ZooKeeper digest identity. ``repr`` hides the password."""

    user: str
    password: str = field(repr=False)

    @classmethod
    def parse(cls, text: str) -> ZkAuth:
        """``user:password``: the user is everything before the first ``:`` (ZooKeeper's
        digest provider splits there), non-empty, without spaces or control characters; the
        password is the rest, non-empty."""
        if not isinstance(text, str) or ":" not in text:
            raise ZkAuthError("expected USER:PASSWORD (digest authentication), "
                              "got no ':' separator")
        user, _, password = text.partition(":")
        if not user:
            raise ZkAuthError("expected USER:PASSWORD: the user is empty")
        if any(c.isspace() or not c.isprintable() for c in user):
            raise ZkAuthError(f"user {user!r} has spaces or control characters")
        if not password:
            raise ZkAuthError(f"expected USER:PASSWORD: the password of user {user!r} is empty")
        return cls(user, password)

    @property
    def credential(self) -> str:
        return f"{self.user}:{self.password}"

    def auth_data(self) -> list[tuple[str, str]]:
        """kazoo's ``auth_data``: sent on every (re)connect."""
        return [(DIGEST, self.credential)]

    def acl(self) -> list[ACL]:
        return secure_acl(self)


def secure_acl(auth: ZkAuth) -> list[ACL]:
    """World READ, and ALL (read, write, create, delete, admin) for ``auth``'s identity."""
    return [*READ_ACL_UNSAFE, make_digest_acl(auth.user, auth.password, all=True)]


def default_acl(auth: ZkAuth | None) -> list[ACL]:
    """The ACL kcontrol gives the znodes it creates: :func:`secure_acl`, or the open ACL."""
    return secure_acl(auth) if auth is not None else list(OPEN_ACL_UNSAFE)


def make_client(hosts: str, *, auth: ZkAuth | None = None, timeout: float = 10.0,
                **kwargs: Any) -> KazooClient:
    """A (not yet started) kazoo client on ``hosts``; with ``auth``, authenticated and
    creating znodes with :func:`secure_acl`. ``kwargs`` go to ``KazooClient`` as they are
    (``connection_retry``, ``client_id``...)."""
    if auth is not None:
        kwargs["auth_data"] = auth.auth_data()
        kwargs["default_acl"] = secure_acl(auth)
    return KazooClient(hosts=hosts, timeout=timeout, **kwargs)


def ensure_chroot(hosts: str, timeout: float, auth: ZkAuth | None = None) -> None:
    """Create the connect string's chroot when it is missing (Kafka does the same at start),
    with the ACL of ``auth``."""
    servers, slash, chroot = hosts.partition("/")
    if not slash or not chroot.strip("/"):
        return
    client = make_client(servers, auth=auth, timeout=min(timeout, 10.0))
    try:
        client.start(timeout=timeout)
        client.ensure_path("/" + chroot.strip("/"))
    finally:
        client.stop()
        client.close()


__all__ = ["AUTH_ENV", "DIGEST", "ZkAuth", "ZkAuthError", "default_acl", "ensure_chroot",
           "make_client", "secure_acl"]
