"""Checked scenarios: ``specs/scenarios/*.toml`` -> a ``Scenario`` -> a ``WorldConfig``.

A scenario says which cluster the checker explores and how far::

    description = "..."
    brokers = 3
    depth = 12              # BFS depth bound (explored steps after the setup)
    max_states = 2000000    # distinct-state guard
    symmetry = false        # reduce by broker-id symmetry (model_check/symmetry.py; --symmetry)
    init = "running"        # "running": brokers started and topics created, run to quiescence
                            # by the world's fixed policy (the setup); "empty": explore from nothing

    [world]                 # WorldConfig knobs
    auto_leader_rebalance = false

    [[topics]]              # created during the setup ("running") or at start ("empty")
    name = "t"
    partitions = 2
    replication_factor = 3  # or: assignment = [[1, 2, 3], [2, 3, 1]] (one list per partition)

    [faults]                # budgets: how often each fault may happen on one path
    broker_crash = 2
    controller_session_expiry = 1
    zookeeper_disconnects = 1

Fault keys: ``broker_crash``, ``broker_restart``, ``broker_session_expiry``,
``controller_session_expiry`` (a GC pause: the session expires while the client thinks it is
connected), ``connection_drops`` (a controller-broker connection), ``isr_changes`` (a leader
shrinks or expands its ISR), and ``zookeeper_disconnects``: the ZooKeeper connection of the
active controller's (or a candidate's with a write in flight) or of a registered broker's
session is lost while the session lives on. Then the world may later *reconnect* it (a
progress step: CONNECTED, the same session) or the ensemble may *expire* it; that expiry is
free of the ``*_session_expiry`` budgets, being the other outcome of the same fault. While
disconnected (``model_check.world.executor``): the controller pauses once it handled
CONNECTING, kazoo calls every watcher (every watched path is read again after CONNECTED),
a write is reported fenced (applied or not), a broker's writes fail with ConnectionLoss. A
broker that is down may lose its way to ZooKeeper too: it then starts in STARTING and reads
and registers (``broker-io`` steps) once reconnected.

    [[admin]]               # admin actions the search may perform, each at most once
    op = "reassign"
    partition = "t-0"
    replicas = [2, 3]

Admin ops: ``create-topic``, ``delete-topic``, ``add-partitions``, ``reassign``,
``preferred-election``, ``controlled-shutdown`` (SIGTERM: a controlled shutdown) and ``stop``
(a second SIGTERM: the broker stops at once, without one); ``docs/model-checking.md`` says
what each fault means and what the world leaves out.

Unknown keys are errors naming the key and the file (``ScenarioError``): a typo must not
silently check a smaller world. Loading is pure: the same file gives the same ``Scenario``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from model_check.world import actions as A
from model_check.world.config import (
    AddPartitions,
    AdminOp,
    ControlledShutdownOf,
    CreateTopic,
    DeleteTopic,
    PreferredElection,
    Reassign,
    WorldConfig,
)

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "specs" / "scenarios"

FAULT_KEYS = {
    "broker_crash": A.CRASH,
    "broker_restart": A.RESTART,
    "broker_session_expiry": A.EXPIRE_BROKER,
    "controller_session_expiry": A.EXPIRE_CONTROLLER,
    "connection_drops": A.DROP,
    "isr_changes": A.ISR_CHANGE,
    "zookeeper_disconnects": A.ZK_DISCONNECT,
}
UNSUPPORTED_FAULTS = {
    "message_loss": "the world loses no controller request for good, as the live channel "
                    "manager resends until answered; a connection drop loses answers and "
                    "controlled-shutdown messages (use connection_drops)",
}
WORLD_KEYS = ("auto_leader_rebalance", "unclean_leader_election",
              "controlled_shutdown_max_retries", "channel_bound", "queue_bound")
TOP_KEYS = ("description", "brokers", "depth", "max_states", "symmetry", "init",
            "random_depth", "world", "topics", "faults", "admin")
INITS = ("running", "empty")
MAX_BROKERS = 9


class ScenarioError(ValueError):
    """A scenario that cannot be checked: the message names the file and the key."""


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str  # the file's path ("<text>" when loaded from a string)
    text: str  # the TOML source (replay files embed it)
    description: str
    brokers: int
    depth: int
    max_states: int
    symmetry: bool
    init: str
    random_depth: int
    topics: tuple[CreateTopic, ...]
    admin: tuple[AdminOp, ...]
    faults: tuple[tuple[str, int], ...]
    world: tuple[tuple[str, object], ...] = field(default=())

    def world_config(self) -> WorldConfig:
        """Topics come first in ``admin`` (the setup creates them), then the explored ops."""
        return WorldConfig(brokers=self.brokers, faults=self.faults,
                           admin=self.topics + self.admin, **dict(self.world))

    @property
    def setup_admin(self) -> int:
        """How many leading admin ops of ``world_config()`` the setup performs."""
        return len(self.topics)


def resolve(name_or_path: str) -> Path:
    """A path to a ``.toml`` file, or the name of a shipped scenario."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise ScenarioError(f"{name_or_path}: no such scenario file")
        return p
    shipped = SCENARIO_DIR / f"{name_or_path}.toml"
    if shipped.is_file():
        return shipped
    names = ", ".join(shipped_names()) or "none"
    raise ScenarioError(f"{name_or_path}: neither a scenario file nor a shipped scenario "
                        f"(shipped: {names})")


