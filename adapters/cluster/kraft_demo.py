"""The KRaft stage of ``make run`` (``kcontrol cluster demo --mode kraft``, and after the
ZooKeeper stage with ``--mode both``).

A ``KRaftCluster`` of 3 controllers and 3 brokers under ``DIR/kraft``, narrated step by step:

1. a cluster id, every node's storage formatted, the 3-controller quorum started: the leader
   and its epoch (``kcontrol quorum describe``);
2. 3 brokers register and are unfenced: their broker epochs;
3. a stock AdminClient (kafka-python's ``KafkaAdminClient``) creates a topic through a broker;
   its leaders and ISRs read back from the brokers' Metadata, equal to the controllers'
   committed image;
4. kill -9 the active controller: a standby takes over (new leader, new epoch, time taken);
   the brokers stay unfenced; the killed one comes back as a follower;
5. SIGTERM a broker that leads partitions: a controlled shutdown through its heartbeats, its
   leaderships move, and once the other brokers have replayed that, the heartbeat that tells
   it to stop fences it (fenced in the committed image before it exits);
6. the metadata shell (``kcontrol metadata-shell --snapshot``) and ``kcontrol dump-log`` read
   the latest snapshot the active controller wrote;
7. everything stopped.

Every step prints what it observed and waits on what it announces (bounded); an expectation
that does not hold fails the demo (``DemoError``: exit 1, the reason). A step whose piece this
checkout lacks (the broker role, a tool) prints ``skipped: <part> not available`` and the demo
goes on.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from adapters.cluster.demo import DemoError, _raise_stop, _Stop
from adapters.cluster.kraft_launcher import (
    KRaftCluster,
    KRaftClusterError,
    _cli_commands,
    has_broker_role,
)
from adapters.cluster.kraft_nodes import HOST
from adapters.cluster.launcher import REPO_ROOT
from adapters.network.client import WireClient
from adapters.network.codec import CodecError

TOPIC = "kraft-demo"
PARTITIONS = 3
REPLICATION_FACTOR = 2
SNAPSHOT_EVERY = 2
"""Committed records between two snapshots: small, so that the few records of step 5 (the
leaderships moved, the broker fenced) make one that holds the topic of step 3."""
STEP_TIMEOUT_S = 30.0
CREATE_TOPICS_KEY = 19
T = TypeVar("T")


class KRaftDemo:
    def __init__(self, directory: Path, console: Console) -> None:
        self.directory = directory
        self.console = console
        self.cluster: KRaftCluster | None = None
        self.t0 = time.monotonic()
        self.commands = _cli_commands()
        self.skipped: list[str] = []
        self.topic_offset: int | None = None  # committed offset once the topic was created
        self.broker_epochs: dict[int, int] = {}  # as registered in step 2

    # ------------------------------------------------------------------ narration

    def say(self, text: str) -> None:
        self.console.print(text)

    def step(self, number: int, title: str) -> None:
        elapsed = time.monotonic() - self.t0
        self.console.rule(f"[bold]KRaft step {number}: {title}[/]  [dim]({elapsed:.1f} s)[/]")

    def skip(self, part: str, why: str = "not available") -> None:
        self.skipped.append(part)
        self.console.print(f"[yellow]skipped: {escape(part)} {escape(why)}[/]")

    def kcontrol(self, *args: str) -> str:
        """Run a real ``kcontrol`` command, show it and its output; ``DemoError`` if it
        fails."""
        self.console.print(f"[bold cyan]$ kcontrol {escape(shlex.join(args))}[/]")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        try:
            done = subprocess.run([sys.executable, "-m", "adapters.cli", *args], env=env,
                                  capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise DemoError(f"`kcontrol {shlex.join(args)}` took over {STEP_TIMEOUT_S:g} s") \
                from exc
        out = (done.stdout + done.stderr).rstrip()
        self.console.out(out or "(no output)", highlight=False)
        if done.returncode != 0:
            raise DemoError(f"`kcontrol {shlex.join(args)}` exited {done.returncode}")
        return done.stdout

    def wait(self, what: str, probe: Callable[[], T | None],
             timeout: float = STEP_TIMEOUT_S) -> tuple[T, float]:
        """Poll ``probe`` until it returns a value; (the value, seconds taken). ``DemoError``
        naming ``what`` at the deadline, or if a node exits on its own."""
        assert self.cluster is not None
        self.console.print(f"[dim]waiting for {what} ...[/]")
        t = time.monotonic()
        deadline = t + timeout
        while True:
            got = probe()
            if got is not None and got is not False:
                taken = time.monotonic() - t
                self.console.print(f"[dim]... done in {taken:.1f} s[/]")
                return got, taken
            try:
                self.cluster.check_alive()
            except KRaftClusterError as exc:
                raise DemoError(str(exc)) from None
            if time.monotonic() >= deadline:
                raise DemoError(f"timed out after {timeout:g} s waiting for {what}")
            time.sleep(0.05)

    # ------------------------------------------------------------------ reading the cluster

    def image_topics(self) -> dict[str, Any] | None:
        """The active controller's committed topics (admin op ``topics``)."""
        c = self.cluster
        assert c is not None
        active = c.active_controller()
        got = None if active is None else c.controllers[active].ask("topics")
        return None if got is None or not got.get("active") else got["topics"]

    def partitions(self) -> dict[int, dict[str, Any]] | None:
        topics = self.image_topics()
        if topics is None or TOPIC not in topics:
            return None
        return {int(p): v for p, v in topics[TOPIC]["partitions"].items()}

    def broker_metadata(self, broker_id: int) -> dict[int, tuple[int, list[int], list[int]]]:
        """The topic's partitions as broker ``broker_id``'s Metadata answer names them:
        index -> (leader, replicas, ISR)."""
        c = self.cluster
        assert c is not None
        with WireClient(HOST, c.brokers[broker_id].port, timeout=3.0) as wc:
            md = wc.metadata([TOPIC], version=8)
        out = {}
        for t in md["topics"]:
            if t["name"] != TOPIC or t["error_code"] != 0:
                continue
            for p in t["partitions"]:
                out[p["partition_index"]] = (p["leader_id"], sorted(p["replica_nodes"]),
                                             sorted(p["isr_nodes"]))
        return out

    def brokers_agree(self) -> dict[int, dict[str, Any]] | None:
        """The image's partitions once every partition has a leader and every running
        broker's Metadata names the same leaders, replicas and ISRs."""
        c = self.cluster
        assert c is not None
        parts = self.partitions()
        if parts is None or len(parts) != PARTITIONS or any(
                p["leader"] < 0 for p in parts.values()):
            return None
        want = {i: (p["leader"], sorted(p["replicas"]), sorted(p["isr"]))
                for i, p in parts.items()}
        for b, n in c.brokers.items():
            if not n.running:
                continue
            try:
                if self.broker_metadata(b) != want:
                    return None
            except (OSError, CodecError, ConnectionError):
                return None
        return parts

    def partition_table(self, parts: dict[int, dict[str, Any]], title: str) -> Table:
        table = Table(title=title)
        for column in ("partition", "leader", "leader epoch", "replicas", "ISR",
                       "partition epoch"):
            table.add_column(column, no_wrap=True)
        for i, p in sorted(parts.items()):
            table.add_row(f"{TOPIC}-{i}", str(p["leader"]), str(p["leader_epoch"]),
                          ",".join(map(str, p["replicas"])), ",".join(map(str, p["isr"])),
                          str(p["partition_epoch"]))
        return table

    def client_listener_serves_create_topics(self, broker_id: int) -> bool:
        """Whether the broker's client listener answers ApiVersions naming CreateTopics."""
        c = self.cluster
        assert c is not None
        try:
            with WireClient(HOST, c.brokers[broker_id].port, timeout=3.0) as wc:
                got = wc.request(18, 0, {})
        except (OSError, CodecError, ConnectionError, ValueError, KeyError):
            return False
        return any(k.get("api_key") == CREATE_TOPICS_KEY for k in got.get("api_keys", []))

    # ------------------------------------------------------------------ the steps

    def run(self) -> None:
        self.console.rule("[bold]KRaft mode: no ZooKeeper -- a quorum of controllers keeps the "
                          "metadata log, brokers follow it[/]")
        self.start_quorum()
        brokers = self.start_brokers()
        if brokers:
            topic = self.create_topic()
        else:
            self.step(3, f"a stock AdminClient creates topic {TOPIC!r} through a broker")
            self.skip("the topic step:", "it needs the brokers of step 2")
            topic = False
        self.fail_over()
        if topic:
            self.controlled_shutdown()
        else:
            self.step(5, "a broker shuts down through its heartbeats")
            self.skip("the controlled shutdown step:", "it needs the topic of step 3")
        self.read_snapshot()

    def start_quorum(self) -> None:
        self.step(1, "format storage, start a 3-controller quorum")
        cluster_id = None
        if "storage" in self.commands:
            cluster_id = self.kcontrol("storage", "random-uuid").strip()
        c = KRaftCluster(self.directory, 3, 0 if self._no_broker_role() else 3,
                         cluster_id=cluster_id, snapshot_every_records=SNAPSHOT_EVERY,
                         die_with_parent=True, new_session=True)
        self.cluster = c
        c.prepare()
        self.say(f"cluster id {c.cluster_id}; controllers {', '.join(map(str, c.controllers))} "
                 f"(controller.quorum.voters={c.quorum_voters}); configs "
                 f"{c.root}/controller-<id>.properties, logs {c.root}/<role>-<id>.log")
        lines = c.format_storage()
        if c.formatted:
            for line in lines:
                self.say(f"  {escape(line)}")
            self.say(f"every node's storage formatted (`kcontrol storage format --config "
                     f"{c.root}/<role>-<id>.properties --cluster-id {c.cluster_id}`)")
        else:
            self.skip("storage format: `kcontrol storage format`")
        for node_id in c.controllers:
            c.start_node(node_id)
        view, taken = self.wait("a leader all three controllers agree on",
                                lambda: c.quorum())
        self.say(f"controller {view.leader} is the active controller (leader of the "
                 f"metadata quorum), epoch {view.epoch}, elected {taken:.1f} s after start")
        if "quorum" in self.commands:
            self.kcontrol("quorum", "describe", "--bootstrap-controller",
                          c.bootstrap_controllers, "--status")
        else:
            self.skip("kcontrol quorum describe:")

    def _no_broker_role(self) -> bool:
        return not has_broker_role()

    def start_brokers(self) -> bool:
        c = self.cluster
        assert c is not None
        self.step(2, "3 brokers register and are unfenced")
        if not c.brokers:
            self.skip("the broker role: `kcontrol node` with process.roles=broker "
                      "(adapters.kraft_broker)")
            return False
        for node_id in c.brokers:
            c.start_node(node_id)
        epochs, taken = self.wait("brokers 1-3 registered and unfenced in the committed image",
                                  lambda: self._brokers_unfenced(tuple(c.brokers)))
        self.broker_epochs = dict(epochs)
        for b, e in sorted(epochs.items()):
            self.say(f"broker {b}: registered, broker epoch {e}, unfenced "
                     f"(listener {c.brokers[b].address})")
        self.say(f"bootstrap servers: {c.bootstrap_servers}")
        return True

    def _brokers_unfenced(self, ids: tuple[int, ...]) -> dict[int, int] | None:
        c = self.cluster
        assert c is not None
        got = c.registered_brokers()
        if got is None or any(b not in got or got[b]["fenced"] for b in ids):
            return None
        return {b: int(got[b]["epoch"]) for b in ids}

    def create_topic(self) -> bool:
        c = self.cluster
        assert c is not None
        self.step(3, f"a stock AdminClient creates topic {TOPIC!r} through broker 1")
        if not self.client_listener_serves_create_topics(1):
            self.skip("the topic step: broker 1's client listener with CreateTopics")
            return False
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        self.say(f"kafka-python: KafkaAdminClient(bootstrap_servers='{c.brokers[1].address}')"
                 f".create_topics([NewTopic('{TOPIC}', {PARTITIONS}, {REPLICATION_FACTOR})])")
        admin = KafkaAdminClient(bootstrap_servers=c.brokers[1].address,
                                 client_id="kcontrol-demo", request_timeout_ms=15_000)
        try:
            answer = admin.create_topics([NewTopic(TOPIC, PARTITIONS, REPLICATION_FACTOR)],
                                         timeout_ms=15_000)
            for t in answer.get("topics", []):
                self.say(f"CreateTopics answer: topic {t.get('name')!r} error code "
                         f"{t.get('error_code')}" + (f", topic id {t['topic_id']}"
                                                      if t.get("topic_id") else ""))
            parts, _ = self.wait("the topic's leaders in the committed image and in every "
                                 "broker's Metadata", self.brokers_agree)
            described = admin.describe_topics([TOPIC])
            active = c.active_controller()
            got = None if active is None else c.controllers[active].ask("topics")
            self.topic_offset = None if got is None else int(got["committed_offset"])
        except Exception as exc:  # noqa: BLE001 -- a client failure fails the step, named
            if isinstance(exc, DemoError):
                raise
            raise DemoError(f"kafka-python: {type(exc).__name__}: {exc}") from None
        finally:
            admin.close()
        self.console.print(self.partition_table(parts, "the controllers' committed image"))
        got = {p["partition_index"]: (p["leader_id"], sorted(p["isr_nodes"]))
               for t in described for p in t["partitions"]}
        want = {i: (p["leader"], sorted(p["isr"])) for i, p in parts.items()}
        if got != want:
            raise DemoError(f"the AdminClient's describe_topics {got} differs from the "
                            f"committed image {want}")
        named = ", ".join(f"{TOPIC}-{i}: leader {leader}, ISR {isr}"
                          for i, (leader, isr) in sorted(got.items()))
        self.say(f"kafka-python's describe_topics (Metadata from broker 1) names the same "
                 f"leaders and ISRs: {named}")
        return True

    def fail_over(self) -> None:
        c = self.cluster
        assert c is not None
        before = c.quorum()
        if before is None:
            raise DemoError("no active controller to kill")
        self.step(4, f"kill -9 controller {before.leader}, the active controller")
        t = time.monotonic()
        c.kill(before.leader)
        after, _ = self.wait("a standby to take over (a new leader in a later epoch)",
                             lambda: c.quorum(exclude=(before.leader,)))
        taken = time.monotonic() - t
        if after.leader == before.leader or after.epoch <= before.epoch:
            raise DemoError(f"no new leader: {before} -> {after}")
        self.say(f"active controller: {before.leader} -> {after.leader}, epoch {before.epoch} "
                 f"-> {after.epoch}, {taken:.1f} s after the kill (fetch timeout "
                 f"{c.controllers[after.leader].props['controller.quorum.fetch.timeout.ms']}"
                 f" ms, then an election)")
        running = tuple(b for b, n in c.brokers.items() if n.running)
        if running:
            epochs, _ = self.wait("the brokers heartbeating to the new controller, unfenced",
                                  lambda: self._brokers_unfenced(running))
            kept = {b: e for b, e in epochs.items() if self.broker_epochs.get(b) == e}
            self.say("brokers still unfenced: " + ", ".join(
                f"{b} (epoch {e}, {'the same' if b in kept else 'registered again'})"
                for b, e in sorted(epochs.items())))
        c.restart(before.leader)
        back, _ = self.wait(f"controller {before.leader} back as a follower",
                            lambda: self._rejoined(before.leader, after.leader))
        self.say(f"controller {before.leader} restarted from its log: follower of "
                 f"{back.leader} in epoch {back.epoch}")
        if "quorum" in self.commands:
            self.kcontrol("quorum", "describe", "--bootstrap-controller",
                          c.bootstrap_controllers, "--replication")

    def _rejoined(self, node_id: int, leader: int) -> Any:
        c = self.cluster
        assert c is not None
        v = c.quorum()
        if v is None or v.leader != leader or node_id not in c.statuses():
            return None
        return v

    def controlled_shutdown(self) -> None:
        c = self.cluster
        assert c is not None
        parts = self.partitions() or {}
        leaders = {p["leader"] for p in parts.values()}
        victim = next((b for b in sorted(c.brokers) if b in leaders), None)
        if victim is None:
            raise DemoError(f"no broker leads a partition of {TOPIC}: {parts}")
        led = sorted(i for i, p in parts.items() if p["leader"] == victim)
        self.step(5, f"SIGTERM broker {victim}: a controlled shutdown through its heartbeats")
        self.say(f"broker {victim} leads {', '.join(f'{TOPIC}-{i}' for i in led)}; on SIGTERM "
                 f"it asks to shut down in its heartbeats, the controller moves its "
                 f"leaderships away, then (once the other brokers have replayed that) fences "
                 f"it and tells it to stop")
        t = time.monotonic()
        outcome = c.terminate(victim, grace=STEP_TIMEOUT_S)
        stopped_in = time.monotonic() - t
        if outcome != "stopped":
            raise DemoError(f"broker {victim} did not exit on SIGTERM within "
                            f"{STEP_TIMEOUT_S:g} s ({outcome}); its log:\n"
                            f"{c.brokers[victim].log_tail()}")
        after = self.partitions()
        if after is None or any(p["leader"] in (victim, -1) for p in after.values()):
            raise DemoError(f"broker {victim} exited {stopped_in:.1f} s after SIGTERM while "
                            f"the committed image still had it lead (or left leaderless) a "
                            f"partition: {after} -- not a controlled shutdown")
        self.say(f"broker {victim} exited {stopped_in:.1f} s after SIGTERM, once the "
                 f"controller had moved its leaderships (committed before it was told to stop)")
        for i in led:
            self.say(f"leader of {TOPIC}-{i}: broker {victim} -> broker {after[i]['leader']} "
                     f"(leader epoch {parts[i]['leader_epoch']} -> {after[i]['leader_epoch']})")
        shrunk = sorted(i for i, p in after.items() if victim in parts[i]["isr"]
                        and victim not in p["isr"])
        if shrunk:
            self.say(f"broker {victim} left the ISR of "
                     f"{', '.join(f'{TOPIC}-{i}' for i in shrunk)}")

        def fenced() -> bool:
            reg = c.registered_brokers()
            return reg is not None and (victim not in reg or bool(reg[victim]["fenced"]))

        at_exit = fenced()
        self.wait(f"broker {victim} fenced in the committed image", fenced)
        session = c.brokers[victim].props['broker.session.timeout.ms']
        how = ("already when it exited: the heartbeat answered should_shut_down fenced it" if
               at_exit else f"by its lease, broker.session.timeout.ms {session}")
        self.say(f"broker {victim} fenced {time.monotonic() - t:.1f} s after SIGTERM ({how})")
        after = self.partitions() or after
        self.console.print(self.partition_table(after, f"after broker {victim}'s shutdown"))

    def read_snapshot(self) -> None:
        c = self.cluster
        assert c is not None
        self.step(6, "the metadata shell reads the latest snapshot")
        if not c.brokers:
            self.skip("the snapshot step:", "no broker ran, so no metadata records to snapshot")
            return
        active = c.active_controller()
        if active is None:
            raise DemoError("no active controller")
        node = c.controllers[active]
        after = -1 if self.topic_offset is None else self.topic_offset

        def covering() -> list[Path] | None:
            snaps = node.snapshots()
            return snaps if snaps and _end_offset(snaps[-1]) > after else None

        snaps, _ = self.wait(f"a snapshot by controller {active} past offset {after} (one "
                             f"every {SNAPSHOT_EVERY} committed records)", covering)
        latest = snaps[-1]
        self.say(f"controller {active}'s snapshots: {', '.join(p.name for p in snaps)}")
        if "metadata-shell" in self.commands:
            self.kcontrol("metadata-shell", "--snapshot", str(latest), "ls",
                          "/image/topics/byName")
        else:
            self.skip("kcontrol metadata-shell:")
        if "dump-log" in self.commands:
            out = self.kcontrol("dump-log", "--cluster-metadata-decoder",
                                "--skip-record-metadata", str(latest))
            if self.topic_offset is not None and TOPIC not in out:
                raise DemoError(f"the snapshot {latest.name} does not name topic {TOPIC}")

    def stop(self) -> None:
        if self.cluster is None:
            return
        self.console.rule("[bold]Stopping the KRaft cluster[/]")
        for line in self.cluster.stop():
            self.say(line)


