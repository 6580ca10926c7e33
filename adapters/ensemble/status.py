"""What `status` and `stop` report about an ensemble and its servers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ServerStatus:
    id: int
    client_port: int
    pid: int | None
    alive: bool
    mode: str  # leader, follower, observer, standalone, read-only, "not serving" or "stopped"
    zxid: int | None

    @property
    def zxid_hex(self) -> str | None:
        return None if self.zxid is None else f"0x{self.zxid:x}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "client_port": self.client_port,
            "pid": self.pid,
            "alive": self.alive,
            "mode": self.mode,
            "zxid": self.zxid,
            "zxid_hex": self.zxid_hex,
        }


@dataclass(frozen=True)
class EnsembleStatus:
    connect_string: str
    servers: list[ServerStatus] = field(default_factory=list)

    @property
    def leader(self) -> ServerStatus | None:
        leaders = [s for s in self.servers if s.mode == "leader"]
        return leaders[0] if len(leaders) == 1 else None

    @property
    def has_quorum(self) -> bool:
        """One leader and a majority serving with it (or a serving standalone server)."""
        if len(self.servers) == 1:
            return self.servers[0].mode == "standalone"
        serving = [s for s in self.servers if s.mode in ("leader", "follower")]
        return self.leader is not None and len(serving) > len(self.servers) // 2

    def to_json(self) -> dict[str, Any]:
        leader = self.leader
        return {
            "connect_string": self.connect_string,
            "quorum": self.has_quorum,
            "leader": leader.id if leader else None,
            "servers": [s.to_json() for s in self.servers],
        }


@dataclass(frozen=True)
class StopResult:
    server_id: int
    pid: int | None
    outcome: str  # "stopped", "killed", "not running", "not ours"

    def describe(self) -> str:
        if self.outcome == "stopped":
            return f"stopped server {self.server_id} (pid {self.pid})"
        if self.outcome == "killed":
            return f"killed server {self.server_id} (pid {self.pid}): it ignored SIGTERM"
        if self.outcome == "not ours":
            return (
                f"server {self.server_id}: pid {self.pid} is no longer this server's java "
                "process (it exited and the pid was reused); left it alone"
            )
        return f"server {self.server_id} was not running"