def shipped_names() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def load(name_or_path: str) -> Scenario:
    path = resolve(name_or_path)
    return loads(path.read_text(), source=str(path), name=path.stem)


def loads(text: str, source: str = "<text>", name: str = "scenario") -> Scenario:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{source}: not valid TOML: {e}") from None
    return _Parser(source).scenario(doc, text, name)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, msg: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {msg}")

    def keys(self, table: dict, allowed: tuple[str, ...] | set[str], where: str) -> None:
        for k in table:
            if k not in allowed:
                raise self.fail(f"unknown key {k!r} in {where} "
                                f"(allowed: {', '.join(sorted(allowed))})")

    def int_(self, table: dict, key: str, where: str, default: int | None = None,
             lo: int = 0, hi: int | None = None) -> int:
        if key not in table:
            if default is None:
                raise self.fail(f"missing key {key!r} in {where}")
            return default
        v = table[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
            bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise self.fail(f"{where}.{key} must be an integer {bound}, not {v!r}")
        return v

    def str_(self, table: dict, key: str, where: str) -> str:
        v = table.get(key)
        if not isinstance(v, str) or not v:
            raise self.fail(f"{where}.{key} must be a non-empty string, not {v!r}")
        return v

    def scenario(self, doc: dict, text: str, name: str) -> Scenario:
        self.keys(doc, TOP_KEYS, "the scenario")
        brokers = self.int_(doc, "brokers", "the scenario", lo=1, hi=MAX_BROKERS)
        init = doc.get("init", "running")
        if init not in INITS:
            raise self.fail(f"init must be one of {', '.join(INITS)}, not {init!r}")
        symmetry = doc.get("symmetry", False)
        if not isinstance(symmetry, bool):
            raise self.fail(f"symmetry must be true or false, not {symmetry!r}")
        topics = tuple(self.topic(t, i, brokers) for i, t in enumerate(self.tables(doc, "topics")))
        names = [t.topic for t in topics]
        if len(set(names)) != len(names):
            raise self.fail(f"topics: a topic name is given twice: {names}")
        admin = tuple(self.admin(a, i, brokers) for i, a in enumerate(self.tables(doc, "admin")))
        return Scenario(
            name=name, source=self.source, text=text,
            description=str(doc.get("description", "")),
            brokers=brokers,
            depth=self.int_(doc, "depth", "the scenario", lo=0),
            max_states=self.int_(doc, "max_states", "the scenario", default=1_000_000, lo=1),
            symmetry=symmetry, init=init,
            random_depth=self.int_(doc, "random_depth", "the scenario", default=200, lo=1),
            topics=topics, admin=admin, faults=self.faults(doc.get("faults", {})),
            world=self.world(doc.get("world", {})),
        )

    def tables(self, doc: dict, key: str) -> list[dict]:
        v = doc.get(key, [])
        if not isinstance(v, list) or not all(isinstance(t, dict) for t in v):
            raise self.fail(f"{key} must be an array of tables ([[{key}]])")
        return v

    def table(self, v: object, key: str) -> dict:
        if not isinstance(v, dict):
            raise self.fail(f"{key} must be a table ([{key}])")
        return v

    def faults(self, v: object) -> tuple[tuple[str, int], ...]:
        t = self.table(v, "faults")
        self.keys(t, set(FAULT_KEYS) | set(UNSUPPORTED_FAULTS), "[faults]")
        out = []
        for key, kind in FAULT_KEYS.items():
            n = self.int_(t, key, "faults", default=0)
            if n:
                out.append((kind, n))
        for key, why in UNSUPPORTED_FAULTS.items():
            if self.int_(t, key, "faults", default=0):
                raise self.fail(f"faults.{key} is not supported: {why}")
        return tuple(sorted(out))

    def world(self, v: object) -> tuple[tuple[str, object], ...]:
        t = self.table(v, "world")
        self.keys(t, WORLD_KEYS, "[world]")
        out: list[tuple[str, object]] = []
        for k in WORLD_KEYS:
            if k not in t:
                continue
            if k in ("auto_leader_rebalance", "unclean_leader_election"):
                if not isinstance(t[k], bool):
                    raise self.fail(f"world.{k} must be true or false, not {t[k]!r}")
                out.append((k, t[k]))
            else:
                out.append((k, self.int_(t, k, "world", lo=1)))
        return tuple(out)

    def replicas(self, v: object, where: str, brokers: int) -> tuple[int, ...]:
        if (not isinstance(v, list) or not v
                or not all(isinstance(r, int) and 1 <= r <= brokers for r in v)
                or len(set(v)) != len(v)):
            raise self.fail(f"{where} must be a list of distinct broker ids in 1..{brokers}, "
                            f"not {v!r}")
        return tuple(v)

    def assignment(self, t: dict, where: str, brokers: int, first: int = 0
                   ) -> tuple[tuple[int, tuple[int, ...]], ...]:
        if "assignment" in t:
            if "partitions" in t or "replication_factor" in t:
                raise self.fail(f"{where}: give either assignment or "
                                f"partitions/replication_factor, not both")
            rows = t["assignment"]
            if not isinstance(rows, list) or not rows:
                raise self.fail(f"{where}.assignment must be a list of replica lists")
            return tuple((first + p, self.replicas(r, f"{where}.assignment[{p}]", brokers))
                         for p, r in enumerate(rows))
        n = self.int_(t, "partitions", where, lo=1)
        rf = self.int_(t, "replication_factor", where, lo=1, hi=brokers)
        return tuple((p, tuple((p + i) % brokers + 1 for i in range(rf)))
                     for p in range(first, first + n))

    def topic(self, t: dict, i: int, brokers: int) -> CreateTopic:
        where = f"topics[{i}]"
        self.keys(t, ("name", "partitions", "replication_factor", "assignment"), where)
        return CreateTopic(self.str_(t, "name", where), self.assignment(t, where, brokers))

    def tp(self, v: object, where: str) -> tuple[str, int]:
        if isinstance(v, str) and "-" in v:
            topic, _, p = v.rpartition("-")
            if topic and p.isdigit():
                return topic, int(p)
        raise self.fail(f"{where} must name a partition as \"topic-N\", not {v!r}")

    def admin(self, a: dict, i: int, brokers: int) -> AdminOp:  # noqa: C901 -- a flat dispatch
        where = f"admin[{i}]"
        op = a.get("op")
        if op == "create-topic":
            self.keys(a, ("op", "name", "partitions", "replication_factor", "assignment"), where)
            return CreateTopic(self.str_(a, "name", where), self.assignment(a, where, brokers))
        if op == "delete-topic":
            self.keys(a, ("op", "topic"), where)
            return DeleteTopic(self.str_(a, "topic", where))
        if op == "add-partitions":
            self.keys(a, ("op", "topic", "first", "partitions", "replication_factor",
                          "assignment"), where)
            first = self.int_(a, "first", where, lo=0)
            return AddPartitions(self.str_(a, "topic", where),
                                 self.assignment(a, where, brokers, first))
        if op == "reassign":
            self.keys(a, ("op", "partition", "replicas"), where)
            return Reassign(((self.tp(a.get("partition"), f"{where}.partition"),
                              self.replicas(a.get("replicas"), f"{where}.replicas", brokers)),))
        if op == "preferred-election":
            self.keys(a, ("op", "partitions"), where)
            parts = a.get("partitions")
            if not isinstance(parts, list) or not parts:
                raise self.fail(f"{where}.partitions must be a list of \"topic-N\"")
            return PreferredElection(tuple(self.tp(p, f"{where}.partitions") for p in parts))
        if op in ("controlled-shutdown", "stop"):
            self.keys(a, ("op", "broker"), where)
            return ControlledShutdownOf(self.int_(a, "broker", where, lo=1, hi=brokers),
                                        controlled=op == "controlled-shutdown")
        ops = "create-topic, delete-topic, add-partitions, reassign, preferred-election, " \
              "controlled-shutdown, stop"
        raise self.fail(f"{where}.op must be one of {ops}, not {op!r}")
