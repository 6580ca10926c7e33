"""Which invariants' premises a run of an object world met: an invariant whose premise never
held was checked only vacuously, so a pass says nothing about it (``docs/model-checking.md``).

The ZooKeeper-mode checker counts premises in its ``--coverage`` (``model_check.coverage``);
this is the same question for a world kind (KRaft, Raft): ``watching(kind, catalogue)`` gives
a kind whose checks first note, in a set, the name of every invariant they evaluate whose
premise holds -- a state invariant on every state, a quiescent one on a state where nothing
is pending, a transition invariant on every step -- then check as the kind does. The checks'
verdicts are the kind's own; only the set is added. The setup's states (``WorldKind.start``
checks them with the kind's own checks) are not counted: what it names is a lower bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from invariants.registry import QUIESCENT, STATE, TRANSITION, Invariant
from model_check.objects.kind import Found, WorldKind


def watching(kind: WorldKind, catalogue: Sequence[Invariant]) -> tuple[WorldKind, set[str]]:
    """``kind`` with checks that add to the returned set every invariant whose premise held."""
    held: set[str] = set()
    on_state = [i for i in catalogue if i.kind in (STATE, QUIESCENT)]
    on_step = [i for i in catalogue if i.kind == TRANSITION]

    def check_state(view: Any) -> Found | None:
        for inv in on_state:
            if inv.name not in held and (inv.kind == STATE or not view.pending) \
                    and inv.premise(view):
                held.add(inv.name)
        return kind.check_state(view)

    def check_edge(before: Any, after: Any) -> Found | None:
        for inv in on_step:
            if inv.name not in held and inv.premise(before, after):
                held.add(inv.name)
        return kind.check_edge(before, after)

    return dataclasses.replace(kind, check_state=check_state, check_edge=check_edge), held


def never_held(catalogue: Sequence[Invariant], held: set[str]) -> list[str]:
    """The invariants of ``catalogue`` whose premise never held, by name."""
    return [inv.name for inv in catalogue if inv.name not in held]
