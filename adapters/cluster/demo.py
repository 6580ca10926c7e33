"""The narrated demo behind ``make run`` (``kcontrol cluster demo``).

A 3-server ZooKeeper ensemble and 3 brokers on free loopback ports, then, with the real
``kcontrol`` admin commands and ``kcontrol topics describe`` after each step:

1. create a topic (3 partitions, replication factor 2);
2. kill -9 the controller's broker: a new controller, new leaders, smaller ISRs;
3. bring it back: it registers with a new epoch, the leaders take it back into their ISR;
   a preferred-replica election hands leadership back;
4. move a partition (reassignment) onto the broker that did not hold it;
5. delete the topic;
6. the live audit (``kcontrol audit``) checks the invariants.

Each step waits on what it announces (bounded; a timeout fails the demo with the reason), by
reading ZooKeeper and every broker's Metadata answer. Everything started is stopped at the
end, on failure and on Ctrl-C/SIGTERM (brokers with a controlled shutdown, then the
ensemble); should the demo itself be killed, its children die with it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from kazoo.client import KazooClient
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from adapters.admin.connection import connect
from adapters.cluster.launcher import HOST, REPO_ROOT, Cluster, ClusterError, ClusterStatus
from adapters.network.client import WireClient
from adapters.network.codec import CodecError
from adapters.zookeeper.audit import ZkState, read_zk_state
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth

TOPIC = "demo"
STEP_TIMEOUT_S = 60.0
T = TypeVar("T")


class DemoError(RuntimeError):
    """A step did not happen as announced."""


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def status_table(st: ClusterStatus) -> Table:
    """One row per broker: its process, role, broker epoch, ports (all on 127.0.0.1) and what
    its own Metadata answer says (the brokers it knows / the controller it names)."""
    table = Table(title=f"kcontrol cluster on {HOST} (ZooKeeper {st.zookeeper})")
    for column in ("broker", "pid", "role", "broker epoch", "CONTROLLER", "PLAINTEXT",
                   "metrics", "its metadata"):
        table.add_column(column, no_wrap=True)
    for row in st.brokers:
        role = "[bold green]controller[/]" if row.id == st.controller else "broker"
        if not row.alive:
            role = "[red]not running[/]"
        ports = {e.split("://")[0]: e.rpartition(":")[2] for e in row.endpoints.split(",")}
        sees = "-" if row.sees is None else (
            f"brokers {','.join(map(str, row.sees))}, controller "
            f"{'-' if row.sees_controller is None else row.sees_controller}")
        table.add_row(str(row.id), "-" if row.pid is None else str(row.pid), role,
                      "-" if row.epoch is None else str(row.epoch),
                      ports.get("CONTROLLER", "-"), ports.get("PLAINTEXT", "-"),
                      str(row.metrics_port), sees)
    return table


class Demo:
    def __init__(self, directory: Path, console: Console, session_timeout_ms: int = 4000,
                 zookeeper_auth: ZkAuth | None = None, log_config: Path | None = None) -> None:
        self.directory = directory
        self.log_config = log_config
        self.console = console
        self.session_timeout_ms = session_timeout_ms
        self.zookeeper_auth = zookeeper_auth
        self.cluster: Cluster | None = None
        self.zk: KazooClient | None = None
        self.t0 = time.monotonic()

    # ------------------------------------------------------------------ narration

    def say(self, text: str) -> None:
        self.console.print(text)

    def step(self, number: int, title: str) -> None:
        elapsed = time.monotonic() - self.t0
        self.console.rule(f"[bold]Step {number}: {title}[/]  [dim]({elapsed:.1f} s)[/]")

    def kcontrol(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a real ``kcontrol`` command against the cluster and show it with its output."""
        assert self.cluster is not None
        self.console.print(f"[bold cyan]$ kcontrol {escape(shlex.join(args))}[/]")
        env = dict(os.environ, KCONTROL_ZOOKEEPER=self.cluster.zookeeper)
        env.pop(AUTH_ENV, None)  # the cluster's identity (through the environment: off `ps`)
        if self.zookeeper_auth is not None:
            env[AUTH_ENV] = self.zookeeper_auth.credential
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        try:
            done = subprocess.run([sys.executable, "-m", "adapters.cli", *args], env=env,
                                  capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise DemoError(f"`kcontrol {shlex.join(args)}` took over {STEP_TIMEOUT_S:g} s") \
                from exc
        out = (done.stdout + done.stderr).rstrip()
        if out:
            self.console.out(out, highlight=False)  # as the command prints it: no wrapping
        else:
            self.console.print("[dim](no output)[/]")
        if check and done.returncode != 0:
            raise DemoError(f"`kcontrol {shlex.join(args)}` exited {done.returncode}")
        return done

    def describe(self) -> None:
        self.kcontrol("topics", "describe")

    # ------------------------------------------------------------------ waiting

    def wait(self, what: str, probe: Callable[[], T | None],
             timeout: float = STEP_TIMEOUT_S) -> T:
        """Poll ``probe`` until it returns a value; ``DemoError`` naming ``what`` at the
        deadline."""
        self.console.print(f"[dim]waiting for {what} ...[/]")
        t = time.monotonic()
        deadline = t + timeout
        while True:
            got = probe()
            if got is not None and got is not False:
                self.console.print(f"[dim]... done in {time.monotonic() - t:.1f} s[/]")
                return got
            if time.monotonic() >= deadline:
                raise DemoError(f"timed out after {timeout:g} s waiting for {what}")
            time.sleep(0.1)

    def state(self) -> ZkState:
        assert self.zk is not None
        self.zk.sync("/")
        return read_zk_state(self.zk, notifications=False)

    def metadata(self) -> dict[int, dict[str, Any]]:
        """Every running broker's Metadata answer (brokers that do not answer are left out)."""
        assert self.cluster is not None
        out = {}
        for b in self.cluster.brokers.values():
            if not self.cluster.running(b.id):
                continue
            try:
                with WireClient(HOST, b.data_port, timeout=2.0) as wc:
                    out[b.id] = wc.metadata(version=8)
            except (OSError, CodecError):
                continue
        return out

    def brokers_agree(self, st: ZkState) -> bool:
        """Every running broker's metadata names the leaders and ISRs ZooKeeper holds."""
        want = {(t, p): (s.leader_and_isr.leader, sorted(s.leader_and_isr.isr))
                for (t, p), s in st.partition_states.items()}
        mds = self.metadata()
        assert self.cluster is not None
        if len(mds) != len(self.cluster.expected()):
            return False
        for md in mds.values():
            got = {(t["name"], p["partition_index"]): (p["leader_id"], sorted(p["isr_nodes"]))
                   for t in md["topics"] for p in t["partitions"]}
            if got != want:
                return False
        return True

    def settled(self, st: ZkState) -> bool:
        """Every partition of the topic has a leader and a full ISR; brokers agree."""
        assignment = st.topics.get(TOPIC)
        if assignment is None:
            return False
        for p, replicas in assignment.partitions:
            s = st.partition_states.get((TOPIC, p))
            if s is None or s.leader_and_isr.leader < 0 \
                    or sorted(s.leader_and_isr.isr) != sorted(replicas):
                return False
        return self.brokers_agree(st)

    def leaders(self, st: ZkState) -> dict[int, int]:
        return {p: s.leader_and_isr.leader for (t, p), s in sorted(st.partition_states.items())
                if t == TOPIC}

    # ------------------------------------------------------------------ the demo

    def run(self) -> None:
        self.step(0, "a 3-server ZooKeeper ensemble and 3 brokers")
        self.cluster = Cluster.create(self.directory, 3,
                                      session_timeout_ms=self.session_timeout_ms,
                                      die_with_parent=True, zookeeper_auth=self.zookeeper_auth,
                                      log_config=self.log_config)
        self.say(f"starting ZooKeeper and brokers 1-3 in {self.directory} "
                 f"(logs: {self.directory}/broker-<id>.log, state changes: "
                 f"{self.directory}/broker-<id>/state-change.log) ...")
        st = self.cluster.up(timeout=90.0)
        self.console.print(status_table(st))
        self.say(f"Broker {st.controller} won the election for /controller. Every broker has "
                 f"a CONTROLLER listener (control plane: controller requests only) and a "
                 f"PLAINTEXT one (clients and ControlledShutdown).")
        self.say(f"The admin commands below read KCONTROL_ZOOKEEPER={self.cluster.zookeeper}")
        if self.zookeeper_auth is not None:
            self.say(f"and {AUTH_ENV} (user {self.zookeeper_auth.user!r}): the znodes are "
                     f"world-readable, writable by that identity only.")
        with connect(self.cluster.zookeeper, 15.0, self.zookeeper_auth) as self.zk:
            self.create_topic()
            killed = self.kill_controller()
            self.bring_back(killed)
            self.reassign()
            self.delete_topic()
            self.audit()

    def create_topic(self) -> None:
        self.step(1, f"create topic {TOPIC!r}: 3 partitions, replication factor 2")
        self.kcontrol("topics", "create", "--topic", TOPIC, "--partitions", "3",
                      "--replication-factor", "2")
        self.wait("a leader and a full ISR for every partition, in every broker's metadata",
                  lambda: self.settled(self.state()))
        self.describe()

    def kill_controller(self) -> int:
        assert self.cluster is not None
        before = self.state()
        victim = before.controller.broker_id if before.controller else None
        if victim is None:
            raise DemoError("no controller to kill")
        self.step(2, f"kill -9 broker {victim}, the controller")
        old_leaders = self.leaders(before)
        self.cluster.kill_broker(victim, signal.SIGKILL)
        self.cluster.wait_stopped(victim, 10.0)
        self.cluster.forget(victim)
        self.say(f"broker {victim} is gone; ZooKeeper notices when its sessions expire "
                 f"(session timeout {self.session_timeout_ms} ms): /controller and "
                 f"/brokers/ids/{victim} vanish.")

        def moved() -> ZkState | None:
            st = self.state()
            if st.controller is None or st.controller.broker_id == victim:
                return None
            if victim in st.broker_ids:
                return None
            if any(s.leader_and_isr.leader in (victim, -1) or victim in s.leader_and_isr.isr
                   for (t, _), s in st.partition_states.items() if t == TOPIC):
                return None
            return st if self.brokers_agree(st) else None

        st = self.wait("a new controller, new leaders, and the brokers' metadata", moved)
        assert st.controller is not None
        self.say(f"controller: broker {victim} -> broker {st.controller.broker_id} "
                 f"(controller epoch {before.controller_epoch} -> {st.controller_epoch})")
        new_leaders = self.leaders(st)
        for p, old in old_leaders.items():
            if old != new_leaders.get(p):
                self.say(f"leader of {TOPIC}-{p}: broker {old} -> broker {new_leaders.get(p)}")
        self.describe()
        return victim

    def bring_back(self, victim: int) -> None:
        assert self.cluster is not None
        self.step(3, f"bring broker {victim} back")
        self.cluster.start_broker(victim)
        self.cluster.wait_ready(STEP_TIMEOUT_S)

        def rejoined() -> ZkState | None:
            s = self.state()
            return s if self.settled(s) else None

        st = self.wait(f"broker {victim} back in every ISR (its leaders take it back)",
                       rejoined)
        self.say(f"broker {victim} registered again with a new broker epoch "
                 f"{st.broker_epochs.get(victim)}.")
        self.describe()
        self.say("Leadership stays where it moved; a preferred-replica election hands it "
                 "back to the first replica of each partition:")
        self.kcontrol("elect-preferred", "--all")

        def preferred() -> bool:
            s = self.state()
            assignment = s.topics.get(TOPIC)
            if assignment is None or s.preferred_election is not None:
                return False
            return all(self.leaders(s).get(p) == replicas[0]
                       for p, replicas in assignment.partitions) and self.settled(s)

        self.wait("every partition led by its preferred replica", preferred)
        self.describe()

    def reassign(self) -> None:
        assert self.cluster is not None
        st = self.state()
        replicas = dict(st.topics[TOPIC].partitions)[0]
        outsider = next(b for b in sorted(self.cluster.brokers) if b not in replicas)
        target = [outsider, replicas[1]]
        self.step(4, f"move {TOPIC}-0 from brokers {list(replicas)} to {target}")
        plan = self.directory / "reassign.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": TOPIC, "partition": 0, "replicas": target}]}) + "\n")
        self.kcontrol("reassign", "--reassignment-json-file", str(plan), "--execute")

        def done() -> bool:
            s = self.state()
            if s.reassignment is not None or TOPIC not in s.topics:
                return False
            return list(dict(s.topics[TOPIC].partitions)[0]) == target and self.settled(s)

        self.wait(f"{TOPIC}-0 on brokers {target}, its ISR full", done)
        self.kcontrol("reassign", "--reassignment-json-file", str(plan), "--verify")
        self.describe()

    def delete_topic(self) -> None:
        self.step(5, f"delete topic {TOPIC!r}")
        self.kcontrol("topics", "delete", "--topic", TOPIC)

        def gone() -> bool:
            s = self.state()
            if TOPIC in s.topic_names or TOPIC in s.topics_to_delete or s.partition_states:
                return False
            return all(not md["topics"] for md in self.metadata().values())

        self.wait("the topic gone from ZooKeeper and from every broker's metadata", gone)
        self.kcontrol("topics", "list")
        self.describe()

    def audit(self) -> None:
        self.step(6, "the live audit: invariants over ZooKeeper's state")
        self.kcontrol("audit")

    # ------------------------------------------------------------------ stop

    def stop(self) -> None:
        if self.cluster is None:
            return
        self.console.rule("[bold]Stopping the cluster[/]")
        for line in self.cluster.down():
            self.say(line)


