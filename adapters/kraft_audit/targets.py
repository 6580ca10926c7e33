"""Where the auditor finds a KRaft cluster's nodes: the plan file ``kraft-cluster.json`` that
``kcontrol cluster up --mode kraft`` writes in its directory (node ids, roles, admin ports),
or an explicit list ``ROLE:ID=HOST:PORT,...`` of admin sockets (``controller:1=127.0.0.1:7001``;
``combined`` for a node with both roles)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.kraft_audit.collect import Ask
from adapters.raft_node.admin import AdminClient

PLAN_FILE = "kraft-cluster.json"
ROLES = {"controller": ("controller",), "broker": ("broker",),
         "combined": ("controller", "broker")}
TIMEOUT_S = 30.0


class TargetError(ValueError):
    """A plan or a list that does not say where the nodes are; the message says why."""


@dataclass(frozen=True)
class Target:
    node_id: int
    roles: tuple[str, ...]
    host: str
    admin_port: int

    def ask(self) -> Ask:
        """One admin request per call, on a fresh connection (an audit asks a few times)."""

        def ask(op: str, args: dict[str, Any]) -> dict[str, Any]:
            with AdminClient(self.host, self.admin_port, timeout=TIMEOUT_S) as client:
                return client.request(op, **args)

        return ask


def from_plan(directory: Path) -> list[Target]:
    path = directory / PLAN_FILE if directory.is_dir() else directory
    try:
        plan = json.loads(path.read_text())
        nodes = plan["nodes"]
        return [Target(int(n["id"]), ROLES[n["role"]], "127.0.0.1", int(n["admin_port"]))
                for n in nodes]
    except FileNotFoundError:
        raise TargetError(f"{path}: no such file (the directory of `kcontrol cluster up "
                          "--mode kraft --dir D` holds it)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TargetError(f"{path}: not a KRaft cluster plan ({type(exc).__name__}: {exc})"
                          ) from None


def from_list(text: str) -> list[Target]:
    out: list[Target] = []
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        role, colon, rest = entry.partition(":")
        ident, eq, address = rest.partition("=")
        host, colon2, port = address.rpartition(":")
        if not colon or not eq or not colon2 or role not in ROLES:
            raise TargetError(f"{entry!r}: want ROLE:ID=HOST:PORT with ROLE one of "
                              f"{', '.join(ROLES)}")
        try:
            node_id, admin_port = int(ident), int(port)
        except ValueError:
            raise TargetError(f"{entry!r}: the id and the port are integers") from None
        if not 0 < admin_port < 65536:
            raise TargetError(f"{entry!r}: port {admin_port} out of 1-65535")
        out.append(Target(node_id, ROLES[role], host, admin_port))
    if not out:
        raise TargetError("no node given")
    return out
