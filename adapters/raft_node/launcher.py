"""``LocalQuorum``: voter processes (``python -m adapters.raft_node``) on loopback ports, each
with its own log directory under one root -- for the integration tests and the benchmarks.

Each voter's stderr goes to ``<root>/node-<id>.log`` (appended across restarts, so a test
that fails can show what the nodes said). A voter is crashed with ``kill -9`` (``kill``) and
started again on the same ports and directory (``start``). Waiting is always on a condition
polled with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.ensemble.processes import free_ports
from adapters.raft_node.admin import AdminClient, AdminError

POLL_S = 0.02
"""How often a wait polls the nodes' status (a condition re-checked, not a sleep to
synchronise on)."""


class Voter:
    def __init__(self, quorum: LocalQuorum, node_id: int, port: int, admin_port: int) -> None:
        self.quorum = quorum
        self.node_id = node_id
        self.port = port
        self.admin_port = admin_port
        self.directory = quorum.root / f"node-{node_id}"
        self.log_path = quorum.root / f"node-{node_id}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopped = False  # stopped or killed on purpose: its exit is no failure
        self._client: AdminClient | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def argv(self) -> list[str]:
        q = self.quorum
        out = [sys.executable, "-m", "adapters.raft_node", "--node-id", str(self.node_id),
               "--voters", q.voters_arg, "--dir", str(self.directory),
               "--admin-port", str(self.admin_port),
               "--election-timeout-ms", str(q.election_timeout_ms),
               "--fetch-timeout-ms", str(q.fetch_timeout_ms),
               "--election-backoff-max-ms", str(q.election_backoff_max_ms)]
        if q.controller:
            out.append("--controller")
        return out + list(q.extra_args)

    def start(self) -> None:
        if self.running:
            raise RuntimeError(f"node {self.node_id} is running")
        self._close_client()
        self.stopped = False
        with open(self.log_path, "ab") as err:
            self.proc = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL, stderr=err,
                                         cwd=self.quorum.cwd)

    def kill(self) -> None:
        """``kill -9``: no flush, no goodbye."""
        self._close_client()
        self.stopped = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (a leader resigns first); SIGKILL if it does not exit in ``timeout``."""
        self._close_client()
        self.stopped = True
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        """One admin request (a connection kept open between requests)."""
        if self._client is None:
            self._client = AdminClient("127.0.0.1", self.admin_port, timeout=120.0)
        try:
            return self._client.request(op, **args)
        except (OSError, ConnectionError):
            self._close_client()
            raise

    def status(self) -> dict[str, Any] | None:
        """The node's status, or None if it is down or not answering yet."""
        if not self.running:
            return None
        try:
            return self.request("status")
        except (OSError, ConnectionError, AdminError, ValueError):
            return None

    def _close_client(self) -> None:
        if self._client is not None:
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class LocalQuorum:
    def __init__(self, root: Path, *, voters: int = 3, controller: bool = False,
                 election_timeout_ms: int = 1000, fetch_timeout_ms: int = 2000,
                 election_backoff_max_ms: int = 1000, extra_args: tuple[str, ...] = (),
                 first_id: int = 1) -> None:
        if not 1 <= voters <= 15:
            raise ValueError(f"voters {voters}: 1 to 15")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.controller = controller
        self.election_timeout_ms = election_timeout_ms
        self.fetch_timeout_ms = fetch_timeout_ms
        self.election_backoff_max_ms = election_backoff_max_ms
        self.extra_args = extra_args
        self.cwd = str(Path(__file__).absolute().parents[2])
        ports = free_ports(2 * voters)
        self.voters = {first_id + i: Voter(self, first_id + i, ports[2 * i], ports[2 * i + 1])
                       for i in range(voters)}
        self.voters_arg = ",".join(f"{v.node_id}@127.0.0.1:{v.port}"
                                   for v in self.voters.values())

    def __getitem__(self, node_id: int) -> Voter:
        return self.voters[node_id]

    def start(self) -> None:
        for v in self.voters.values():
            v.start()

    def stop(self) -> None:
        for v in self.voters.values():
            v.stop()

    def kill_all(self) -> None:
        for v in self.voters.values():
            v.kill()

    def statuses(self) -> dict[int, dict[str, Any]]:
        """The status of every node that answers."""
        out = {}
        for node_id, v in self.voters.items():
            s = v.status()
            if s is not None:
                out[node_id] = s
        return out

    def wait_for(self, what: str, check: Callable[[dict[int, dict[str, Any]]], Any],
                 timeout: float) -> Any:
        """Poll the statuses until ``check`` returns something truthy; return it.
        ``TimeoutError`` with the last statuses and the nodes' log tails."""
        deadline = time.monotonic() + timeout
        last: dict[int, dict[str, Any]] = {}
        while True:
            last = self.statuses()
            got = check(last)
            if got:
                return got
            for v in self.voters.values():
                if v.proc is not None and not v.stopped and v.proc.poll() is not None:
                    raise RuntimeError(f"node {v.node_id} exited with {v.proc.returncode}:\n"
                                       f"{v.log_tail()}")
            if time.monotonic() >= deadline:
                tails = "\n".join(f"--- node {v.node_id}\n{v.log_tail(15)}"
                                  for v in self.voters.values())
                raise TimeoutError(f"{what}: not within {timeout:g} s; statuses {last}\n"
                                   f"{tails}")
            time.sleep(POLL_S)

    def wait_leader(self, timeout: float = 30.0, *, min_epoch: int = 0,
                    exclude: tuple[int, ...] = ()) -> Voter:
        """The leader once every running node agrees on it (same epoch, same leader) and its
        epoch is at least ``min_epoch``."""

        def agreed(st: dict[int, dict[str, Any]]) -> Voter | None:
            leaders = [n for n, s in st.items() if s["role"] == "leader" and n not in exclude]
            if len(leaders) != 1:
                return None
            lead = st[leaders[0]]
            if lead["epoch"] < min_epoch:
                return None
            running = [n for n, v in self.voters.items() if v.running]
            if any(n not in st or st[n]["epoch"] != lead["epoch"]
                   or st[n]["leader_id"] != leaders[0] for n in running):
                return None
            return self.voters[leaders[0]]

        return self.wait_for("one leader all running nodes agree on", agreed, timeout)

    def wait_high_watermark(self, offset: int, timeout: float = 30.0,
                            nodes: tuple[int, ...] | None = None) -> dict[int, dict[str, Any]]:
        """Until every node of ``nodes`` (default: the running ones) knows a high watermark
        of at least ``offset``."""
        def reached(st: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]] | None:
            want = nodes if nodes is not None else tuple(
                n for n, v in self.voters.items() if v.running)
            ok = all(n in st and st[n]["high_watermark"] >= offset for n in want)
            return st if ok else None

        return self.wait_for(f"high watermark {offset}", reached, timeout)
