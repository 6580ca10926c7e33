"""``kcontrol check`` for KRaft scenarios (``specs/scenarios/kraft/``): the object-world
command (``model_check.objects.command``) over the KRaft kind -- the same options and table
as ZooKeeper mode, ``--engine spark`` included (``model_check.objects.spark``). Not for
KRaft: ``--symmetry``, ``--graph``, ``--partition-by`` and ``--driver-limit`` (states are
placed by key; every level is a Spark job)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from model_check.kraft.kind import KRAFT
from model_check.kraft.scenario import KRAFT_SCENARIO_DIR, names
from model_check.objects import command


def is_kraft(scenario: str) -> bool:
    """A shipped KRaft scenario's name, or a path inside ``specs/scenarios/kraft/``."""
    path = Path(scenario)
    if not path.suffix:
        return scenario in names()
    return path.resolve().parent == KRAFT_SCENARIO_DIR.resolve()


def run(console: Console, scenario: str, mutant: str | None, depth: int | None,
        max_states: int | None, random_: bool, steps: int, seed: int, json_out: Path | None,
        trace_out: Path, coverage_on: bool, engine: str = "local", master: str | None = None,
        partitions: int | None = None) -> int:
    """Run the check; the exit code (0 pass, 1 violation)."""
    return command.run(console, KRAFT, scenario, mutant, depth, max_states, random_, steps,
                       seed, json_out, trace_out, coverage_on, engine, master, partitions)