def run_demo(directory: Path, console: Console | None = None,
             session_timeout_ms: int = 4000, zookeeper_auth: ZkAuth | None = None,
             log_config: Path | None = None) -> int:
    """The whole demo; returns the exit code (0: every step happened as announced).
    ``log_config``: every broker's ``--log-config``."""
    console = console or Console(width=max(Console().width, 120))
    demo = Demo(directory, console, session_timeout_ms, zookeeper_auth, log_config)
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, _raise_stop) for s in handled}
    code = 0
    try:
        demo.run()
    except (KeyboardInterrupt, _Stop) as exc:
        console.print(f"[yellow]{type(exc).__name__ if isinstance(exc, KeyboardInterrupt) else exc}"
                      f": stopping[/]")
        code = 130
    except (DemoError, ClusterError) as exc:
        console.print(f"[bold red]demo failed:[/] {escape(str(exc))}")
        code = 1
    finally:
        for s in (*handled, signal.SIGINT):  # a second Ctrl-C must not cut the clean-up short
            signal.signal(s, signal.SIG_IGN)
        try:
            demo.stop()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    elapsed = time.monotonic() - demo.t0
    if code == 0:
        console.print(f"[bold green]demo finished in {elapsed:.1f} s: every step happened as "
                      f"announced, and everything it started is stopped.[/]")
    return code
