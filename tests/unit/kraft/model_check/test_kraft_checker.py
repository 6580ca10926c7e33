"""The KRaft checker: the shipped scenarios pass, each mutant is found in its scenario at its
measured depth, the shipped set reaches every table move, request and record, and the world
is copied, not shared."""

from __future__ import annotations

import pytest

from fsm.kraft.controller.brokers import REPLACES_FENCED
from invariants.kraft import CATALOGUE
from model_check.kraft import coverage
from model_check.kraft.kind import KRAFT
from model_check.kraft.mutants import KRAFT_MUTANTS, patched
from model_check.kraft.scenario import KRaftScenarioError, load_kraft, names
from model_check.kraft.search import bfs, replay, start
from model_check.kraft.world import KRaftWorld
from model_check.objects import premises, walk

QUICK_DEPTH = {"kraft-smoke": 8, "kraft-startup": 8, "kraft-standard": 6, "kraft-isr": 7,
               "kraft-admin": 4, "kraft-failover": 4, "kraft-snapshot": 6, "kraft-restart": 8,
               "kraft-stop": 8, "kraft-isr-retry": 8, "kraft-crash": 8}


def test_the_shipped_set_is_known() -> None:
    assert set(names()) == set(QUICK_DEPTH)


@pytest.mark.parametrize("name", sorted(QUICK_DEPTH))
def test_shipped_scenario_passes(name: str) -> None:
    result = bfs(load_kraft(name), depth=QUICK_DEPTH[name])
    assert result.violation is None, result.violation
    assert result.distinct_states > 50


@pytest.mark.parametrize("mutant", KRAFT_MUTANTS, ids=lambda m: m.name)
def test_each_mutant_is_found_by_its_scenario(mutant) -> None:  # noqa: ANN001
    scenario = load_kraft(mutant.scenario)
    with patched(mutant.name):
        result = bfs(scenario, depth=mutant.depth)
        assert result.violation is not None, f"{mutant.name} not found"
        assert result.violation.depth == mutant.depth
        assert len(replay(scenario, result.violation.path)) == mutant.depth
    assert bfs(scenario, depth=mutant.depth).violation is None, "the clean core passes"


def test_the_shipped_set_reaches_every_move_request_and_record() -> None:
    """... and the premise of every KRaft invariant holds somewhere: one never met is checked
    only vacuously (``model_check.objects.premises``)."""
    kind, held = premises.watching(KRAFT, CATALOGUE)
    reached: set[tuple[str, ...]] = set()
    for name in names():
        for seed in (1, 2, 3):
            result = walk.walks(kind, load_kraft(name), 8000, seed, reached=reached)
            assert result.violation is None, (name, seed, result.violation)
    assert coverage.unreached(reached) == []
    assert premises.never_held(CATALOGUE, held) == []


def test_kraft_restart_re_registers_a_fenced_broker_whose_lease_still_runs() -> None:
    """SIGTERM to broker 2, which leads u-0; its controlled shutdown moves the leadership
    (delivered, committed), broker 1 replays the move and reports it, broker 2's next
    heartbeat fences it and is answered should_shut_down (it exits); restarted, its new
    incarnation's registration is accepted at once: 12 steps. With the lease alone deciding
    (before the fix) it is refused instead."""
    reached: set[tuple[str, ...]] = set()
    result = bfs(load_kraft("kraft-restart"), depth=12, reached=reached)
    assert result.violation is None
    assert ("kraft-registration", REPLACES_FENCED) in reached
    assert ("kraft-registration", "refused: DUPLICATE_BROKER_REGISTRATION") not in reached


