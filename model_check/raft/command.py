"""``kcontrol check`` for Raft scenarios (``specs/scenarios/raft/``): the object-world command
(``model_check.objects.command``) over the Raft kind -- the same options and table as the
other checkers. Not for Raft: ``--symmetry``, ``--graph``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from model_check.objects import command
from model_check.raft.kind import RAFT
from model_check.raft.scenario import is_raft

__all__ = ["is_raft", "run"]


def run(console: Console, scenario: str, mutant: str | None, depth: int | None,
        max_states: int | None, random_: bool, steps: int, seed: int, json_out: Path | None,
        trace_out: Path, coverage_on: bool) -> int:
    """Run the check; the exit code (0 pass, 1 violation)."""
    return command.run(console, RAFT, scenario, mutant, depth, max_states, random_, steps,
                       seed, json_out, trace_out, coverage_on)
