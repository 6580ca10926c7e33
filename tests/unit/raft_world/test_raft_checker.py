"""The Raft checker on the real core: the shipped scenarios pass, each mutant is found by its
scenario at its measured depth (and the clean core passes there), traces replay, walks
pass, scenarios are validated, and a world copy is independent."""

from __future__ import annotations

import dataclasses

import pytest

from invariants.raft import CATALOGUE
from model_check.objects import premises
from model_check.objects.search import bfs, replay
from model_check.objects.walk import walks
from model_check.raft import coverage
from model_check.raft.kind import RAFT
from model_check.raft.mutants import RAFT_MUTANTS, patched
from model_check.raft.scenario import RaftScenarioError, load_raft, names
from model_check.raft.world import RaftWorld

QUICK_DEPTH = {"raft-smoke": 10, "raft-election": 7, "raft-standard": 4, "raft-figure8": 4,
               "raft-snapshot": 4, "raft-roles": 4, "raft-follower-snapshot": 6}
SLOW_CLEAN = {"raft-figure8"}
"""Scenarios whose clean search at the mutant's depth takes more than ~10 s."""


def test_the_shipped_set_is_known() -> None:
    assert set(names()) == set(QUICK_DEPTH)


@pytest.mark.parametrize("name", sorted(QUICK_DEPTH))
def test_shipped_scenario_passes(name: str) -> None:
    result = bfs(RAFT, load_raft(name), depth=QUICK_DEPTH[name])
    assert result.violation is None, result.violation
    assert result.distinct_states > 50


def test_smoke_elects_and_commits_the_record() -> None:
    """Within its depth the smoke scenario reaches a state where a voter applied the
    appended record (so passing it means something): the search, told to stop there."""
    def applied_r1(view):  # noqa: ANN001, ANN202
        if any(r == "r1" for v in view.voters for _, r in v.applied):
            return "goal", "r1 applied"
        return RAFT.check_state(view)

    sc = load_raft("raft-smoke")
    result = bfs(dataclasses.replace(RAFT, check_state=applied_r1), sc)
    assert result.violation is not None and result.violation.invariant == "goal"
    assert len(result.violation.path) <= sc.depth


@pytest.mark.parametrize("mutant", RAFT_MUTANTS, ids=lambda m: m.name)
def test_each_mutant_is_found_by_its_scenario(mutant) -> None:  # noqa: ANN001
    scenario = load_raft(mutant.scenario)
    with patched(mutant.name):
        result = bfs(RAFT, scenario, depth=mutant.depth)
        assert result.violation is not None, f"{mutant.name} not found"
        assert len(result.violation.path) == mutant.depth
        assert len(replay(RAFT, scenario, result.violation.path)) == mutant.depth
    clean = mutant.depth - 1 if mutant.scenario in SLOW_CLEAN else mutant.depth
    assert bfs(RAFT, scenario, depth=clean).violation is None, "the clean core passes"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_CLEAN))
def test_the_clean_core_passes_the_slow_mutant_depths(name: str) -> None:
    depth = max(m.depth for m in RAFT_MUTANTS if m.scenario == name)
    assert bfs(RAFT, load_raft(name), depth=depth).violation is None


@pytest.mark.parametrize("name", ["raft-smoke", "raft-standard"])
def test_walks_pass(name: str) -> None:
    result = walks(RAFT, load_raft(name), 3000, seed=1)
    assert result.violation is None, result.violation
    assert result.depth > 10


def test_the_shipped_set_reaches_every_role_move_and_message() -> None:
    """... and the premise of every Raft invariant holds somewhere: one never met is checked
    only vacuously (``model_check.objects.premises``)."""
    kind, held = premises.watching(RAFT, CATALOGUE)
    reached: set[tuple[str, ...]] = set()
    for name in names():
        for seed in (1, 2, 3):
            result = walks(kind, load_raft(name), 1500, seed, reached=reached)
            assert result.violation is None, (name, seed, result.violation)
    assert coverage.unreached(reached) == []
    assert premises.never_held(CATALOGUE, held) == []


def test_a_world_copy_is_independent() -> None:
    world = RaftWorld.restore(RAFT.start(load_raft("raft-standard"), None).snapshot)
    key = world.key()
    copy = world.snapshot()
    for action in copy.enabled_actions():
        if action.kind == "crash":
            copy.apply(action)
            break
    assert copy.key() != key
    assert world.key() == key
    assert all(x.alive for x in world.voters.values())


def test_scenario_errors_name_the_key(tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.toml"
    bad.write_text('voters = 3\n[budgets]\ncrashes = 1\ncrash = 1\n')
    with pytest.raises(RaftScenarioError, match="crash"):
        load_raft(str(bad))
    bad.write_text('voters = 3\ninit = "running"\n')
    with pytest.raises(RaftScenarioError, match="init"):
        load_raft(str(bad))
    bad.write_text('voters = 3\nrecords = 2\n')
    with pytest.raises(RaftScenarioError, match="records"):
        load_raft(str(bad))
    with pytest.raises(RaftScenarioError, match="raft-smoke"):
        load_raft("raft-nope")


def test_a_setup_step_that_matches_nothing_is_reported(tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.toml"
    bad.write_text('voters = 3\ninit = "leader"\nsetup = ["deliver 9->1 VoteRequest"]\n')
    st = RAFT.start(load_raft(str(bad)), None)
    assert st.found == ("setup", "no enabled action is 'deliver 9->1 VoteRequest'")


def test_a_follower_falling_silent_after_its_snapshot_is_found(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """The bug the KRaft fault campaign found (issue 26): a follower whose snapshot made its
    pending flush durable sent no next Fetch. Without the Fetch ``on_snapshot_written`` now
    sends, ``raft-follower-snapshot`` breaks ``followers_keep_fetching`` in 4 steps."""
    import types

    import fsm.raft.snapshots as snapshots

    monkeypatch.setattr(snapshots, "follower", types.SimpleNamespace(maybe_fetch=lambda node: []))
    result = bfs(RAFT, load_raft("raft-follower-snapshot"), depth=6)
    assert result.violation is not None
    assert result.violation.invariant == "followers_keep_fetching", result.violation
