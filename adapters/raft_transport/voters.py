"""``controller.quorum.voters``: ``id@host:port,id@host:port,...`` -> {id: (host, port)}."""

from __future__ import annotations


def parse_voters(spec: str) -> dict[int, tuple[str, int]]:
    """Kafka's voter list; an IPv6 host is written in brackets (``1@[::1]:9093``). A
    malformed entry raises ``ValueError`` naming it."""
    voters: dict[int, tuple[str, int]] = {}
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        node, at, address = entry.partition("@")
        host, colon, port = address.rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not at or not colon or not host or not node.strip().isdigit() or not port.isdigit():
            raise ValueError(f"controller.quorum.voters entry {entry!r} is not id@host:port")
        if not 0 < int(port) < 65536:
            raise ValueError(f"controller.quorum.voters entry {entry!r}: port out of range")
        if int(node) in voters:
            raise ValueError(f"controller.quorum.voters names node {node} twice")
        voters[int(node)] = (host, int(port))
    if not voters:
        raise ValueError("controller.quorum.voters is empty")
    return voters
