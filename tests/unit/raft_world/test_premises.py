"""``model_check.objects.premises``: a watched run names the invariants whose premise held,
and only those; the verdicts stay the kind's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from invariants.raft import CATALOGUE, RaftView
from invariants.registry import QUIESCENT, STATE, TRANSITION, invariant
from model_check.objects import premises
from model_check.objects.search import bfs
from model_check.raft.kind import RAFT
from model_check.raft.scenario import load_raft


def never(view: RaftView) -> bool:
    """Never."""
    return False


def a_leader(view: RaftView) -> bool:
    """A live voter leads."""
    return any(v.alive and v.role == "leader" for v in view.voters)


def quiet_and_led(view: RaftView) -> bool:
    """A live voter leads (read only when nothing is pending)."""
    return a_leader(view)


def a_step(before: RaftView, after: RaftView) -> bool:
    """Any step."""
    return True


@invariant(STATE, "test", premise=never)
def vacuous(view: RaftView) -> Iterator[str]:
    """Never met."""
    yield from ()


@invariant(STATE, "test", premise=a_leader)
def led(view: RaftView) -> Iterator[str]:
    """Met once a leader is elected."""
    yield from ()


@invariant(QUIESCENT, "test", premise=quiet_and_led)
def quiet(view: RaftView) -> Iterator[str]:
    """Met on a quiescent state with a leader."""
    yield from ()


@invariant(TRANSITION, "test", premise=a_step)
def stepped(before: RaftView, after: RaftView) -> Iterator[str]:
    """Met on every step."""
    yield from ()


def test_a_premise_that_never_holds_is_named_and_the_others_are_not() -> None:
    """raft-follower-snapshot starts with a settled leader and nothing in flight: one step
    meets every premise but ``never``. raft-smoke starts from nothing: within 8 steps a
    leader is elected, but a Fetch is always in flight, so the quiescent premise is not met
    (a quiescent invariant is read only where nothing is pending)."""
    catalogue = (vacuous, led, quiet, stepped)
    kind, held = premises.watching(RAFT, catalogue)
    assert bfs(kind, load_raft("raft-follower-snapshot"), depth=1).violation is None
    assert held == {"led", "quiet", "stepped"}
    assert premises.never_held(catalogue, held) == ["vacuous"]
    kind, held = premises.watching(RAFT, catalogue)
    assert bfs(kind, load_raft("raft-smoke"), depth=8).violation is None
    assert held == {"led", "stepped"}
    assert premises.never_held(catalogue, held) == ["vacuous", "quiet"]


def test_the_watched_kind_finds_what_the_kind_finds() -> None:
    """The wrapper only notes premises: a goal the kind's check reports is still reported
    (here: a voter crashed, one step from raft-follower-snapshot's start)."""
    def crashed(view: RaftView) -> tuple[str, str] | None:
        if not all(v.alive for v in view.voters):
            return "goal", "a voter crashed"
        return RAFT.check_state(view)

    kind, held = premises.watching(dataclasses.replace(RAFT, check_state=crashed), CATALOGUE)
    result = bfs(kind, load_raft("raft-follower-snapshot"), depth=2)
    assert result.violation is not None and result.violation.invariant == "goal"
    assert len(result.violation.path) == 1
    assert "one_leader_per_epoch" in held
