"""``kcontrol check`` / ``kcontrol replay`` through click: exit codes, report, trace files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from mc_support import MUTANT_TOML

from adapters.cli import main


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(main, list(args))


def test_smoke_passes_with_exit_0_and_a_json_report(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run("check", "smoke", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert "verdict: pass" in r.output and "distinct states" in r.output
    doc = json.loads(out.read_text())
    for key in ("verdict", "states_generated", "distinct_states", "depth", "seconds",
                "scenario", "engine", "levels"):
        assert key in doc
    assert doc["verdict"] == "pass" and doc["engine"] == "local"
    assert sum(lv["new"] for lv in doc["levels"]) + 1 == doc["distinct_states"]


def test_violation_exits_1_and_the_trace_replays(tmp_path: Path, broker_epoch_bug) -> None:
    scenario = tmp_path / "mutant.toml"
    scenario.write_text(MUTANT_TOML)
    out, traces = tmp_path / "r.json", tmp_path / "traces"
    r = run("check", str(scenario), "--json", str(out), "--trace-out", str(traces))
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "violation" and doc["invariant"] and doc["trace"]
    assert all(isinstance(line, str) and "\n" not in line for line in doc["trace"])
    replay_file = Path(doc["trace_files"]["replay"])
    md = Path(doc["trace_files"]["mermaid"]).read_text()
    assert "sequenceDiagram" in md and "participant ZK as ZooKeeper" in md
    assert "crash 2" in Path(doc["trace_files"]["text"]).read_text()
    r = run("replay", str(replay_file))
    assert r.exit_code == 1, r.output
    assert "REPRODUCED" in r.output and doc["invariant"] in r.output


def test_replay_on_the_fixed_core_exits_0(tmp_path: Path) -> None:
    from model_check import mutants

    scenario = tmp_path / "mutant.toml"
    scenario.write_text(MUTANT_TOML)
    with mutants.patched("broker-ignores-broker-epoch"):
        r = run("check", str(scenario), "--trace-out", str(tmp_path))
        assert r.exit_code == 1
    (replay_file,) = tmp_path.glob("*.replay.json")
    r = run("replay", str(replay_file))
    assert r.exit_code == 0, r.output
    assert "NOT REPRODUCED" in r.output


def test_scenario_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("brokers = 2\ndepth = 3\n[faults]\nbrokre_crash = 1\n")
    r = run("check", str(bad))
    assert r.exit_code == 2
    assert "brokre_crash" in r.output and "bad.toml" in r.output
    assert run("check", "no-such-scenario").exit_code == 2


def test_usage_errors_exit_2() -> None:
    assert run("check").exit_code == 2
    assert run("check", "smoke", "--engine", "nope").exit_code == 2


def test_random_walks_from_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run("check", "smoke", "--random", "--steps", "300", "--seed", "3", "--json", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["engine"] == "random" and doc["seed"] == 3 and doc["states_generated"] == 300
