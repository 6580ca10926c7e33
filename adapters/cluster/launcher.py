"""``Cluster``: N ``kcontrol broker`` processes on loopback ports, and the 3-server ZooKeeper
ensemble they use when none is given -- started, watched, and stopped exactly.

Layout of the cluster's directory DIR::

    DIR/cluster.json          state: ZooKeeper (and its ``--zookeeper-auth`` identity, if
                              any: the file is then private, mode 0600), the brokers' ports,
                              pids and command lines
    DIR/broker-<id>.log       each broker's stdout and stderr: its server log (appended
                              across restarts)
    DIR/broker-<id>/state-change.log   each broker's state-change log (its ``--log-dir``)
    DIR/zookeeper/            the embedded ensemble (``adapters.ensemble``), if any

Brokers run detached (their own session, so a Ctrl-C in the terminal reaches only the
command that started them). Each gets three free loopback ports (``pick_ports``), chosen
once and kept across restarts: CONTROLLER (the control plane), PLAINTEXT (clients, other
brokers) and metrics. ``stop``/``down`` signal only the pids recorded in the state file, after checking
in ``/proc/<pid>/cmdline`` that each still runs exactly the recorded command line. With
``die_with_parent`` (tests, the demo) the brokers get SIGKILL and the ensemble SIGTERM should
the starting thread die without stopping them.

Readiness (``wait_ready``): a controller is registered in ``/controller``, every broker that
should run is registered in ``/brokers/ids`` and answers a Metadata request on its PLAINTEXT
listener naming every such broker and that controller.

With ``zookeeper_auth`` every broker gets the identity through ``KCONTROL_ZOOKEEPER_AUTH``
(never on its command line: ``ps`` shows those, and the state file records them), and the
cluster's own ZooKeeper sessions (chroot creation, status, readiness) use it too.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

import adapters
from adapters.admin.connection import connect
from adapters.admin.errors import AdminError
from adapters.ensemble import Ensemble, EnsembleError, NoEnsembleError
from adapters.ensemble.processes import port_is_free, process_alive, process_args
from adapters.network.client import WireClient
from adapters.network.codec import CodecError
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth, ZkAuthError, ensure_chroot
from adapters.zookeeper.reads import ZkReader

STATE_CHANGE_FILE = "state-change.log"  # as adapters.cli.log_options names it in --log-dir
STATE_FILE = "cluster.json"
HOST = "127.0.0.1"
DEFAULT_SESSION_TIMEOUT_MS = 6000
DEFAULT_RETRY_BACKOFF_MS = 1000
CONTROLLED_SHUTDOWN_RETRIES = 3
REPO_ROOT = Path(adapters.__file__).resolve().parent.parent


class ClusterError(RuntimeError):
    """The cluster cannot be started, found or stopped as asked (the message says why)."""


class NoClusterError(ClusterError):
    """DIR holds no cluster state."""


# ---------------------------------------------------------------- the model


@dataclass
class BrokerProcess:
    id: int
    control_port: int | None
    data_port: int
    metrics_port: int
    log_file: Path
    argv: list[str]
    pid: int | None = None

    @property
    def log_dir(self) -> Path:
        """The broker's ``--log-dir``: ``DIR/broker-<id>``, beside its server log."""
        return self.log_file.with_suffix("")

    @property
    def state_change_log(self) -> Path:
        """The broker's state-change log (with the default logging setup)."""
        return self.log_dir / STATE_CHANGE_FILE

    @property
    def endpoints(self) -> str:
        parts = [f"CONTROLLER://{HOST}:{self.control_port}"] if self.control_port else []
        return ",".join([*parts, f"PLAINTEXT://{HOST}:{self.data_port}"])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "pid": self.pid, "control_port": self.control_port,
                "data_port": self.data_port, "metrics_port": self.metrics_port,
                "log_file": str(self.log_file), "argv": self.argv}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BrokerProcess:
        return cls(int(d["id"]), d.get("control_port"), int(d["data_port"]),
                   int(d["metrics_port"]), Path(d["log_file"]), list(d["argv"]), d.get("pid"))


@dataclass(frozen=True)
class BrokerRow:
    """What ``status`` found about one broker."""

    id: int
    pid: int | None
    alive: bool
    epoch: int | None  # registered in /brokers/ids with this epoch (czxid), else None
    endpoints: str
    metrics_port: int
    sees: tuple[int, ...] | None  # broker ids in its Metadata answer (None: no answer)
    sees_controller: int | None
    error: str | None = None