def _end_offset(snapshot: Path) -> int:
    """A snapshot file's end offset (``<end offset>-<epoch>.checkpoint``)."""
    return int(snapshot.name.split("-", 1)[0])


def run_kraft_demo(directory: Path, console: Console | None = None) -> int:
    """The KRaft stage; the exit code (0: every step that ran happened as announced)."""
    console = console or Console(width=max(Console().width, 120))
    demo = KRaftDemo(directory, console)
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, _raise_stop) for s in handled}
    code = 0
    try:
        demo.run()
    except (KeyboardInterrupt, _Stop) as exc:
        console.print(f"[yellow]{type(exc).__name__ if isinstance(exc, KeyboardInterrupt) else exc}"
                      f": stopping[/]")
        code = 130
    except (DemoError, KRaftClusterError) as exc:
        console.print(f"[bold red]KRaft demo failed:[/] {escape(str(exc))}")
        code = 1
    finally:
        for s in (*handled, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        try:
            demo.stop()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    elapsed = time.monotonic() - demo.t0
    if code == 0:
        skipped = f" ({len(demo.skipped)} part(s) skipped: not available yet)" \
            if demo.skipped else ""
        console.print(f"[bold green]KRaft demo finished in {elapsed:.1f} s: every step that "
                      f"ran happened as announced{skipped}, and everything it started is "
                      f"stopped.[/]")
    return code

