"""Helpers for the Spark tests: compare the two engines, small checks that fire.

(No ``__init__.py`` here: pytest puts this directory on ``sys.path`` and the tests import
this module by name, as ``mc_support`` in the unit tests.)
"""

from __future__ import annotations

from typing import NamedTuple

from model_check.checks import Checks
from model_check.search import Result
from model_check.world import World

PARTITIONS = 3


def levels(r: Result) -> list[tuple[int, int, int, int, int]]:
    return [(lv.depth, lv.frontier, lv.generated, lv.new, lv.duplicates) for lv in r.levels]


def assert_same(local: Result, spark: Result) -> None:
    """Everything but the engine name and the timings."""
    assert spark.engine == "spark" and local.engine == "local"
    assert levels(spark) == levels(local)
    assert (spark.verdict, spark.distinct_states, spark.states_generated, spark.depth,
            spark.bounded_by, spark.setup_steps, spark.symmetry, spark.checks) == \
        (local.verdict, local.distinct_states, local.states_generated, local.depth,
         local.bounded_by, local.setup_steps, local.symmetry, local.checks)
    assert spark.violation == local.violation


class EpochView(NamedTuple):
    epoch: int
    pending: bool


class Bad(NamedTuple):
    invariant: str
    detail: str


def _view(w: World) -> EpochView:
    return EpochView(w.zk.data("/controller_epoch").epoch, not w.is_quiescent())


def epoch_below(limit: int) -> Checks:
    """A state invariant that fires once the controller fails over ``limit - 1`` times."""

    def state(v: EpochView) -> list[Bad]:
        return [Bad("epoch-below", f"controller epoch {v.epoch}")] if v.epoch >= limit else []

    return Checks(view=_view, state=state, name=f"epoch-below-{limit}")


def epoch_steady_after(first: int) -> Checks:
    """A transition invariant that fires on the step that moves the controller epoch past
    ``first`` (an edge violation: it is found on a step, not on a state)."""

    def transition(a: EpochView, b: EpochView) -> list[Bad]:
        if a.epoch >= first and b.epoch > a.epoch:
            return [Bad("epoch-steady", f"controller epoch {a.epoch} -> {b.epoch}")]
        return []

    return Checks(view=_view, state=lambda v: [], transition=transition,
                  name=f"epoch-steady-after-{first}")
