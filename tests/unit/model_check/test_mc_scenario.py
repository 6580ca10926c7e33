"""Scenario files: the shipped ones load, mistakes are named with their file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_check.scenario import ScenarioError, load, loads, shipped_names
from model_check.world import CreateTopic, DeleteTopic, Reassign
from model_check.world import actions as A


def test_shipped_scenarios_load() -> None:
    assert {"smoke", "standard", "deep"} <= set(shipped_names())
    for name in shipped_names():
        sc = load(name)
        assert sc.name == name and sc.depth > 0
        sc.world_config()


def test_standard_is_the_issues_scenario() -> None:
    sc = load("standard")
    cfg = sc.world_config()
    assert cfg.brokers == 3
    assert sc.topics == (CreateTopic("t", ((0, (1, 2, 3)), (1, (2, 3, 1)))),)
    assert cfg.budget(A.CRASH) == 2 and cfg.budget(A.EXPIRE_CONTROLLER) == 1
    assert any(isinstance(op, Reassign) for op in sc.admin)
    assert any(isinstance(op, DeleteTopic) for op in sc.admin)


def test_a_path_loads_too(tmp_path: Path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text('brokers = 2\ndepth = 3\n[[topics]]\nname = "x"\nassignment = [[2, 1]]\n')
    sc = load(str(p))
    assert sc.name == "mine" and sc.topics == (CreateTopic("x", ((0, (2, 1)),)),)


@pytest.mark.parametrize("text, key", [
    ("brokers = 2\ndepth = 3\ndeth = 4\n", "'deth'"),
    ("brokers = 2\ndepth = 3\n[faults]\nbroker_crashes = 1\n", "'broker_crashes'"),
    ("brokers = 2\ndepth = 3\n[[topics]]\nname = 't'\npartitions = 1\nrf = 2\n", "'rf'"),
    ("brokers = 2\ndepth = 3\n[world]\nunclean = true\n", "'unclean'"),
])
def test_unknown_keys_are_named(text: str, key: str) -> None:
    with pytest.raises(ScenarioError, match=key) as e:
        loads(text, source="my.toml")
    assert "my.toml" in str(e.value)


@pytest.mark.parametrize("text, words", [
    ("depth = 3\n", "brokers"),
    ("brokers = 2\ndepth = -1\n", "depth"),
    ("brokers = 2\ndepth = 3\n[faults]\nmessage_loss = 1\n", "message_loss"),
    ("brokers = 2\ndepth = 3\n[[topics]]\nname = 't'\nassignment = [[1, 3]]\n", "1..2"),
    ("brokers = 2\ndepth = 3\n[[admin]]\nop = 'explode'\n", "explode"),
    ("brokers = 2\ndepth = [\n", "TOML"),
])
def test_bad_values_are_explained(text: str, words: str) -> None:
    with pytest.raises(ScenarioError, match=words):
        loads(text)


def test_unknown_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError, match="smoke"):
        load("no-such-scenario")


def test_deep_parses_and_its_first_levels_run() -> None:
    """``deep`` is meant for the Spark engine; locally its first levels run and pass."""
    from model_check.checks import default_checks
    from model_check.search import Options, bfs

    sc = load("deep")
    cfg = sc.world_config()
    assert cfg.brokers == 3 and len(sc.topics) == 2 and len(sc.admin) == 5
    assert sc.depth > load("standard").depth
    r = bfs(sc, default_checks(), Options(depth=2))
    assert r.verdict == "pass" and r.bounded_by == "depth"
    assert [lv.new for lv in r.levels] == [19, 296]


def test_mutant_and_symmetric_scenarios_load() -> None:
    for name in ("mutants-restart", "mutants-failover", "mutants-isr", "mutants-shutdown",
                 "mutants-deletion", "symmetric"):
        sc = load(name)
        assert sc.description and sc.depth > 0
    assert load("symmetric").symmetry is True


def test_stop_is_a_sigterm_without_controlled_shutdown() -> None:
    from model_check.world.config import ControlledShutdownOf

    sc = loads('brokers = 2\ndepth = 3\n[[admin]]\nop = "stop"\nbroker = 2\n'
               '[[admin]]\nop = "controlled-shutdown"\nbroker = 1\n')
    assert sc.admin == (ControlledShutdownOf(2, controlled=False), ControlledShutdownOf(1))
    assert [op.describe() for op in sc.admin] == ["stop 2", "shutdown 1"]
    with pytest.raises(ScenarioError, match="controlled-shutdown, stop"):
        loads('brokers = 2\ndepth = 3\n[[admin]]\nop = "halt"\nbroker = 2\n')
