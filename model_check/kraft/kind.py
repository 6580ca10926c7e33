"""The KRaft world as a world kind of the object-world checker (``model_check.objects``):
``KRaftWorld`` on ``specs/scenarios/kraft/`` scenarios, viewed as a ``KRaftView`` and checked
with the catalogue of ``invariants/kraft``."""

from __future__ import annotations

from typing import Any

from invariants.kraft import CATALOGUE, KRaftView
from invariants.registry import QUIESCENT, STATE, TRANSITION
from model_check.kraft import coverage
from model_check.kraft.mutants import patched
from model_check.kraft.scenario import KRaftScenario, load_kraft, names
from model_check.kraft.setup import setup
from model_check.kraft.view import view_of
from model_check.kraft.world import KAction, KRaftWorld
from model_check.objects.kind import Found, Reached, Start, WorldKind

FAULTS = frozenset({"tick", "failover", "lose-request", "lose-answer", "crash", "restart",
                    "isr-change", "crash-controller", "restart-controller"})
"""The actions random walks weight as faults."""


def check_state(view: KRaftView) -> Found | None:
    for inv in CATALOGUE:
        if inv.kind == STATE or (inv.kind == QUIESCENT and not view.pending):
            for v in inv.check(view):
                return v.invariant, v.detail
    return None


def check_edge(before: KRaftView, after: KRaftView) -> Found | None:
    for inv in CATALOGUE:
        if inv.kind == TRANSITION:
            for v in inv.check(before, after):
                return v.invariant, v.detail
    return None


def start(scenario: KRaftScenario, reached: Reached | None = None) -> Start:
    world, actions, found = setup(scenario, check_state, check_edge, view_of, reached)
    return Start(world.snapshot(), actions, found)


def _title(sc: KRaftScenario) -> str:
    log = "as Raft voters" if sc.log == "raft" else "on an in-memory log"
    return f"KRaft: {sc.brokers} brokers, {sc.controllers} controllers {log}"


def _watch(world: KRaftWorld, reached: Reached | None) -> None:
    world.reached = reached


def _describe(action: KAction, scenario: Any) -> str:
    return action.describe(scenario)


def _is_fault(action: KAction) -> bool:
    return action.kind in FAULTS


KRAFT = WorldKind(
    name="kraft", load=load_kraft, names=names, title=_title, start=start,
    restore=KRaftWorld.restore, watch=_watch, view_of=view_of, check_state=check_state,
    check_edge=check_edge, describe=_describe, is_fault=_is_fault, patched=patched,
    coverage_lines=coverage.lines, coverage_unreached=coverage.unreached)
