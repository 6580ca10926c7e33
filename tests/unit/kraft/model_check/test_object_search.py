"""The object-world search (``model_check.objects.search``) on a world counted by hand: the
levels, the bounds, and which violation is first -- the smallest action-index path."""

from __future__ import annotations

from toy_kind import TOY, ToyScenario

from model_check.objects.search import STEP_RAISED, bfs, replay
from model_check.objects.walk import walks


def test_levels_are_the_diagonals_of_the_grid() -> None:
    result = bfs(TOY, ToyScenario(top=3))
    # (a, b) with a + b = d is level d; reset leads back to (0, 0), a duplicate
    assert [lv.new for lv in result.levels] == [2, 3, 4, 3, 2, 1, 0]
    assert result.distinct_states == 16 and result.depth == 6
    assert result.bounded_by == "exhausted" and result.checks == "toy"
    assert [lv.generated for lv in result.levels] == [2, 4, 7, 6, 5, 2, 1]


def test_the_depth_bound() -> None:
    result = bfs(TOY, ToyScenario(top=3), depth=2)
    assert result.distinct_states == 6 and result.bounded_by == "depth"
    assert bfs(TOY, ToyScenario(top=3), depth=0).bounded_by == "depth"


def test_max_states_stops_at_the_state_that_fills_it() -> None:
    result = bfs(TOY, ToyScenario(top=3), max_states=5)
    assert result.bounded_by == "max-states" and result.distinct_states == 5
    # level 2: (2,0) from (1,0) by inc-a, (1,1) by inc-b -- the limit, after 2 steps
    assert (result.levels[-1].new, result.levels[-1].generated) == (2, 2)


def test_the_first_violation_has_the_smallest_path() -> None:
    sc = ToyScenario(top=3, bad_sum=3)
    result = bfs(TOY, sc)
    assert result.violation is not None and result.violation.invariant == "toy-sum"
    assert result.violation.path == (0, 0, 0)  # inc-a thrice, before any other path
    assert [a.kind for a, _ in replay(TOY, sc, result.violation.path)] == ["inc-a"] * 3


def test_a_raising_step_is_a_finding_and_a_bad_edge_too() -> None:
    result = bfs(TOY, ToyScenario(top=3, raise_at=2))
    assert result.violation.invariant == STEP_RAISED
    assert result.violation.path == (0, 0) and "inc-a: RuntimeError: sum 2" in \
        result.violation.detail
    sc = ToyScenario(top=3, max_drop=1)
    found = bfs(TOY, sc)  # the first reset from (2,2): inc-a, inc-a, inc-b, inc-b, reset
    assert found.violation is not None and found.violation.invariant == "toy-drop"
    assert found.violation.path == (0, 0, 1, 1, 2)
    # (3,2) and (2,3) before it in level 5; the edge's target is not counted
    assert (found.levels[-1].new, found.levels[-1].generated) == (2, 4)
    assert bfs(TOY, ToyScenario(top=3, max_drop=3)).violation is None


def test_walks_find_the_bad_sum_and_are_reproducible() -> None:
    sc = ToyScenario(top=3, bad_sum=5)
    one, two = walks(TOY, sc, 500, seed=7), walks(TOY, sc, 500, seed=7)
    assert one.violation is not None and one.violation.invariant == "toy-sum"
    assert one.violation.path == two.violation.path
