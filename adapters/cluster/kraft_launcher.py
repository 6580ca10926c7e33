"""``KRaftCluster``: a local KRaft cluster -- C controller processes (the metadata quorum) and B
broker processes on loopback ports, each run by ``kcontrol node --config F`` from a properties
file of its own -- formatted, started, watched and stopped exactly (``kcontrol cluster up
--mode kraft``, the KRaft stage of ``make run``, the stock-client tests).

Node ids: controllers are 3000, 3001, ... and brokers 1, 2, ... -- controllers numbered as
Kafka's own test kit numbers them (``TestKitNodes``: ``CONTROLLER_ID_OFFSET = 3000``), brokers
as our ZooKeeper-mode cluster does, so the two never collide and a broker id reads the same in
both modes.

Layout of the cluster's directory DIR (a fresh cluster each time: a DIR this launcher made
before is cleared; any other non-empty DIR is refused)::

    DIR/kraft-cluster.json            the plan: cluster id, nodes, ports, pids
    DIR/controller-3000.properties    each node's configuration (``broker-1.properties``, ...)
    DIR/controller-3000.log           each node's stdout and stderr (appended across restarts)
    DIR/controller-3000/              each node's log.dirs, formatted (meta.properties) and
                                      holding __cluster_metadata-0 (segments, snapshots)

Start: the cluster id (``kcontrol storage random-uuid``'s format), every node's storage
formatted (``kcontrol storage format``), the controllers started and a leader elected, then
the brokers started, registered and unfenced. Every wait polls a condition with a deadline --
the controllers' admin sockets: ``status`` (role, epoch, leader) and, on the active
controller, ``brokers`` (the committed image's brokers, their epochs, fenced or not) -- and
fails with the node's log tail should a node exit or the deadline pass.

Until ``kcontrol node`` exists, controllers run as ``python -m adapters.raft_node --controller``
voters (``backend == "raft"``: no storage format, no broker role).

Everything started is stopped by ``stop`` (brokers with SIGTERM first: a controlled shutdown
through their heartbeats while the quorum still runs; then the controllers), and, should the
caller forget or crash, from ``atexit``; with ``die_with_parent`` the nodes also get SIGKILL
when the starting thread's process dies.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import importlib
import importlib.util
import io
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from adapters.cluster.kraft_nodes import (
    CLIENT_LISTENER,
    CONTROLLER_LISTENER,
    KRaftNode,
    subprocess_env,
)
from adapters.cluster.launcher import REPO_ROOT, ClusterError, _kill_with_parent, pick_ports
from adapters.ensemble.processes import process_alive, process_args

CONTROLLER_ID_BASE = 3000
BROKER_ID_BASE = 1
MAX_CONTROLLERS = 9
MAX_BROKERS = 9
PLAN_FILE = "kraft-cluster.json"
POLL_S = 0.05
NODE = "node"
RAFT = "raft"

LOCAL_DEFAULTS = {
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "6000",
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "controller.quorum.election.backoff.max.ms": "1000",
    "num.partitions": "1",
    "default.replication.factor": "1",
}
"""A local cluster's settings where they differ from Kafka's defaults: brokers heartbeat every
0.5 s (Kafka: 2 s) so a controlled shutdown takes about a second; the session times out after
6 s (Kafka: 9 s). Quorum timeouts are Kafka's."""

T = TypeVar("T")


class KRaftClusterError(ClusterError):
    """The KRaft cluster cannot be planned, started or watched as asked (the message says
    why, with the log tail of a node that failed)."""


def random_cluster_id() -> str:
    """A cluster id as ``kafka-storage random-uuid`` prints one: 16 random bytes in URL-safe
    base64 without padding (22 characters); never the all-zero or the metadata topic's id
    (``AAAAAAAAAAAAAAAAAAAAAQ``), never starting with ``-`` (a command line would read it as
    an option)."""
    reserved = {bytes(16), bytes(15) + b"\x01"}
    while True:
        raw = os.urandom(16)
        text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        if raw not in reserved and not text.startswith("-"):
            return text


def _cli_commands() -> frozenset[str]:
    """The ``kcontrol`` sub-commands this checkout has (imported late: the CLI imports us)."""
    from adapters.cli import main

    return frozenset(main.commands)


