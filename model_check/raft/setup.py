"""The Raft search's start. ``init = "empty"``: every voter started on an empty disk, no
setup. ``init = "leader"``: then voter 1's election timer fires and the world settles --
every message delivered and every flush done, in ``enabled_actions`` order, until nothing is
in flight -- so the search begins from a quorum with a leader in epoch 1 whose LeaderChange
is committed on every voter (the cluster a person has before the faults begin). ``records``
more records are then appended by the leader and settled the same way. Then the scenario's
``setup`` steps, in order: ``"settle"``, or the start of one enabled action's trace line
(``"deliver 1->3 FetchResponse"``, ``"timer fetch fires on voter 2"``, ``"flush voter 1"``):
the first enabled action whose line starts so is taken. A scenario pins a path this way to
the edge of a bug, and the search explores from there. One fixed path, checked step by
step; it spends no budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.raft import effects as fx
from model_check.raft.scenario import BUDGETS, RaftScenario
from model_check.raft.world import RAction, RaftWorld

MAX_SETUP_STEPS = 1000
SETTLE = ("deliver", "flush")

Found = tuple[str, str]


def setup(scenario: RaftScenario, check_state: Callable[[Any], Found | None],
          check_edge: Callable[[Any, Any], Found | None], view_of: Callable[[RaftWorld], Any],
          reached: set[tuple[str, ...]] | None = None
          ) -> tuple[RaftWorld, tuple[RAction, ...], Found | None]:
    w = RaftWorld.fresh(scenario, reached)
    done: list[RAction] = []
    view = view_of(w)
    found = check_state(view)

    def step(action: RAction) -> Found | None:
        nonlocal view
        done.append(action)
        try:
            if action.kind in SETTLE:
                w.apply(action)
            else:
                _free(w, action)
        except Exception as e:  # noqa: BLE001 -- a raising step is a finding
            return "step-raised", f"setup: {action.describe()}: {type(e).__name__}: {e}"
        after = view_of(w)
        result = check_edge(view, after) or check_state(after)
        view = after
        return result

    def settle() -> Found | None:
        for _ in range(MAX_SETUP_STEPS):
            a = next((a for a in w.enabled_actions() if a.kind in SETTLE), None)
            if a is None:
                return None
            bad = step(a)
            if bad is not None:
                return bad
        raise AssertionError(f"the Raft setup did not settle in {MAX_SETUP_STEPS} steps")

    if found is None and scenario.init == "leader":
        found = step(RAction("timer", 1, (fx.ELECTION, -1))) or settle()
        for _ in range(scenario.records):
            if found is None:
                leader = w.leaders()
                if not leader:
                    return w, tuple(done), ("setup", "no leader to append to")
                found = step(RAction("append", leader[0])) or settle()
    for text in scenario.setup:
        if found is not None:
            break
        if text == "settle":
            found = settle()
            continue
        action = _matching(w, text)
        if action is None:
            return w, tuple(done), ("setup", f"no enabled action is {text!r}")
        found = step(action)
    w.reached = None
    return w, tuple(done), found


def _matching(w: RaftWorld, text: str) -> RAction | None:
    """The first action enabled with every budget one more whose trace line starts with
    ``text``."""
    budgets = dict(w.budgets)
    w.budgets = {k: budgets.get(k, 0) + 1 for k in BUDGETS}
    try:
        return next((a for a in w.enabled_actions() if a.describe().startswith(text)), None)
    finally:
        w.budgets = budgets


def _free(w: RaftWorld, action: RAction) -> None:
    """A setup action, spending no budget: applied with its budget one more."""
    budgets = dict(w.budgets)
    w.budgets = {k: budgets.get(k, 0) + 1 for k in BUDGETS}
    try:
        w.apply(action)
    finally:
        w.budgets = budgets
