"""A real ZooKeeper ensemble on demand: N ``QuorumPeerMain`` processes on loopback ports, in one directory.

Layout of the ensemble's directory DIR::

    DIR/ensemble.json                    state: servers, pids, ports, connect string
    DIR/log4j.properties                 one log4j 1.2 configuration for every server
    DIR/server-<id>/zoo.cfg
    DIR/server-<id>/data/myid            (and ZooKeeper's snapshots and transaction logs)
    DIR/server-<id>/log/zookeeper.log    the server's own log
    DIR/server-<id>/log/stdout.log       the JVM's stdout and stderr (crashes land here)

Debian's ZooKeeper 3.8.0 logs through slf4j 1.7 and ships no slf4j binding on its class path, so a
plain start logs nothing. The launcher adds ``slf4j-log4j12.jar`` and ``log4j-1.2.jar`` (both in
``/usr/share/java``) and points ``-Dlog4j.configuration`` at ``DIR/log4j.properties``.

Servers run detached (own session), so a Ctrl-C on the caller does not reach them; ``stop()`` stops
exactly the recorded pids, after checking in ``/proc/<pid>/cmdline`` that each one still is that
server's JVM.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.ensemble import four_letter
from adapters.ensemble.errors import (
    AlreadyRunningError,
    EnsembleError,
    NoEnsembleError,
    PortInUseError,
    QuorumError,
)
from adapters.ensemble.four_letter import NOT_SERVING, FourLetterError
from adapters.ensemble.processes import (
    HOST,
    LOG4J_FILE,
    MAIN_CLASS,
    STATE_FILE,
    _parent_death_hook,
    _tail,
    find_java,
    free_ports,
    is_server_process,
    jvm_opts,
    port_is_free,
    process_alive,
    wait_for,
    zookeeper_classpath,
)
from adapters.ensemble.status import EnsembleStatus, ServerStatus, StopResult

STOPPED = "stopped"
_SERVER_DIR = re.compile(r"server-\d+")

LOG4J_PROPERTIES = """\
# Written by kcontrol: one file per server, in the directory given by -Dzookeeper.log.dir.
log4j.rootLogger=INFO, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=${zookeeper.log.dir}/zookeeper.log
log4j.appender.FILE.Append=true
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p [%t:%C{1}@%L] - %m%n
# The launcher polls srvr; keep those polls out of the log so its tail stays useful.
log4j.logger.org.apache.zookeeper.server.NIOServerCnxn=WARN
log4j.logger.org.apache.zookeeper.server.NettyServerCnxn=WARN
log4j.logger.org.apache.zookeeper.server.command=WARN
"""


# --- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    tick_time_ms: int = 500
    min_session_timeout_ms: int = 1000
    max_session_timeout_ms: int = 30000
    init_limit_ticks: int = 20
    sync_limit_ticks: int = 10
    force_sync: bool = False  # fsync every transaction; off by default: a test ensemble wants speed

    def check(self) -> None:
        if self.tick_time_ms <= 0:
            raise EnsembleError(f"tickTime must be positive, not {self.tick_time_ms} ms")
        if not 0 < self.min_session_timeout_ms <= self.max_session_timeout_ms:
            raise EnsembleError(
                f"session timeouts must satisfy 0 < min <= max, not min={self.min_session_timeout_ms}"
                f" ms, max={self.max_session_timeout_ms} ms"
            )


@dataclass
class Server:
    id: int
    client_port: int
    peer_port: int | None
    election_port: int | None
    directory: Path
    pid: int | None = None

    @property
    def config_path(self) -> Path:
        return self.directory / "zoo.cfg"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_dir(self) -> Path:
        return self.directory / "log"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "zookeeper.log"

    @property
    def stdout_file(self) -> Path:
        return self.log_dir / "stdout.log"

    @property
    def address(self) -> str:
        return f"{HOST}:{self.client_port}"

    def ports(self) -> list[tuple[str, int]]:
        named = [("client", self.client_port), ("peer", self.peer_port)]
        named.append(("election", self.election_port))
        return [(kind, port) for kind, port in named if port is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "pid": self.pid,
            "client_port": self.client_port,
            "peer_port": self.peer_port,
            "election_port": self.election_port,
            "directory": str(self.directory),
            "config": str(self.config_path),
            "data_dir": str(self.data_dir),
            "log_file": str(self.log_file),
            "stdout_file": str(self.stdout_file),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Server:
        return cls(
            id=int(data["id"]),
            client_port=int(data["client_port"]),
            peer_port=data.get("peer_port"),
            election_port=data.get("election_port"),
            directory=Path(data["directory"]),
            pid=data.get("pid"),
        )


# --- the ensemble ------------------------------------------------------------------------------


class Ensemble:
    """N ZooKeeper servers in ``directory``. Build with ``create`` (new) or ``load`` (from state)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        servers: list[Server],
        settings: Settings,
        *,
        java: str | None = None,
        jar_dir: str | os.PathLike[str] | None = None,
        die_with_parent: bool = False,
        classpath: list[str] | None = None,
    ) -> None:
        self.directory = Path(directory).absolute()
        self.servers = servers
        self.settings = settings
        self.die_with_parent = die_with_parent
        self._java = java
        self._jar_dir = jar_dir
        self._classpath = classpath
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._owns_state = False  # True once this object has written (or read) DIR's state

    # construction

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        servers: int = 3,
        *,
        base_port: int | None = None,
        tick_time_ms: int = 500,
        min_session_timeout_ms: int = 1000,
        max_session_timeout_ms: int = 30000,
        force_sync: bool = False,
        java: str | None = None,
        jar_dir: str | os.PathLike[str] | None = None,
        die_with_parent: bool = False,
    ) -> Ensemble:
        """Plan an ensemble (ports, paths); nothing starts and nothing is written until ``start``.
        With ``base_port`` P, server i (1-based) of N gets client port P+i-1, peer port P+N+i-1
        and election port P+2N+i-1; without it, ports the kernel reports free."""
        if not 1 <= servers <= 9:
            raise EnsembleError(f"an ensemble has 1 to 9 servers, not {servers}")
        settings = Settings(
            tick_time_ms=tick_time_ms,
            min_session_timeout_ms=min_session_timeout_ms,
            max_session_timeout_ms=max_session_timeout_ms,
            force_sync=force_sync,
        )
        settings.check()
        per_server = 1 if servers == 1 else 3
        if base_port is None:
            ports = free_ports(servers * per_server)
        else:
            if not 1 <= base_port <= 65536 - servers * per_server:
                raise EnsembleError(
                    f"base port {base_port} leaves no room for {servers * per_server} ports"
                )
            ports = list(range(base_port, base_port + servers * per_server))
        root = Path(directory).absolute()
        planned = []
        for index in range(servers):
            quorum = servers > 1
            planned.append(
                Server(
                    id=index + 1,
                    client_port=ports[index],
                    peer_port=ports[servers + index] if quorum else None,
                    election_port=ports[2 * servers + index] if quorum else None,
                    directory=root / f"server-{index + 1}",
                )
            )
        return cls(
            root, planned, settings, java=java, jar_dir=jar_dir, die_with_parent=die_with_parent
        )

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Ensemble:
        """The ensemble recorded in ``DIR/ensemble.json`` (its processes may or may not run)."""
        path = Path(directory).absolute() / STATE_FILE
        if not path.is_file():
            raise NoEnsembleError(
                f"{path.parent} holds no ensemble (no {STATE_FILE}); start one with "
                f"`kcontrol zookeeper up --dir {directory}`"
            )
        try:
            data = json.loads(path.read_text())
            servers = [Server.from_json(item) for item in data["servers"]]
            settings = Settings(**data["settings"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EnsembleError(
                f"{path} is unreadable ({exc}): stop any servers it started by hand, then remove it"
            ) from exc
        ensemble = cls(
            path.parent, servers, settings, java=data.get("java"), classpath=data.get("classpath")
        )
        ensemble._owns_state = True
        return ensemble

    def __enter__(self) -> Ensemble:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # queries

    @property
    def state_path(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def connect_string(self) -> str:
        return ",".join(server.address for server in self.servers)

    def server(self, server_id: int) -> Server:
        for server in self.servers:
            if server.id == server_id:
                return server
        raise EnsembleError(
            f"no server {server_id}: this ensemble has servers 1..{len(self.servers)}"
        )

    def is_running(self, server_id: int | None = None) -> bool:
        """Whether the given server (or any server) runs as recorded."""
        servers = self.servers if server_id is None else [self.server(server_id)]
        return any(self._running(server) for server in servers)

    def status(self, timeout: float = 1.0) -> EnsembleStatus:
        """Per server: pid alive?, mode and zxid from ``srvr``."""
        rows = []
        for server in self.servers:
            alive = self._running(server)
            mode, zxid = STOPPED, None
            if alive:
                try:
                    info = four_letter.srvr(HOST, server.client_port, timeout)
                    mode, zxid = info.mode, info.zxid
                except FourLetterError:
                    mode = NOT_SERVING
            rows.append(ServerStatus(server.id, server.client_port, server.pid, alive, mode, zxid))
        return EnsembleStatus(self.connect_string, rows)

    def log_tail(self, server_id: int, lines: int = 30) -> str:
        """The last lines of the server's log (and of its JVM output, when there is any)."""
        server = self.server(server_id)
        parts = []
        log = _tail(server.log_file, lines)
        if log:
            parts.append(f"last {len(log)} lines of {server.log_file}:")
            parts += [f"  {line}" for line in log]
        else:
            parts.append(f"{server.log_file} is empty or missing (no slf4j->log4j binding?)")
        output = _tail(server.stdout_file, lines)
        if output:
            parts.append(f"last {len(output)} lines of {server.stdout_file}:")
            parts += [f"  {line}" for line in output]
        return "\n".join(parts)

    # starting

    def start(self) -> None:
        """Check java, jars, DIR and ports; write the configuration; start every server detached.
        Does not wait for a quorum (see ``wait_for_quorum``, or ``up`` for both)."""
        java = find_java(self._java)
        classpath = zookeeper_classpath(self._jar_dir)
        self._refuse_running_directory()
        self._check_ports(self.servers)
        self._java, self._classpath = java, classpath
        self._prepare_directory()
        self._owns_state = True
        try:
            for server in self.servers:
                self._spawn(server)
                self._save()
        except BaseException:
            self.stop()
            raise

    def up(self, timeout: float = 30.0) -> EnsembleStatus:
        """``start`` and ``wait_for_quorum``; on any failure stops what it started."""
        self.start()
        try:
            return self.wait_for_quorum(timeout)
        except BaseException:
            self.stop()
            raise

    def start_server(self, server_id: int) -> None:
        """Start one (stopped) server again, with the same ports and data."""
        server = self.server(server_id)
        if not self._owns_state:
            raise EnsembleError("start the ensemble first (start() or up())")
        if self._running(server):
            raise AlreadyRunningError(f"server {server_id} already runs (pid {server.pid})")
        self._check_ports([server])
        self._spawn(server)
        self._save()

    def wait_for_quorum(
        self, timeout: float = 30.0, servers: Iterable[int] | None = None
    ) -> EnsembleStatus:
        """Poll ``srvr`` until the given servers (default: every server that should run) serve:
        one leader and the others followers, or one standalone server. Raises QuorumError with
        each server's log tail on timeout, or as soon as one of them exits."""
        if servers is None:
            expected = [s.id for s in self.servers if s.pid is not None]
        else:
            expected = sorted(set(servers))
        needed = len(self.servers) // 2 + 1
        if len(expected) < needed:
            raise QuorumError(
                f"{len(expected)} of {len(self.servers)} servers should run ({expected}); a quorum "
                f"needs {needed}: start more with start_server()"
            )
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            rows = [row for row in status.servers if row.id in expected]
            dead = [row.id for row in rows if not row.alive]
            if dead:
                raise QuorumError(self._report(f"server(s) {dead} exited", status, expected))
            modes = sorted(row.mode for row in rows)
            if len(self.servers) == 1:
                formed = modes == ["standalone"]
            else:
                formed = modes == ["follower"] * (len(modes) - 1) + ["leader"]
            if formed:
                return status
            if time.monotonic() >= deadline:
                headline = f"no quorum after {timeout:g} s"
                raise QuorumError(self._report(headline, status, expected))
            time.sleep(0.1)

    # stopping

    def stop(self, grace: float = 10.0) -> list[StopResult]:
        """Stop every recorded server: SIGTERM, up to ``grace`` seconds, then SIGKILL."""
        return self._stop(self.servers, grace)

    def stop_server(self, server_id: int, grace: float = 10.0) -> StopResult:
        return self._stop([self.server(server_id)], grace)[0]

    # internals

    def _running(self, server: Server) -> bool:
        proc = self._procs.get(server.id)
        if proc is not None and proc.pid == server.pid:
            # Our own child: its pid cannot be reused before we reap it, and right after exec
            # its /proc/<pid>/cmdline can still read empty, so ask the child, not /proc.
            return proc.poll() is None
        return server.pid is not None and is_server_process(server.pid, server.config_path)

    def _stop(self, servers: list[Server], grace: float) -> list[StopResult]:
        if not self._owns_state:
            return [StopResult(server.id, None, "not running") for server in servers]
        results: dict[int, StopResult] = {}
        pending: list[Server] = []
        for server in servers:
            if server.pid is None:
                results[server.id] = StopResult(server.id, None, "not running")
            elif not self._running(server):
                outcome = "not ours" if process_alive(server.pid) else "not running"
                results[server.id] = StopResult(server.id, server.pid, outcome)
            else:
                self._signal(server.pid, signal.SIGTERM)
                pending.append(server)
        wait_for(lambda: not any(self._running(s) for s in pending), grace)
        for server in pending:
            outcome = "stopped"
            if self._running(server):
                self._signal(server.pid, signal.SIGKILL)
                outcome = "killed"
                wait_for(lambda s=server: not self._running(s), 5.0)
            results[server.id] = StopResult(server.id, server.pid, outcome)
        for server in servers:
            proc = self._procs.pop(server.id, None)
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=1.0)
            server.pid = None
        self._save()
        return [results[server.id] for server in servers]

    @staticmethod
    def _signal(pid: int | None, signum: int) -> None:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def _refuse_running_directory(self) -> None:
        if not self.state_path.exists():
            stray = [
                p.name for p in self.directory.glob("server-*") if _SERVER_DIR.fullmatch(p.name)
            ]
            if stray:
                raise EnsembleError(
                    f"{self.directory} holds {', '.join(sorted(stray))} but no {STATE_FILE}: it "
                    "was not made by kcontrol; choose an empty or new directory"
                )
            return
        previous = Ensemble.load(self.directory)
        running = [s for s in previous.servers if previous._running(s)]
        if running:
            listed = ", ".join(f"server {s.id} (pid {s.pid})" for s in running)
            raise AlreadyRunningError(
                f"{self.directory} already holds a running ZooKeeper ensemble ({listed}); stop it "
                f"first with `kcontrol zookeeper down --dir {self.directory}`"
            )

    def _check_ports(self, servers: list[Server]) -> None:
        for server in servers:
            for kind, port in server.ports():
                if not port_is_free(port):
                    raise PortInUseError(
                        f"port {port} ({kind} port of server {server.id}) is already in use on "
                        f"{HOST}: free it, pick another --base-port, or leave --base-port out "
                        "to use free ports"
                    )

    def _prepare_directory(self) -> None:
        """Start fresh: remove what an earlier (stopped) ensemble left, write the configuration."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for old in self.directory.glob("server-*"):
            if old.is_dir() and _SERVER_DIR.fullmatch(old.name):
                shutil.rmtree(old)
        self.state_path.unlink(missing_ok=True)
        (self.directory / LOG4J_FILE).write_text(LOG4J_PROPERTIES)
        for server in self.servers:
            server.data_dir.mkdir(parents=True)
            server.log_dir.mkdir(parents=True)
            (server.data_dir / "myid").write_text(f"{server.id}\n")
            server.config_path.write_text(self._zoo_cfg(server))

    def _zoo_cfg(self, server: Server) -> str:
        s = self.settings
        lines = [
            "# Written by kcontrol (adapters/ensemble/launcher.py).",
            f"tickTime={s.tick_time_ms}",
            f"initLimit={s.init_limit_ticks}",
            f"syncLimit={s.sync_limit_ticks}",
            f"minSessionTimeout={s.min_session_timeout_ms}",
            f"maxSessionTimeout={s.max_session_timeout_ms}",
            f"dataDir={server.data_dir}",
            f"clientPort={server.client_port}",
            f"clientPortAddress={HOST}",
            "admin.enableServer=false",
            "4lw.commands.whitelist=*",
            "maxClientCnxns=0",
            f"forceSync={'yes' if s.force_sync else 'no'}",
        ]
        if len(self.servers) > 1:
            lines += [f"server.{p.id}={HOST}:{p.peer_port}:{p.election_port}" for p in self.servers]
        return "\n".join(lines) + "\n"

    def _spawn(self, server: Server) -> None:
        assert self._java is not None and self._classpath is not None
        command = [
            self._java,
            *jvm_opts(),
            f"-Dzookeeper.log.dir={server.log_dir}",
            f"-Dlog4j.configuration={(self.directory / LOG4J_FILE).as_uri()}",
            "-cp",
            os.pathsep.join(self._classpath),
            MAIN_CLASS,
            str(server.config_path),
        ]
        server.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            with server.stdout_file.open("ab") as output:
                proc = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    cwd=server.directory,
                    start_new_session=True,
                    preexec_fn=_parent_death_hook() if self.die_with_parent else None,
                )
        except OSError as exc:
            raise EnsembleError(
                f"could not start server {server.id} with {self._java}: {exc}"
            ) from exc
        self._procs[server.id] = proc
        server.pid = proc.pid

    def _save(self) -> None:
        data = {
            "version": 1,
            "directory": str(self.directory),
            "connect_string": self.connect_string,
            "settings": self.settings.__dict__,
            "java": self._java,
            "classpath": self._classpath,
            "servers": [server.to_json() for server in self.servers],
        }
        temporary = self.state_path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(temporary, self.state_path)

    def _report(self, headline: str, status: EnsembleStatus, expected: list[int]) -> str:
        parts = [f"ZooKeeper ensemble in {self.directory}: {headline}."]
        for row in status.servers:
            if row.id not in expected:
                continue
            alive = "alive" if row.alive else "NOT running"
            parts.append(
                f"server {row.id} (client port {row.client_port}, pid {row.pid}, process {alive}, "
                f"mode {row.mode}):"
            )
            parts += [f"  {line}" for line in self.log_tail(row.id).splitlines()]
        parts.append(
            f"Logs: {self.directory}/server-<id>/log/. Is the machine busy? Try --timeout."
        )
        return "\n".join(parts)
