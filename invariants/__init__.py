"""Named safety predicates over a global snapshot (controllers, brokers, ZooKeeper data).

Pure: no I/O, no clocks, no randomness; imports only ``fsm`` and the standard library.
Every invariant reads a ``GlobalView`` (``invariants.view``), so the model checker, the
tests and a live audit share them. Three kinds:

* ``state``: holds in every reachable state -- ``check_state(view)``;
* ``transition``: holds for every step -- ``check_transition(before, after)``;
* ``quiescent``: holds once nothing is in flight -- ``check_quiescent(view)`` (call it only
  when ``not view.pending``; a view with ``pending`` True is not checked).

``CATALOGUE`` lists them all; ``specs/invariants.md`` is ``catalogue_markdown()``
(regenerate with ``python -m invariants > specs/invariants.md``).
"""

from __future__ import annotations

from invariants import brokers, controller, epochs, partitions, quiescent
from invariants.registry import KINDS, QUIESCENT, STATE, TRANSITION, Invariant, Violation
from invariants.view import GlobalView

__all__ = [
    "CATALOGUE",
    "GlobalView",
    "Invariant",
    "Violation",
    "by_name",
    "catalogue_markdown",
    "check_quiescent",
    "check_state",
    "check_transition",
]

CATALOGUE: tuple[Invariant, ...] = (
    controller.one_active_controller_per_epoch,
    controller.active_controller_epoch_not_ahead_of_zookeeper,
    epochs.controller_epoch_never_decreases,
    epochs.controller_epochs_not_ahead_of_zookeeper,
    epochs.leader_epoch_never_decreases,
    epochs.partition_state_version_never_decreases,
    partitions.leader_in_isr,
    partitions.isr_within_assigned_replicas,
    partitions.isr_never_empty,
    partitions.at_most_one_committer,
    brokers.no_request_applied_across_epochs,
    brokers.newly_applied_request_is_current,
    quiescent.metadata_matches_zookeeper,
    quiescent.no_offline_partition_with_live_isr_replica,
    quiescent.finished_reassignment_has_target_replicas,
    quiescent.deleted_topic_leaves_no_replica,
    quiescent.replicas_follow_zookeeper,
)

_BY_NAME = {inv.name: inv for inv in CATALOGUE}
assert len(_BY_NAME) == len(CATALOGUE), "two invariants share a name"
_STATE = tuple(i for i in CATALOGUE if i.kind == STATE)
_TRANSITION = tuple(i for i in CATALOGUE if i.kind == TRANSITION)
_QUIESCENT = tuple(i for i in CATALOGUE if i.kind == QUIESCENT)


def by_name(name: str) -> Invariant:
    """The invariant called ``name`` (KeyError naming the known ones otherwise)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no invariant {name!r}; known: {', '.join(_BY_NAME)}") from None


def check_state(view: GlobalView) -> list[Violation]:
    """Every state invariant on ``view``."""
    out: list[Violation] = []
    for inv in _STATE:
        out += inv.check(view)
    return out


def check_transition(before: GlobalView, after: GlobalView) -> list[Violation]:
    """Every transition invariant on the step ``before -> after``."""
    out: list[Violation] = []
    for inv in _TRANSITION:
        out += inv.check(before, after)
    return out


def check_quiescent(view: GlobalView) -> list[Violation]:
    """Every quiescent invariant on ``view``; call only when ``not view.pending`` (a view
    whose ``pending`` is True is skipped: nothing is reported)."""
    if view.pending:
        return []
    out: list[Violation] = []
    for inv in _QUIESCENT:
        out += inv.check(view)
    return out


def catalogue_markdown() -> str:
    """``specs/invariants.md``: generated from the invariants' docstrings."""
    lines = [
        "# Invariant catalogue",
        "",
        "<!-- Generated from the docstrings in invariants/ -- do not edit by hand.",
        "     Regenerate: python -m invariants > specs/invariants.md -->",
        "",
        "Every invariant is a named predicate over a `GlobalView` (`invariants/view.py`):",
        "ZooKeeper data, controller candidates, brokers. Kinds: **state** (every reachable",
        "state), **transition** (every step, before -> after), **quiescent** (once nothing",
        "is in flight). Parts of the view a source cannot see are skipped.",
        "",
        "| invariant | kind | source |",
        "| --- | --- | --- |",
    ]
    for inv in CATALOGUE:
        lines.append(f"| [`{inv.name}`](#{inv.name}) | {inv.kind} | {inv.source} |")
    for kind in KINDS:
        for inv in CATALOGUE:
            if inv.kind != kind:
                continue
            lines += ["", f"## {inv.name}", "", f"*{inv.kind}* -- {inv.source}", "", inv.doc]
    return "\n".join(lines) + "\n"