def test_kraft_stop_takes_running_to_shutting_down_and_the_default_does_not() -> None:
    """controlled_shutdown = false (kraft-stop): the SIGTERM to broker 2 stops it at once,
    RUNNING -> SHUTTING_DOWN, and its leadership waits for its lease (fenced by a tick).
    The same scenario with controlled shutdown on takes PENDING_CONTROLLED_SHUTDOWN instead."""
    import dataclasses

    stop = load_kraft("kraft-stop")
    assert stop.controlled_shutdown is False
    moves = [("kraft-broker-lifecycle", "RUNNING", "SHUTTING_DOWN"),
             ("kraft-broker-lifecycle", "RUNNING", "PENDING_CONTROLLED_SHUTDOWN")]
    reached: set[tuple[str, ...]] = set()
    assert bfs(stop, depth=3, reached=reached).violation is None
    assert [m in reached for m in moves] == [True, False]
    reached = set()
    on = dataclasses.replace(stop, controlled_shutdown=True)
    assert bfs(on, depth=3, reached=reached).violation is None
    assert [m in reached for m in moves] == [False, True]


def test_kraft_isr_retry_asks_two_lost_wishes_again_in_one_alter_partition() -> None:
    """Broker 2 down, broker 1 asks to shrink t-0's and t-1's ISR (two AlterPartitions of one
    item); both are lost, so both wishes are queued and asked again at the next heartbeat in
    one AlterPartition of two items: 8 steps (crash, two ISR changes, two losses, a tick, the
    heartbeat, its delivery). No other shipped scenario loses an AlterPartition."""
    reached: set[tuple[str, ...]] = set()
    assert bfs(load_kraft("kraft-isr-retry"), depth=7, reached=reached).violation is None
    assert coverage.ALTER_LOST in reached and coverage.SEVERAL not in reached
    assert bfs(load_kraft("kraft-isr-retry"), depth=8, reached=reached).violation is None
    assert coverage.SEVERAL in reached


def test_a_world_copy_is_independent() -> None:
    world = start(load_kraft("kraft-smoke")).snapshot
    key = world.key()
    copy = world.snapshot()
    for action in copy.enabled_actions():
        copy.apply(action)
        break
    assert copy.key() != key
    assert world.key() == key
    assert KRaftWorld.restore(world).key() == key


def test_scenario_errors_name_the_key(tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.toml"
    bad.write_text('brokers = 2\n[faults]\nticks = 1\nbroker_crashes = 1\n')
    with pytest.raises(KRaftScenarioError, match="broker_crashes"):
        load_kraft(str(bad))
    with pytest.raises(KRaftScenarioError, match="kraft-smoke"):
        load_kraft("kraft-nope")
    bad.write_text('brokers = 2\ncontrolled_shutdown = "no"\n')
    with pytest.raises(KRaftScenarioError, match="controlled_shutdown"):
        load_kraft(str(bad))


def test_specs_kraft_invariants_md_is_up_to_date() -> None:
    from pathlib import Path

    from invariants.kraft import catalogue_markdown

    committed = Path(__file__).resolve().parents[4] / "specs" / "kraft-invariants.md"
    assert committed.read_text() == catalogue_markdown(), \
        "regenerate: python -m invariants.kraft > specs/kraft-invariants.md"


def test_the_cli_checks_kraft_scenarios(tmp_path) -> None:  # noqa: ANN001
    import json

    from click.testing import CliRunner

    from adapters.cli import main

    runner = CliRunner()
    out = tmp_path / "r.json"
    r = runner.invoke(main, ["check", "kraft-startup", "--mutant",
                             "kraft-retried-registration-new-epoch", "--json", str(out),
                             "--trace-out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())
    assert doc["violation"]["invariant"] == "broker_epochs_rise_and_retries_keep_them"
    assert doc["violation"]["trace"][0] == "start broker 1"
    r = runner.invoke(main, ["check", "kraft-smoke", "--depth", "4", "--coverage"])
    assert r.exit_code == 0, r.output
    assert "verdict: pass" in r.output and "coverage:" in r.output
    r = runner.invoke(main, ["check", "kraft-smoke", "--mutant", "leader-epoch-not-bumped"])
    assert r.exit_code == 2 and "ZooKeeper-mode mutant" in r.output
    r = runner.invoke(main, ["check", "smoke", "--mutant", "kraft-uncommitted-visible"])
    assert r.exit_code == 2 and "KRaft mutant" in r.output
    r = runner.invoke(main, ["check", "kraft-smoke", "--symmetry"])
    assert r.exit_code == 2 and "--symmetry" in r.output
