"""Historic-bug mutants: each is found on its scenario with a short trace that replays; the
clean core passes the same scenarios; the patches are undone on leaving the block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from model_check import mutants
from model_check.checks import default_checks
from model_check.counterexample import ReplayError, rebuild, replay, replay_doc
from model_check.scenario import load
from model_check.search import bfs

# the invariant each mutant is expected to break first on its scenario
EXPECTED = {
    "no-controller-epoch-check": "partition_state_decided_by_current_controller",
    "broker-ignores-broker-epoch": "newly_applied_request_is_current",
    "unconditional-isr-update": "leader_epoch_never_decreases",
    "leader-epoch-not-bumped": "leader_change_bumps_leader_epoch",
    "broker-accepts-stale-controller-epoch": "newly_applied_request_is_current",
    "early-controlled-shutdown-reply": "controlled_shutdown_moved_leadership",
    "deletion-before-replicas-deleted": "metadata_matches_zookeeper",
    # the live service's fix moved into the driver (fsm.driver.controller): without it the
    # bounced broker's new incarnation never hears of the leader elected for it
    "bounced-broker-forgotten": "metadata_matches_zookeeper",
}


def test_the_catalogue_has_the_expected_mutants() -> None:
    assert set(mutants.names()) == set(EXPECTED)
    for m in mutants.MUTANTS:
        assert m.summary and "\n" not in m.line() and m.depth > 0
        load(m.scenario)  # a shipped scenario


@pytest.mark.parametrize("name", list(EXPECTED))
def test_mutant_is_found_with_a_short_trace_that_replays(name: str) -> None:
    m = mutants.get(name)
    sc = load(m.scenario)
    checks = default_checks()
    with mutants.patched(name):
        r = bfs(sc, checks)
        v = r.violation
        assert r.verdict == "violation" and v is not None, f"{name} not found on {m.scenario}"
        assert v.invariant == EXPECTED[name], v
        assert v.depth <= m.depth, f"{name}: trace of {v.depth} steps, expected <= {m.depth}"
        trace = rebuild(sc, v.setup, v.path, v.invariant, v.detail)
    doc = replay_doc(trace, mutant=name)
    again = replay(doc, checks, out=lambda _line: None)  # applies the mutant itself
    assert again.reproduced and again.steps == len(trace.steps)
    try:  # the same steps on the clean core: they break nothing, or stop being possible
        clean = replay(replay_doc(trace), checks, out=lambda _line: None)
        assert not clean.reproduced
    except ReplayError as e:
        assert "not enabled" in str(e)


@pytest.mark.parametrize("scenario", sorted({m.scenario for m in mutants.MUTANTS}))
def test_the_clean_core_passes_every_mutant_scenario(scenario: str) -> None:
    r = bfs(load(scenario), default_checks())
    assert r.verdict == "pass", r.violation
    assert r.distinct_states > 100


def test_patches_are_undone() -> None:
    from fsm.broker import commands, isr
    from fsm.controller import brokers, controller
    from fsm.controller.controller import Controller
    from fsm.driver import controller as driver
    from model_check.world import executor

    def current() -> tuple:
        return (commands.epoch_error, isr.SetDataOp, controller.decide, brokers.decide,
                controller._DISPATCH, Controller._plan_deletion_progress,
                executor.commit, driver.EFFECTS)

    before = current()
    for name in mutants.names():
        with mutants.patched(name):
            assert current() != before, name
        assert current() == before, name
    with pytest.raises(RuntimeError), mutants.patched("unconditional-isr-update"):
        raise RuntimeError("undone on the way out too")
    assert current() == before
    with pytest.raises(mutants.UnknownMutant, match="known:"), mutants.patched("nope"):
        pass


def test_cli_lists_and_applies_mutants(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["check", "--list-mutants"])
    assert r.exit_code == 0
    lines = r.output.strip().splitlines()
    from model_check.kraft.mutants import KRAFT_MUTANTS
    from model_check.raft.mutants import RAFT_MUTANTS

    assert [line.split()[0] for line in lines] == mutants.names() + [
        m.name for m in KRAFT_MUTANTS + RAFT_MUTANTS]
    out = tmp_path / "r.json"
    r = runner.invoke(main, ["check", "mutants-shutdown", "--mutant",
                             "early-controlled-shutdown-reply", "--json", str(out),
                             "--trace-out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())
    assert doc["mutant"] == "early-controlled-shutdown-reply"
    assert doc["invariant"] == "controlled_shutdown_moved_leadership"
    saved = json.loads(Path(doc["trace_files"]["replay"]).read_text())
    assert saved["mutant"] == "early-controlled-shutdown-reply"
    r = runner.invoke(main, ["replay", doc["trace_files"]["replay"]])
    assert r.exit_code == 1 and "REPRODUCED" in r.output
    r = runner.invoke(main, ["check", "mutants-shutdown"])
    assert r.exit_code == 0, r.output  # the patch did not outlive the command
    assert runner.invoke(main, ["check", "smoke", "--mutant", "nope"]).exit_code == 2