@dataclass(frozen=True)
class ClusterStatus:
    zookeeper: str
    controller: int | None
    controller_epoch: int
    brokers: tuple[BrokerRow, ...]
    expected: frozenset[int] = field(default_factory=frozenset)

    def problems(self) -> list[str]:
        """Why the cluster is not ready (empty: ready)."""
        out = []
        want = tuple(sorted(self.expected))
        if self.controller is None:
            out.append("no controller is elected")
        elif self.controller not in self.expected:
            out.append(f"the controller is broker {self.controller}, which should not run")
        for row in self.brokers:
            if row.id not in self.expected:
                continue
            if not row.alive:
                out.append(f"broker {row.id} does not run")
            elif row.epoch is None:
                out.append(f"broker {row.id} is not registered in /brokers/ids")
            elif row.sees is None:
                out.append(f"broker {row.id} does not answer Metadata ({row.error})")
            elif row.sees != want or row.sees_controller != self.controller:
                out.append(f"broker {row.id}'s metadata names brokers {list(row.sees)} and "
                           f"controller {row.sees_controller}")
        return out

    @property
    def ready(self) -> bool:
        return not self.problems()


# ---------------------------------------------------------------- the cluster


class Cluster:
    """Build with ``create`` (new) or ``load`` (from DIR's state)."""

    def __init__(self, directory: Path, zookeeper: str, brokers: list[BrokerProcess], *,
                 ensemble_dir: Path | None, session_timeout_ms: int,
                 die_with_parent: bool = False, zookeeper_auth: ZkAuth | None = None) -> None:
        self.directory = directory
        self.zookeeper = zookeeper
        self.zookeeper_auth = zookeeper_auth
        self.brokers = {b.id: b for b in brokers}
        self.ensemble_dir = ensemble_dir
        self.session_timeout_ms = session_timeout_ms
        self.die_with_parent = die_with_parent
        self._ensemble: Ensemble | None = None
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self.exit_codes: dict[int, int] = {}
        """Exit status of each broker this object started and saw exit (negative: signal)."""

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(cls, directory: str | os.PathLike[str], brokers: int = 3, *,
               zookeeper: str | None = None,
               session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
               control_plane: bool = True,
               retry_backoff_ms: int = DEFAULT_RETRY_BACKOFF_MS,
               die_with_parent: bool = False, log_level: str = "INFO",
               zookeeper_auth: ZkAuth | None = None,
               control_plane_priority: str = "auto",
               log_config: Path | None = None) -> Cluster:
        """Plan a cluster (ports, command lines); nothing starts until ``up``.
        ``control_plane_priority``: each broker's ``--control-plane-priority``;
        ``log_config``: each broker's ``--log-config`` (else the default logging setup)."""
        if not 1 <= brokers <= 9:
            raise ClusterError(f"a cluster has 1 to 9 brokers, not {brokers}")
        root = Path(directory).absolute()
        ensemble = None
        ensemble_dir = None
        if zookeeper is None:
            ensemble_dir = root / "zookeeper"
            ensemble = Ensemble.create(ensemble_dir, 3, die_with_parent=die_with_parent)
            zookeeper = ensemble.connect_string
        ports = pick_ports(3 * brokers)
        planned = []
        for i in range(brokers):
            bid = i + 1
            control, data, metrics = ports[3 * i: 3 * i + 3]
            if not control_plane:
                control = None
            b = BrokerProcess(bid, control, data, metrics, root / f"broker-{bid}.log", [])
            b.argv = [sys.executable, "-m", "adapters.cli", "broker", "--id", str(bid),
                      "--zookeeper", zookeeper, "--listeners", b.endpoints,
                      *(["--control-plane-listener", "CONTROLLER"] if control_plane else []),
                      "--metrics-port", str(metrics),
                      "--session-timeout-ms", str(session_timeout_ms),
                      "--controlled-shutdown-retry-backoff-ms", str(retry_backoff_ms),
                      "--control-plane-priority", control_plane_priority,
                      "--log-level", log_level, "--log-dir", str(b.log_dir),
                      *(["--log-config", str(Path(log_config).absolute())] if log_config
                        else [])]
            planned.append(b)
        cluster = cls(root, zookeeper, planned, ensemble_dir=ensemble_dir,
                      session_timeout_ms=session_timeout_ms, die_with_parent=die_with_parent,
                      zookeeper_auth=zookeeper_auth)
        cluster._ensemble = ensemble
        return cluster

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Cluster:
        path = Path(directory).absolute() / STATE_FILE
        if not path.is_file():
            raise NoClusterError(f"{path.parent} holds no cluster (no {STATE_FILE}); start one "
                                 f"with `kcontrol cluster up --dir {directory}`")
        try:
            d = json.loads(path.read_text())
            brokers = [BrokerProcess.from_json(b) for b in d["brokers"]]
            ensemble_dir = Path(d["ensemble_dir"]) if d.get("ensemble_dir") else None
            auth = ZkAuth.parse(d["zookeeper_auth"]) if d.get("zookeeper_auth") else None
            return cls(path.parent, d["zookeeper"], brokers, ensemble_dir=ensemble_dir,
                       session_timeout_ms=int(d["session_timeout_ms"]), zookeeper_auth=auth)
        except ZkAuthError as exc:
            raise ClusterError(f"{path}: bad zookeeper_auth ({exc})") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ClusterError(f"{path} is unreadable ({exc}): stop what it started by hand, "
                               f"then remove it") from exc

    @property
    def state_path(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def ensemble(self) -> Ensemble | None:
        if self._ensemble is None and self.ensemble_dir is not None:
            with contextlib.suppress(NoEnsembleError):
                self._ensemble = Ensemble.load(self.ensemble_dir)
        return self._ensemble

    def broker(self, broker_id: int) -> BrokerProcess:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise ClusterError(f"no broker {broker_id}: this cluster has brokers "
                               f"{sorted(self.brokers)}") from None

    # ------------------------------------------------------------------ start

    def up(self, timeout: float = 90.0) -> ClusterStatus:
        """Start the ensemble (if this cluster has its own), then every broker; wait until
        ready. On any failure, stops what it started and raises ``ClusterError``."""
        self._refuse_running()
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            ensemble = self._ensemble
            if ensemble is not None:
                try:
                    ensemble.up(timeout=min(timeout, 60.0))
                except EnsembleError as exc:
                    raise ClusterError(f"ZooKeeper: {exc}") from exc
            self._save()
            try:
                ensure_chroot(self.zookeeper, 15.0, self.zookeeper_auth)
                with connect(self.zookeeper, 15.0, self.zookeeper_auth):
                    pass  # reachable: brokers started now will not time out connecting
            except (KazooException, KazooTimeoutError) as exc:
                raise ClusterError(f"cannot reach ZooKeeper at {self.zookeeper}: "
                                   f"{type(exc).__name__}") from exc
            except AdminError as exc:
                raise ClusterError(str(exc)) from exc
            for b in self.brokers.values():
                self._spawn(b)
            return self.wait_ready(timeout)
        except BaseException:
            self.down()
            raise

    def start_broker(self, broker_id: int) -> None:
        """Start one (stopped) broker again, same id and ports."""
        b = self.broker(broker_id)
        if self.running(broker_id):
            raise ClusterError(f"broker {broker_id} already runs (pid {b.pid})")
        self._spawn(b)

    def _spawn(self, b: BrokerProcess) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        env.pop(AUTH_ENV, None)  # the cluster's identity, not whatever the caller inherited
        if self.zookeeper_auth is not None:
            env[AUTH_ENV] = self.zookeeper_auth.credential
        with b.log_file.open("ab") as out:
            try:
                proc = subprocess.Popen(b.argv, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, cwd=self.directory, env=env,
                                        start_new_session=True,
                                        preexec_fn=_kill_with_parent()
                                        if self.die_with_parent else None)
            except OSError as exc:
                raise ClusterError(f"could not start broker {b.id}: {exc}") from exc
        self._procs[b.id] = proc
        b.pid = proc.pid
        self._save()

    def _refuse_running(self) -> None:
        if not self.state_path.exists():
            return
        try:
            previous = Cluster.load(self.directory)
        except ClusterError:
            return
        running = [f"broker {b.id} (pid {b.pid})" for b in previous.brokers.values()
                   if previous.running(b.id)]
        ens = previous.ensemble
        if ens is not None and ens.is_running():
            running.append("its ZooKeeper ensemble")
        if running:
            raise ClusterError(f"{self.directory} already holds a running cluster "
                               f"({', '.join(running)}); stop it first with "
                               f"`kcontrol cluster down --dir {self.directory}`")

    # ------------------------------------------------------------------ queries

    def running(self, broker_id: int) -> bool:
        b = self.brokers[broker_id]
        proc = self._procs.get(broker_id)
        if proc is not None and proc.pid == b.pid:
            return proc.poll() is None
        return b.pid is not None and process_alive(b.pid) and process_args(b.pid) == b.argv

    def expected(self) -> frozenset[int]:
        """The brokers that should run: those with a recorded pid."""
        return frozenset(b.id for b in self.brokers.values() if b.pid is not None)

    def status(self, client: KazooClient | None = None, timeout: float = 5.0) -> ClusterStatus:
        """Processes, registrations, the controller, and each broker's Metadata answer."""
        if client is None:
            try:
                with connect(self.zookeeper, timeout, self.zookeeper_auth) as own:
                    return self.status(own, timeout)
            except AdminError as exc:
                raise ClusterError(str(exc)) from exc
        reader = ZkReader(client, timeout=timeout)
        try:
            client.sync("/")
            change = reader.controller_change()
            live = {b.broker_id: b for b in reader.live_brokers()}
        except (KazooException, KazooTimeoutError) as exc:
            raise ClusterError(f"reading ZooKeeper at {self.zookeeper}: "
                               f"{type(exc).__name__}") from exc
        rows = []
        for b in sorted(self.brokers.values(), key=lambda b: b.id):
            alive = self.running(b.id)
            info = live.get(b.id)
            sees, sees_controller, error = None, None, None
            if alive:
                try:
                    with WireClient(HOST, b.data_port, timeout=min(timeout, 2.0)) as wc:
                        md = wc.metadata(version=1)
                    sees = tuple(sorted(x["node_id"] for x in md["brokers"]))
                    cid = md["controller_id"]
                    sees_controller = None if cid < 0 else cid
                except (OSError, CodecError) as exc:
                    error = f"{type(exc).__name__}: {exc}"
            rows.append(BrokerRow(b.id, b.pid if alive else None, alive,
                                  None if info is None else info.epoch, b.endpoints,
                                  b.metrics_port, sees, sees_controller, error))
        active = change.active if change.active is not None and change.active >= 0 else None
        return ClusterStatus(self.zookeeper, active, change.epoch, tuple(rows),
                             self.expected())

    def wait_ready(self, timeout: float = 60.0,
                   condition: Callable[[ClusterStatus], bool] | None = None) -> ClusterStatus:
        """Until ``status().ready`` (and ``condition``); ``ClusterError`` naming what is
        missing at the deadline, or at once when a broker that should run has exited."""
        deadline = time.monotonic() + timeout
        try:
            with connect(self.zookeeper, timeout, self.zookeeper_auth) as client:
                while True:
                    dead = [b for b in self.brokers.values()
                            if b.pid is not None and not self.running(b.id)]
                    if dead:
                        raise ClusterError(self._report(
                            f"broker {dead[0].id} (pid {dead[0].pid}) exited", dead[0]))
                    st = self.status(client)
                    if st.ready and (condition is None or condition(st)):
                        return st
                    if time.monotonic() >= deadline:
                        problems = st.problems() or ["the condition waited for never held"]
                        raise ClusterError(f"cluster not ready after {timeout:g} s: "
                                           + "; ".join(problems))
                    time.sleep(0.1)
        except AdminError as exc:
            raise ClusterError(str(exc)) from exc

    def _report(self, headline: str, b: BrokerProcess, lines: int = 15) -> str:
        try:
            tail = b.log_file.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            tail = []
        return "\n".join([f"{headline}; last lines of {b.log_file}:",
                          *(f"  {line}" for line in tail)])

    # ------------------------------------------------------------------ stop

    def kill_broker(self, broker_id: int, signum: int = signal.SIGKILL) -> None:
        """Signal one broker (SIGKILL: a crash; SIGTERM: a controlled shutdown)."""
        b = self.broker(broker_id)
        if not self.running(broker_id):
            raise ClusterError(f"broker {broker_id} does not run")
        assert b.pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(b.pid, signum)

    def wait_stopped(self, broker_id: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.running(broker_id):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        self._reap(broker_id)
        return True

    def stop_broker(self, broker_id: int, grace: float | None = None) -> str:
        """SIGTERM (controlled shutdown), up to ``grace`` seconds, then SIGKILL. Returns what
        happened: "stopped", "killed" or "not running"."""
        b = self.broker(broker_id)
        if not self.running(broker_id):
            b.pid = None
            self._save()
            return "not running"
        grace = self.shutdown_grace_s if grace is None else grace
        self.kill_broker(broker_id, signal.SIGTERM)
        outcome = "stopped"
        if not self.wait_stopped(broker_id, grace):
            self.kill_broker(broker_id, signal.SIGKILL)
            self.wait_stopped(broker_id, 5.0)
            outcome = "killed"
        b.pid = None
        self._save()
        return outcome

    def forget(self, broker_id: int) -> None:
        """Record that a broker was stopped outside ``stop_broker`` (e.g. killed)."""
        self._reap(broker_id)
        self.broker(broker_id).pid = None
        self._save()

    @property
    def shutdown_grace_s(self) -> float:
        return CONTROLLED_SHUTDOWN_RETRIES * DEFAULT_RETRY_BACKOFF_MS / 1000.0 + 15.0

    def down(self) -> list[str]:
        """Stop every broker this cluster started (the controller last, each with a
        controlled shutdown), then its own ensemble. Returns one line per process."""
        lines = []
        order = sorted(self.brokers, key=lambda i: (i == self._controller_hint(), i))
        for bid in order:
            pid = self.brokers[bid].pid
            outcome = self.stop_broker(bid)
            lines.append(f"broker {bid}" + (f" (pid {pid})" if pid else "") + f": {outcome}")
        ens = self.ensemble
        if ens is not None:
            try:
                for r in ens.stop():
                    pid = f" (pid {r.pid})" if r.pid else ""
                    lines.append(f"zookeeper server {r.server_id}{pid}: {r.outcome}")
            except EnsembleError as exc:
                lines.append(f"zookeeper: {exc}")
        return lines

    def _controller_hint(self) -> int | None:
        """The controller's id, if ZooKeeper answers quickly (stop order only)."""
        if not any(self.running(b) for b in self.brokers):
            return None
        try:
            with connect(self.zookeeper, 3.0, self.zookeeper_auth) as client:
                active = ZkReader(client, timeout=3.0).controller_change().active
        except (AdminError, KazooException, KazooTimeoutError):
            return None
        return active

    def _reap(self, broker_id: int) -> None:
        proc = self._procs.pop(broker_id, None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.exit_codes[broker_id] = proc.wait(timeout=1.0)

    def _save(self) -> None:
        data = {
            "version": 1,
            "directory": str(self.directory),
            "zookeeper": self.zookeeper,
            "ensemble_dir": None if self.ensemble_dir is None else str(self.ensemble_dir),
            "session_timeout_ms": self.session_timeout_ms,
            "zookeeper_auth": None if self.zookeeper_auth is None
            else self.zookeeper_auth.credential,
            "brokers": [b.to_json() for b in sorted(self.brokers.values(), key=lambda b: b.id)],
        }
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".json.tmp")
        tmp.unlink(missing_ok=True)  # created afresh: with a password in it, private (0600)
        mode = 0o666 if self.zookeeper_auth is None else 0o600
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w") as f:
            f.write(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, self.state_path)


def pick_ports(count: int, host: str = HOST) -> list[int]:
    """``count`` distinct ports free now, taken *below* the kernel's ephemeral range: a port
    chosen now is bound only when its broker starts (and again when it restarts), and a port
    in the ephemeral range may meanwhile become the local port of any outgoing connection or
    of another program's bind to port 0. Below the range only an explicit bind can take it."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    first = max(1024, low - 12000)
    rng = random.Random()
    chosen: list[int] = []
    for port in rng.sample(range(first, low), min(low - first, 50 * count + 100)):
        if port_is_free(port, host):
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise ClusterError(f"found only {len(chosen)} free ports of {count} in {first}-{low - 1} "
                       f"on {host}")


def _kill_with_parent() -> Callable[[], None] | None:
    """A preexec_fn: the child gets SIGKILL when the thread that started it dies (only offered
    on the main thread, whose end is the process's end). SIGKILL, not SIGTERM: the point is
    that nothing outlives a crashed test run or demo, not a graceful exit."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook() -> None:
        prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG

    return hook
