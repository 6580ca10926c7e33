"""The Raft world as a world kind of the object-world checker (``model_check.objects``):
``RaftWorld`` on ``specs/scenarios/raft/`` scenarios, viewed as a ``RaftView`` and checked
with the catalogue of ``invariants/raft``. The start is the fresh world (every voter
started from an empty disk): no setup actions."""

from __future__ import annotations

from typing import Any

from model_check.objects.kind import Reached, Start, WorldKind
from model_check.raft import coverage
from model_check.raft.checks import check_edge, check_state
from model_check.raft.mutants import patched
from model_check.raft.scenario import RaftScenario, load_raft, names
from model_check.raft.setup import setup
from model_check.raft.view import view_of
from model_check.raft.world import RAction, RaftWorld

FAULTS = frozenset({"crash", "restart", "lose", "duplicate", "timer", "resign"})
"""The actions random walks weight as faults (a timer firing is a timeout or a resend)."""


def start(scenario: RaftScenario, reached: Reached | None = None) -> Start:
    world, actions, found = setup(scenario, check_state, check_edge, view_of, reached)
    return Start(world.snapshot(), actions, found)


def _title(sc: RaftScenario) -> str:
    return f"Raft: {sc.voters} voters, budgets " + ", ".join(
        f"{k}={v}" for k, v in sorted(sc.budgets.items()) if v)


def _watch(world: RaftWorld, reached: Reached | None) -> None:
    world.reached = reached


def _describe(action: RAction, scenario: Any) -> str:
    return action.describe(scenario)


def _is_fault(action: RAction) -> bool:
    return action.kind in FAULTS


RAFT = WorldKind(
    name="raft", load=load_raft, names=names, title=_title, start=start,
    restore=RaftWorld.restore, watch=_watch, view_of=view_of, check_state=check_state,
    check_edge=check_edge, describe=_describe, is_fault=_is_fault, patched=patched,
    coverage_lines=coverage.lines, coverage_unreached=coverage.unreached)
