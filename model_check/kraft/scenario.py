"""KRaft scenarios: ``specs/scenarios/kraft/*.toml`` -> ``KRaftScenario``::

    description = "..."
    brokers = 3
    controllers = 2          # quorum controllers (one active)
    log = "memory"           # "memory": one in-memory, totally ordered log (``world``);
                             # "raft": each controller a Raft voter (``raft_world``)
    snapshot_every = 0       # raft: committed records between a controller's snapshots
    depth = 14
    max_states = 500000
    init = "running"         # brokers started, registered, unfenced, topics created first
    controlled_shutdown = true  # the brokers' controlled.shutdown.enable: when false, SIGTERM
                             # (the controlled-shutdown op) to a RUNNING broker stops it at once

    [[topics]]
    name = "t"
    assignment = [[1, 2, 3]] # or: partitions = 1, replication_factor = 3

    [faults]                 # budgets on one path
    ticks = 3                # time passes by one unit (leases are 2 units)
    broker_crash = 1
    broker_restart = 1
    message_loss = 1         # a request or an answer between a broker and the controller
    failover = 1             # the active controller loses the log's leadership
    isr_changes = 2          # a leader's follower catches up (or a dead one is dropped)
    controller_crash = 1     # raft: a voter's process ends (its log stays)
    controller_restart = 1   # raft: ... and starts again from its log

    [[admin]]                # each at most once, in any order
    op = "reassign"          # create-topic, delete-topic, add-partitions (partitions = the
    topic = "t"              # new count), reassign, cancel-reassignment, list-reassignments,
                             # elect-preferred, elect-unclean, controlled-shutdown (SIGTERM
                             # to broker B), unregister (broker B)
    partition = 0
    replicas = [2, 3]

Unknown keys are errors naming the key and the file."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KRAFT_SCENARIO_DIR = Path(__file__).resolve().parents[2] / "specs" / "scenarios" / "kraft"

FAULTS = ("ticks", "broker_crash", "broker_restart", "message_loss", "failover", "isr_changes",
          "controller_crash", "controller_restart")
LOGS = ("memory", "raft")
ADMIN_OPS = ("create-topic", "delete-topic", "add-partitions", "reassign", "cancel-reassignment",
             "list-reassignments", "elect-preferred", "elect-unclean", "controlled-shutdown",
             "unregister")
_TOP = {"description", "brokers", "controllers", "depth", "max_states", "init", "topics",
        "faults", "admin", "log", "snapshot_every", "controlled_shutdown"}
_TOPIC = {"name", "partitions", "replication_factor", "assignment"}
_ADMIN = {"op", "topic", "partition", "replicas", "broker", "partitions",
          "replication_factor"}


class KRaftScenarioError(ValueError):
    pass


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = 1
    replication_factor: int = 1
    assignment: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class AdminSpec:
    op: str
    topic: str = ""
    partition: int = 0
    replicas: tuple[int, ...] | None = None
    broker: int = 0
    partitions: int = 1
    replication_factor: int = 1

    def describe(self) -> str:
        if self.op == "list-reassignments":
            return self.op
        if self.op == "add-partitions":
            return f"add-partitions {self.topic} to {self.partitions}"
        if self.op in ("controlled-shutdown", "unregister"):
            return f"{self.op} broker {self.broker}"
        if self.op == "reassign":
            return f"reassign {self.topic}-{self.partition} to {list(self.replicas or ())}"
        if self.op.startswith("elect") or self.op == "cancel-reassignment":
            return f"{self.op} {self.topic}-{self.partition}"
        return f"{self.op} {self.topic}"


@dataclass(frozen=True)
class KRaftScenario:
    name: str
    description: str = ""
    brokers: int = 3
    controllers: int = 2
    depth: int = 12
    max_states: int = 500_000
    init: str = "running"
    topics: tuple[TopicSpec, ...] = ()
    faults: dict[str, int] = field(default_factory=dict)
    admin: tuple[AdminSpec, ...] = ()
    log: str = "memory"
    snapshot_every: int = 0
    controlled_shutdown: bool = True


def _unknown(where: str, keys: set[str], allowed: set[str], path: Path) -> None:
    bad = sorted(keys - allowed)
    if bad:
        raise KRaftScenarioError(f"{path}: unknown key(s) {bad} in {where}")


def names() -> list[str]:
    return sorted(p.stem for p in KRAFT_SCENARIO_DIR.glob("*.toml"))


def load_kraft(name_or_path: str) -> KRaftScenario:
    path = Path(name_or_path)
    if not path.suffix:
        path = KRAFT_SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise KRaftScenarioError(f"no KRaft scenario {name_or_path!r} (have: {names()})")
    data = tomllib.loads(path.read_text())
    _unknown("the scenario", set(data), _TOP, path)
    topics = []
    for t in data.get("topics", []):
        _unknown("[[topics]]", set(t), _TOPIC, path)
        topics.append(TopicSpec(t["name"], t.get("partitions", 1), t.get("replication_factor", 1),
                                tuple(tuple(a) for a in t.get("assignment", ()))))
    faults = dict(data.get("faults", {}))
    _unknown("[faults]", set(faults), set(FAULTS), path)
    admin = []
    for a in data.get("admin", []):
        _unknown("[[admin]]", set(a), _ADMIN, path)
        if a.get("op") not in ADMIN_OPS:
            raise KRaftScenarioError(f"{path}: admin op {a.get('op')!r} is not one of "
                                     f"{list(ADMIN_OPS)}")
        replicas = a.get("replicas")
        admin.append(AdminSpec(a["op"], a.get("topic", ""), a.get("partition", 0),
                               None if replicas is None else tuple(replicas), a.get("broker", 0),
                               a.get("partitions", 1), a.get("replication_factor", 1)))
    init = data.get("init", "running")
    if init not in ("running", "empty"):
        raise KRaftScenarioError(f"{path}: init must be 'running' or 'empty', not {init!r}")
    log = data.get("log", "memory")
    if log not in LOGS:
        raise KRaftScenarioError(f"{path}: log must be one of {list(LOGS)}, not {log!r}")
    crash = {"controller_crash", "controller_restart"} & set(faults)
    if log != "raft" and crash:
        raise KRaftScenarioError(f"{path}: {sorted(crash)} need log = \"raft\"")
    controlled = data.get("controlled_shutdown", True)
    if not isinstance(controlled, bool):
        raise KRaftScenarioError(f"{path}: controlled_shutdown must be true or false, "
                                 f"not {controlled!r}")
    return KRaftScenario(path.stem, data.get("description", ""), data.get("brokers", 3),
                         data.get("controllers", 2), data.get("depth", 12),
                         data.get("max_states", 500_000), init, tuple(topics), faults,
                         tuple(admin), log, data.get("snapshot_every", 0), controlled)