def detect_backend() -> str:
    """``node`` once ``kcontrol node`` exists and has a runtime to run
    (``adapters.kraft_node.runtime``; the command is there before it), else ``raft``
    (controllers only)."""
    if "node" not in _cli_commands():
        return RAFT
    return NODE if importlib.util.find_spec("adapters.kraft_node.runtime") is not None else RAFT


def running_nodes(root: Path) -> list[int]:
    """The pids ``root``'s plan file records that still run that node's command line (its
    properties file, or its metadata directory, in ``/proc/<pid>/cmdline``)."""
    try:
        plan = json.loads((root / PLAN_FILE).read_text())
        nodes = list(plan["nodes"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    out = []
    for n in nodes:
        pid = n.get("pid") if isinstance(n, dict) else None
        if not isinstance(pid, int) or not process_alive(pid):
            continue
        args = process_args(pid)
        marks = (str(n.get("config", "")), str(root / f"{n.get('role')}-{n.get('id')}"))
        if any(m and any(m in a for a in args) for m in marks):
            out.append(pid)
    return out


def has_broker_role() -> bool:
    """Whether ``kcontrol node`` can run a broker: ``adapters.kraft_broker`` is built and has
    the ``start_broker`` the node's runtime calls."""
    if detect_backend() != NODE or importlib.util.find_spec("adapters.kraft_broker") is None:
        return False
    try:
        module = importlib.import_module("adapters.kraft_broker")
    except ImportError:
        return False
    return callable(getattr(module, "start_broker", None))


@dataclass(frozen=True)
class QuorumView:
    """What the controllers agree on: the leader (the active controller) and its epoch."""

    leader: int
    epoch: int
    high_watermark: int


class KRaftCluster:
    """Plan in the constructor (ports, ids, properties); ``up`` formats and starts."""

    def __init__(self, directory: str | os.PathLike[str], controllers: int = 3,
                 brokers: int = 3, *, cluster_id: str | None = None,
                 snapshot_every_records: int = 0, overrides: dict[str, str] | None = None,
                 die_with_parent: bool = True, new_session: bool = False,
                 backend: str | None = None) -> None:
        if not 1 <= controllers <= MAX_CONTROLLERS:
            raise KRaftClusterError(f"--controllers {controllers}: 1 to {MAX_CONTROLLERS}")
        if not 0 <= brokers <= MAX_BROKERS:
            raise KRaftClusterError(f"--brokers {brokers}: 0 to {MAX_BROKERS}")
        if snapshot_every_records < 0:
            raise KRaftClusterError(f"snapshot every {snapshot_every_records} records: "
                                    "not negative")
        self.root = Path(directory).absolute()
        self.backend = backend or detect_backend()
        if self.backend not in (NODE, RAFT):
            raise KRaftClusterError(f"backend {self.backend!r}: {NODE!r} or {RAFT!r}")
        self.cluster_id = cluster_id or random_cluster_id()
        self.snapshot_every_records = snapshot_every_records
        self.overrides = dict(overrides or {})
        self.die_with_parent = die_with_parent
        self.new_session = new_session
        self.env = subprocess_env(REPO_ROOT)
        ports = pick_ports(2 * (controllers + brokers))
        self.controllers: dict[int, KRaftNode] = {}
        self.brokers: dict[int, KRaftNode] = {}
        for i in range(controllers):
            node_id = CONTROLLER_ID_BASE + i
            self.controllers[node_id] = KRaftNode(node_id, "controller", ports[2 * i],
                                                  ports[2 * i + 1], self.root)
        for i in range(brokers):
            node_id = BROKER_ID_BASE + i
            j = 2 * (controllers + i)
            self.brokers[node_id] = KRaftNode(node_id, "broker", ports[j], ports[j + 1],
                                              self.root)
        for n in self.nodes():
            n.props = self.properties(n)
        self.formatted: bool | None = None  # None: not asked; False: no `storage format`
        self._atexit = False

    # ------------------------------------------------------------------ what it is

    def nodes(self) -> list[KRaftNode]:
        return [*self.controllers.values(), *self.brokers.values()]

    def node(self, node_id: int) -> KRaftNode:
        found = self.controllers.get(node_id) or self.brokers.get(node_id)
        if found is None:
            raise KRaftClusterError(f"no node {node_id}: controllers "
                                    f"{sorted(self.controllers)}, brokers {sorted(self.brokers)}")
        return found

    @property
    def quorum_voters(self) -> str:
        """``controller.quorum.voters``: ``id@host:port,...``."""
        return ",".join(f"{n.node_id}@{n.address}" for n in self.controllers.values())

    @property
    def bootstrap_servers(self) -> str:
        """The brokers' client listeners, for ``--bootstrap-server``."""
        return ",".join(n.address for n in self.brokers.values())

    @property
    def bootstrap_controllers(self) -> str:
        """The controllers' listeners, for ``--bootstrap-controller``."""
        return ",".join(n.address for n in self.controllers.values())

    def properties(self, n: KRaftNode) -> dict[str, str]:
        """The node's configuration (Kafka's keys; ours prefixed ``kcontrol.``)."""
        common = {
            "process.roles": n.role,
            "node.id": str(n.node_id),
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": CONTROLLER_LISTENER,
            "log.dirs": str(n.data_dir),
            "metadata.log.dir": str(n.data_dir),
            "kcontrol.admin.port": str(n.admin_port),
        }
        if n.role == "controller":
            role = {
                "listeners": f"{CONTROLLER_LISTENER}://{n.address}",
                "listener.security.protocol.map": f"{CONTROLLER_LISTENER}:PLAINTEXT",
                "kcontrol.metadata.snapshot.every.records": str(self.snapshot_every_records),
            }
        else:
            role = {
                "listeners": f"{CLIENT_LISTENER}://{n.address}",
                "advertised.listeners": f"{CLIENT_LISTENER}://{n.address}",
                "inter.broker.listener.name": CLIENT_LISTENER,
                "listener.security.protocol.map":
                    f"{CONTROLLER_LISTENER}:PLAINTEXT,{CLIENT_LISTENER}:PLAINTEXT",
            }
        return {**common, **role, **LOCAL_DEFAULTS, **self.overrides}

    def plan(self) -> dict[str, Any]:
        return {"cluster_id": self.cluster_id, "backend": self.backend,
                "controller.quorum.voters": self.quorum_voters,
                "bootstrap.servers": self.bootstrap_servers,
                "nodes": [{"id": n.node_id, "role": n.role, "port": n.port,
                           "admin_port": n.admin_port,
                           "pid": n.pid if n.running else None,
                           "config": str(n.config_path), "log": str(n.log_path)}
                          for n in self.nodes()]}

    def _save_plan(self) -> None:
        path = self.root / PLAN_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.plan(), indent=2) + "\n")
        tmp.replace(path)

    # ------------------------------------------------------------------ files and storage

    def prepare(self) -> None:
        """A fresh DIR: cleared if this launcher made it before, refused if it holds anything
        else; then every node's properties file."""
        if self.root.exists():
            if not self.root.is_dir():
                raise KRaftClusterError(f"{self.root} exists and is not a directory")
            if any(self.root.iterdir()):
                if not (self.root / PLAN_FILE).exists():
                    raise KRaftClusterError(
                        f"{self.root} is not empty and holds no {PLAN_FILE}: not a cluster "
                        "this launcher made; choose another --dir")
                running = running_nodes(self.root)
                if running:
                    raise KRaftClusterError(
                        f"{self.root} holds a cluster that still runs (pids "
                        f"{', '.join(map(str, running))}): stop it first, or choose another "
                        "--dir")
                shutil.rmtree(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        for n in self.nodes():
            n.write_config()
        self._save_plan()

    def format_storage(self) -> list[str]:
        """``kcontrol storage format --config F --cluster-id ID`` for every node -- the
        command's own code, run in this process (six interpreters starting at once took
        ~10 s of a loaded 2-core machine); the lines it printed. ``KRaftClusterError`` with
        a node's output if one fails."""
        if self.backend != NODE or "storage" not in _cli_commands():
            self.formatted = False
            return []
        from adapters.cli.storage_cmd import format_cmd

        lines = []
        failed = []
        for n in self.nodes():
            out = io.StringIO()
            args = ["--config", str(n.config_path), "--cluster-id", self.cluster_id]
            code: object = 0
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    format_cmd.main(args, prog_name="kcontrol storage format",
                                    standalone_mode=False)
                except SystemExit as exc:
                    code = exc.code
                except click.ClickException as exc:
                    exc.show()
                    code = exc.exit_code
            text = out.getvalue()
            if code not in (0, None):
                failed.append(f"{n.name}: `kcontrol storage format` exited {code}:\n"
                              f"{text.rstrip()}")
            lines += [f"{n.name}: {line}" for line in text.splitlines() if line.strip()]
        if failed:
            raise KRaftClusterError("formatting storage failed:\n" + "\n".join(failed))
        self.formatted = True
        return lines

    # ------------------------------------------------------------------ processes

    def argv(self, n: KRaftNode) -> list[str]:
        if self.backend == NODE:
            return [sys.executable, "-m", "adapters.cli", "node", "--config",
                    str(n.config_path)]
        p = n.props
        return [sys.executable, "-m", "adapters.raft_node", "--node-id", str(n.node_id),
                "--voters", self.quorum_voters, "--dir", str(n.metadata_dir), "--controller",
                "--admin-port", str(n.admin_port), "--cluster-id", self.cluster_id,
                "--snapshot-every", p["kcontrol.metadata.snapshot.every.records"],
                "--election-timeout-ms", p["controller.quorum.election.timeout.ms"],
                "--fetch-timeout-ms", p["controller.quorum.fetch.timeout.ms"],
                "--election-backoff-max-ms", p["controller.quorum.election.backoff.max.ms"]]

    def start_node(self, node_id: int) -> KRaftNode:
        """Start (or restart, on the same ports and directory) one node."""
        n = self.node(node_id)
        if n.role == "broker" and (self.backend == RAFT or not has_broker_role()):
            raise KRaftClusterError(
                f"{n.name}: this checkout has no broker role (`kcontrol node` with "
                "adapters.kraft_broker): start controllers only")
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        preexec = _kill_with_parent() if self.die_with_parent else None
        n.start(self.argv(n), cwd=str(REPO_ROOT), env=self.env, preexec=preexec,
                new_session=self.new_session)
        self._save_plan()
        return n

    restart = start_node

    def kill(self, node_id: int) -> None:
        """``kill -9`` one node."""
        self.node(node_id).kill()
        self._save_plan()

    def terminate(self, node_id: int, grace: float = 15.0) -> str:
        """SIGTERM one node (a broker: a controlled shutdown), SIGKILL after ``grace``."""
        outcome = self.node(node_id).terminate(grace)
        self._save_plan()
        return outcome

    def up(self, timeout: float = 60.0,
           progress: Callable[[str], None] | None = None) -> QuorumView:
        """Prepare DIR, format, start the controllers, wait for a leader, start the brokers,
        wait until all are registered and unfenced. On failure everything started is stopped
        and ``KRaftClusterError`` says why."""
        say = progress or (lambda _line: None)
        try:
            if (self.root / PLAN_FILE).exists():
                say(f"clearing the previous cluster in {self.root}")
            self.prepare()
            for line in self.format_storage():
                say(line)
            for node_id in self.controllers:
                self.start_node(node_id)
            view = self.wait_leader(timeout)
            say(f"controller {view.leader} leads the quorum (epoch {view.epoch})")
            for node_id in self.brokers:
                self.start_node(node_id)
            if self.brokers:
                epochs = self.wait_brokers(timeout=timeout)
                say("brokers registered and unfenced: " + ", ".join(
                    f"{b} (broker epoch {e})" for b, e in sorted(epochs.items())))
            return self.wait_leader(timeout)
        except BaseException:
            self.stop()
            raise

    # ------------------------------------------------------------------ watching

    def statuses(self) -> dict[int, dict[str, Any]]:
        """Every running controller's admin ``status`` (those that answer)."""
        out = {}
        for node_id, n in self.controllers.items():
            s = n.ask("status")
            if s is not None:
                out[node_id] = s
        return out

    def check_alive(self) -> None:
        """``KRaftClusterError`` with its log tail if a node exited that was not stopped."""
        for n in self.nodes():
            if n.exited_unexpectedly:
                assert n.proc is not None
                raise KRaftClusterError(
                    f"{n.name} exited with status {n.proc.returncode}; the end of "
                    f"{n.log_path}:\n{n.log_tail()}")

    def wait_for(self, what: str, probe: Callable[[], T | None], timeout: float) -> T:
        """Poll ``probe`` until it returns something truthy; ``KRaftClusterError`` naming
        ``what`` (and the nodes' log tails) at the deadline or if a node exits."""
        deadline = time.monotonic() + timeout
        while True:
            got = probe()
            if got:
                return got
            self.check_alive()
            if time.monotonic() >= deadline:
                tails = "\n".join(f"--- {n.name} ({n.log_path})\n{n.log_tail(8)}"
                                  for n in self.nodes() if n.proc is not None)
                raise KRaftClusterError(f"{what}: not within {timeout:g} s\n{tails}")
            time.sleep(POLL_S)

    def quorum(self, exclude: tuple[int, ...] = ()) -> QuorumView | None:
        """The leader every running controller agrees on (same epoch, same leader), if any."""
        st = self.statuses()
        leaders = [i for i, s in st.items() if s.get("role") == "leader" and i not in exclude]
        if len(leaders) != 1:
            return None
        lead = st[leaders[0]]
        for i, n in self.controllers.items():
            if not n.running:
                continue
            s = st.get(i)
            if s is None or s["epoch"] != lead["epoch"] or s["leader_id"] != leaders[0]:
                return None
        return QuorumView(leaders[0], lead["epoch"], lead["high_watermark"])

    def wait_leader(self, timeout: float = 30.0, *, min_epoch: int = 0,
                    exclude: tuple[int, ...] = ()) -> QuorumView:
        def agreed() -> QuorumView | None:
            v = self.quorum(exclude)
            return v if v is not None and v.epoch >= min_epoch else None

        return self.wait_for("a leader every running controller agrees on", agreed, timeout)

    def active_controller(self) -> int | None:
        v = self.quorum()
        return None if v is None else v.leader

    def registered_brokers(self) -> dict[int, dict[str, Any]] | None:
        """The committed image's brokers as the active controller holds them: id ->
        ``{"epoch": ..., "fenced": ...}``; None if no controller is active or answers."""
        v = self.quorum()
        if v is None:
            return None
        got = self.controllers[v.leader].ask("brokers")
        if got is None or not got.get("active"):
            return None
        return {int(b): r for b, r in got["brokers"].items()}

    def wait_brokers(self, ids: tuple[int, ...] | None = None, *, timeout: float = 30.0,
                     fenced: bool = False) -> dict[int, int]:
        """Until every broker of ``ids`` (default: the running ones) is registered and
        unfenced (``fenced=True``: fenced) in the committed image; their broker epochs."""
        want = tuple(ids) if ids is not None else tuple(
            b for b, n in self.brokers.items() if n.running)
        if not want:
            return {}

        def ready() -> dict[int, int] | None:
            got = self.registered_brokers()
            if got is None or any(b not in got or bool(got[b]["fenced"]) != fenced
                                  for b in want):
                return None
            return {b: int(got[b]["epoch"]) for b in want}

        state = "fenced" if fenced else "registered and unfenced"
        return self.wait_for(f"brokers {list(want)} {state}", ready, timeout)

    # ------------------------------------------------------------------ stop

    def stop(self, grace: float = 15.0) -> list[str]:
        """Stop every node this object started: brokers first (SIGTERM: controlled shutdown
        while the quorum runs), then the controllers, the active one last. What happened to
        each, as lines."""
        lines = []
        active = self.active_controller() if any(n.running for n in self.controllers.values()) \
            else None
        order = [*self.brokers.values(),
                 *(n for i, n in self.controllers.items() if i != active),
                 *([self.controllers[active]] if active is not None else [])]
        for n in order:
            if n.proc is None:
                continue
            outcome = n.terminate(grace)
            if outcome != "not running":
                lines.append(f"{n.name} (pid {n.pid}): {outcome}")
        if self._atexit:
            atexit.unregister(self.stop)
            self._atexit = False
        if (self.root / PLAN_FILE).exists():
            self._save_plan()
        return lines

    def __enter__(self) -> KRaftCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
