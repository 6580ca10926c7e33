"""The Raft catalogue as the search calls it: the first violation of a state (its state
invariants) or of a step (its transition invariants), as ``(invariant, detail)``."""

from __future__ import annotations

from invariants.raft import CATALOGUE, RaftView
from invariants.registry import QUIESCENT, STATE, TRANSITION


def check_state(view: RaftView) -> tuple[str, str] | None:
    for inv in CATALOGUE:
        if inv.kind == STATE or (inv.kind == QUIESCENT and not view.pending):
            for v in inv.check(view):
                return v.invariant, v.detail
    return None


def check_edge(before: RaftView, after: RaftView) -> tuple[str, str] | None:
    for inv in CATALOGUE:
        if inv.kind == TRANSITION:
            for v in inv.check(before, after):
                return v.invariant, v.detail
    return None
