"""One process of a local KRaft cluster (``KRaftNode``) and the Kafka-style properties file it
runs from -- the parts ``kraft_launcher.KRaftCluster`` is built of.

A node owns its files under the cluster's directory DIR: ``DIR/<role>-<id>.properties`` (its
configuration), ``DIR/<role>-<id>.log`` (its stdout and stderr, appended across restarts) and
``DIR/<role>-<id>/`` (its ``log.dirs``; the metadata log is
``DIR/<role>-<id>/__cluster_metadata-0``). It is started, signalled and waited for by the pid
this object started -- never found by name -- and answers status questions on its loopback
admin socket (``kcontrol.admin.port``, one JSON line each way: ``adapters.raft_node.admin``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.raft_node.admin import AdminClient, AdminError

HOST = "127.0.0.1"
METADATA_PARTITION = "__cluster_metadata-0"
CONTROLLER_LISTENER = "CONTROLLER"
CLIENT_LISTENER = "PLAINTEXT"
ADMIN_TIMEOUT_S = 5.0
"""An admin request that takes longer than this counts as no answer (the node is busy or
gone); waits poll again."""


def write_properties(path: Path, props: dict[str, str], header: str) -> None:
    """``props`` as a Java properties file (``key=value`` lines, a ``#`` header). Values are
    paths, numbers and lists written by us: none holds a newline or a backslash-escape."""
    for key, value in props.items():
        if "\n" in value or "\n" in key:
            raise ValueError(f"property {key!r}: a newline in a properties value")
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{key}={value}" for key, value in props.items()]
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


@dataclass
class KRaftNode:
    """One controller or broker process: its ports (chosen once, kept across restarts), its
    files, and the process this object started."""

    node_id: int
    role: str  # "controller" or "broker"
    port: int  # the CONTROLLER listener of a controller, the PLAINTEXT listener of a broker
    admin_port: int
    root: Path  # the cluster's directory
    props: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False  # stopped or killed on purpose: its exit is no failure
    starts: int = 0
    _client: AdminClient | None = None

    @property
    def name(self) -> str:
        return f"{self.role}-{self.node_id}"

    @property
    def config_path(self) -> Path:
        return self.root / f"{self.name}.properties"

    @property
    def log_path(self) -> Path:
        return self.root / f"{self.name}.log"

    @property
    def data_dir(self) -> Path:
        """The node's ``log.dirs`` (and ``metadata.log.dir``)."""
        return self.root / self.name

    @property
    def metadata_dir(self) -> Path:
        """Where the node's copy of the metadata log lives."""
        return self.data_dir / METADATA_PARTITION

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def exited_unexpectedly(self) -> bool:
        return self.proc is not None and not self.stopped and self.proc.poll() is not None

    # ------------------------------------------------------------------ files

    def write_config(self) -> None:
        write_properties(self.config_path, self.props,
                         f"kcontrol KRaft {self.role} {self.node_id} (written by the "
                         f"local cluster launcher; `kcontrol node --config` reads it)")

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        tail = text.splitlines()[-lines:]
        return "\n".join(tail) if tail else "(empty log)"

    def snapshots(self) -> list[Path]:
        """The node's snapshot files (``<end offset>-<epoch>.checkpoint``), oldest first."""
        if not self.metadata_dir.is_dir():
            return []
        return sorted(self.metadata_dir.glob("*.checkpoint"))

    # ------------------------------------------------------------------ process

    def start(self, argv: list[str], *, cwd: str, env: dict[str, str],
              preexec: Callable[[], None] | None, new_session: bool) -> None:
        if self.running:
            raise RuntimeError(f"{self.name} is running (pid {self.pid})")
        self.close_client()
        self.stopped = False
        self.starts += 1
        with open(self.log_path, "ab") as out:
            out.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} start #{self.starts}: "
                      f"{' '.join(argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                         preexec_fn=preexec, start_new_session=new_session)

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to the process this object started; False if it has exited."""
        if not self.running:
            return False
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signum)
        return True

    def kill(self) -> None:
        """``kill -9``: no flush, no goodbye."""
        self.close_client()
        self.stopped = True
        if self.signal(signal.SIGKILL):
            assert self.proc is not None
            self.proc.wait(10)

    def terminate(self, grace: float = 15.0) -> str:
        """SIGTERM (a broker shuts down through its heartbeats, a leader resigns), up to
        ``grace`` seconds, then SIGKILL. Returns "stopped", "killed" or "not running"."""
        self.close_client()
        self.stopped = True
        if not self.signal(signal.SIGTERM):
            return "not running"
        assert self.proc is not None
        try:
            self.proc.wait(grace)
            return "stopped"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return "killed"

    # ------------------------------------------------------------------ admin socket

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        """One admin request (the connection is kept between requests)."""
        if self._client is None:
            self._client = AdminClient(HOST, self.admin_port, timeout=ADMIN_TIMEOUT_S)
        try:
            return self._client.request(op, **args)
        except (OSError, ConnectionError, ValueError):
            self.close_client()
            raise

    def ask(self, op: str, **args: Any) -> dict[str, Any] | None:
        """``request``, or None if the node is down, not answering yet, or refuses."""
        if not self.running:
            return None
        try:
            return self.request(op, **args)
        except (OSError, ConnectionError, AdminError, ValueError):
            return None

    def close_client(self) -> None:
        if self._client is not None:
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None


def subprocess_env(repo_root: Path) -> dict[str, str]:
    """The nodes' environment: ours, with the repository importable (a checkout that is not
    installed runs too)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(repo_root), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env
