"""Raft scenarios: ``specs/scenarios/raft/*.toml`` -> ``RaftScenario``::

    description = "..."
    voters = 3               # node ids 1..voters, every one a voter
    depth = 14               # the breadth-first bound (after the start)
    max_states = 500000      # a safety bound on distinct states
    max_in_flight = 8        # messages in the network at once; a send beyond it is dropped
    max_batches_per_fetch = 64  # the voters' RaftConfig: batches in one Fetch answer
    init = "empty"           # or "leader": voter 1 elected and settled before the search
    records = 0              # with init = "leader": records appended and settled too
    setup = ["timer fetch fires on voter 2", "settle"]   # then these steps (setup.py)

    [budgets]                # how often each action may happen on one path
    timeouts = 1             # an election or fetch timer fires (a voter stands for election)
    resends = 0              # a per-destination request timer fires (the request is resent)
    parked = 0               # a leader's parked (long-poll) fetch is answered at its deadline
    appends = 1              # the state machine hands the leader one record
    snapshots = 0            # a voter snapshots its applied prefix
    resigns = 0              # the leader resigns (graceful shutdown)
    crashes = 0              # a voter loses its process, its unflushed tail and its timers
    restarts = 0             # a crashed voter starts again from what it had made durable
    message_loss = 0         # a message in flight is lost
    duplicates = 0           # a message in flight is delivered twice

Unknown keys are errors naming the key and the file. The world's other actions (deliver a
message, flush a voter's log) are not budgeted: the depth bounds them."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

RAFT_SCENARIO_DIR = Path(__file__).resolve().parents[2] / "specs" / "scenarios" / "raft"

BUDGETS = ("timeouts", "resends", "parked", "appends", "snapshots", "resigns", "crashes", "restarts",
           "message_loss", "duplicates")
_TOP = {"description", "voters", "depth", "max_states", "max_in_flight",
        "max_batches_per_fetch", "init", "records", "setup", "budgets"}
INITS = ("empty", "leader")


class RaftScenarioError(ValueError):
    pass


@dataclass(frozen=True)
class RaftScenario:
    name: str
    description: str = ""
    voters: int = 3
    depth: int = 12
    max_states: int = 500_000
    max_in_flight: int = 8
    budgets: dict[str, int] = field(default_factory=dict)
    max_batches_per_fetch: int = 64
    init: str = "empty"
    records: int = 0
    setup: tuple[str, ...] = ()

    @property
    def node_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self.voters + 1))


def names() -> list[str]:
    return sorted(p.stem for p in RAFT_SCENARIO_DIR.glob("*.toml"))


def is_raft(scenario: str) -> bool:
    """A shipped Raft scenario's name, or a path inside ``specs/scenarios/raft/``."""
    path = Path(scenario)
    if not path.suffix:
        return scenario in names()
    return path.resolve().parent == RAFT_SCENARIO_DIR.resolve()


def _count(path: Path, key: str, value: object, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise RaftScenarioError(f"{path}: {key} must be an integer >= {low}, not {value!r}")
    return value


def load_raft(name_or_path: str) -> RaftScenario:
    path = Path(name_or_path)
    if not path.suffix:
        path = RAFT_SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise RaftScenarioError(f"no Raft scenario {name_or_path!r} (have: {names()})")
    data = tomllib.loads(path.read_text())
    bad = sorted(set(data) - _TOP)
    if bad:
        raise RaftScenarioError(f"{path}: unknown key(s) {bad} in the scenario")
    budgets = dict(data.get("budgets", {}))
    bad = sorted(set(budgets) - set(BUDGETS))
    if bad:
        raise RaftScenarioError(f"{path}: unknown key(s) {bad} in [budgets] "
                                f"(have: {list(BUDGETS)})")
    for k, v in budgets.items():
        _count(path, f"budgets.{k}", v, 0)
    init = data.get("init", "empty")
    if init not in INITS:
        raise RaftScenarioError(f"{path}: init must be one of {list(INITS)}, not {init!r}")
    records = _count(path, "records", data.get("records", 0), 0)
    if records and init != "leader":
        raise RaftScenarioError(f"{path}: records = {records} needs init = \"leader\"")
    return RaftScenario(
        path.stem, str(data.get("description", "")),
        _count(path, "voters", data.get("voters", 3), 1),
        _count(path, "depth", data.get("depth", 12), 0),
        _count(path, "max_states", data.get("max_states", 500_000), 1),
        _count(path, "max_in_flight", data.get("max_in_flight", 8), 1), budgets,
        _count(path, "max_batches_per_fetch", data.get("max_batches_per_fetch", 64), 1),
        init, records, _steps(path, data.get("setup", [])))


def _steps(path: Path, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise RaftScenarioError(f"{path}: setup must be a list of steps (strings)")
    return tuple(value)
