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

from collections.abc import Callable

from invariants import brokers, controller, elections, epochs, leaders, partitions, quiescent
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
    "coverage_of_state",
    "coverage_of_transition",
    "COVERAGE_BITS",
]

CATALOGUE: tuple[Invariant, ...] = (
    controller.one_active_controller_per_epoch,
    controller.active_controller_epoch_not_ahead_of_zookeeper,
    epochs.controller_epoch_never_decreases,
    epochs.controller_epochs_not_ahead_of_zookeeper,
    epochs.leader_epoch_never_decreases,
    epochs.leader_change_bumps_leader_epoch,
    epochs.partition_state_decided_by_current_controller,
    epochs.partition_state_version_never_decreases,
    partitions.leader_in_isr,
    partitions.isr_within_assigned_replicas,
    partitions.isr_never_empty,
    partitions.at_most_one_committer,
    brokers.no_request_applied_across_epochs,
    brokers.newly_applied_request_is_current,
    brokers.controlled_shutdown_moved_leadership,
    quiescent.metadata_matches_zookeeper,
    quiescent.no_offline_partition_with_live_isr_replica,
    leaders.leader_is_registered_or_none,
    quiescent.finished_reassignment_has_target_replicas,
    quiescent.deleted_topic_leaves_no_replica,
    quiescent.replicas_follow_zookeeper,
    elections.new_leader_is_live_assigned_replica,
    elections.unclean_election_only_as_last_resort,
    elections.no_offline_partition_with_live_replica_when_unclean,
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
    """Every transition invariant on the step ``before -> after``.

    Transition invariants judge how ZooKeeper's data, the controllers and the brokers
    change, each part against its former self; a step that leaves those parts as they were
    is a stutter and holds for all of them (they are stutter-invariant: "never decreases",
    "goes up when ... changes"), so it is not checked. "As they were" is judged by identity:
    the model checker's views share every part a step did not touch."""
    if _stutter(before, after):
        return []
    out: list[Violation] = []
    for inv in _TRANSITION:
        out += inv.check(before, after)
    return out


COVERAGE_BITS = ("evaluated", "premise", "waived", "would-fail")
"""What ``coverage_of_state``/``coverage_of_transition`` record per invariant: four bits at
``4 * i`` for the ``i``-th invariant of ``CATALOGUE`` -- evaluated (enforced), its premise
held (while enforced), waived (not enforced: ``Invariant.waived_when``), and, while waived,
it would have failed."""

def _cover_table(invs: tuple[Invariant, ...]) -> tuple[tuple, ...]:
    return tuple((inv.premise, inv.waived_when, inv.check_unwaived, 1 << (4 * CATALOGUE.index(inv)))
                 for inv in invs)


_STATE_COVER = _cover_table(_STATE)
_QUIESCENT_COVER = _cover_table(_QUIESCENT)
_TRANSITION_COVER = _cover_table(_TRANSITION)


def _cover(table: tuple[tuple, ...], views: tuple) -> int:
    mask = 0
    for premise, waived, check_unwaived, bit in table:
        if waived is not None and waived(*views):
            mask |= (bit << 2) | ((bit << 3) if check_unwaived(*views) else 0)
        elif premise(*views):
            mask |= bit | (bit << 1)
        else:
            mask |= bit
    return mask


def coverage_of_state(view: GlobalView) -> int:
    """The coverage bits (``COVERAGE_BITS``) of the state and -- when nothing is pending --
    quiescent invariants on ``view``: which were evaluated, whose premise held, which were
    waived and would have failed. A function of the view, as the checks are."""
    mask = _cover(_STATE_COVER, (view,))
    if not view.pending:
        mask |= _cover(_QUIESCENT_COVER, (view,))
    return mask


def coverage_of_transition(before: GlobalView, after: GlobalView) -> int:
    """The coverage bits of the transition invariants on the step ``before -> after``; a
    stutter (``check_transition`` judges nothing) evaluates none."""
    if _stutter(before, after, by_content=True):
        return 0
    return _cover(_TRANSITION_COVER, (before, after))


def _stutter(before: GlobalView, after: GlobalView, by_content: bool = False) -> bool:
    """The step left ZooKeeper's data, the brokers and the controllers as they were: the
    same objects -- or, ``by_content``, equal ones. Identity is enough for the verdicts (a
    stutter-invariant invariant holds on a stutter either way) and cheap; the coverage counts
    need content, because whether a view shares its parts with its parent depends on where it
    was built (a view rebuilt in a Spark task shares nothing with its parent), and the counts
    must be the same on every engine."""
    if by_content:
        return _equal(before.zk, after.zk) and _same(before.brokers, after.brokers, _equal) \
            and _same(before.controllers, after.controllers, _equal)
    return before.zk is after.zk and _same(before.brokers, after.brokers) \
        and _same(before.controllers, after.controllers)


def _identical(a: object, b: object) -> bool:
    return a is b


def _equal(a: object, b: object) -> bool:
    return a is b or a == b


def _same(a: tuple | None, b: tuple | None,
          same: Callable[[object, object], bool] = _identical) -> bool:
    if a is b:
        return True
    if a is None or b is None or len(a) != len(b):
        return False
    return all(same(x, y) for x, y in zip(a, b, strict=True))


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
            lines += ["", f"## {inv.name}", "", f"*{inv.kind}* -- {inv.source}", "", inv.doc,
                      "", f"**Premise** (where it is not vacuous): {inv.premise_doc}"]
            if inv.waived_when is not None:
                lines += ["", f"**Waived** when: {inv.waiver_doc}"]
    return "\n".join(lines) + "\n"
