"""``kcontrol check`` / ``kcontrol replay`` through click: exit codes, report, trace files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from mc_support import MUTANT_TOML

from adapters.cli import fast_exit, main


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


def _console_script(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The installed command's entry point (``adapters.cli:run``), in a process of its own."""
    return subprocess.run([sys.executable, "-c", "from adapters.cli import run; run()", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def test_a_finished_local_check_ends_the_process_at_once_with_every_output(
        tmp_path: Path) -> None:
    """The console script skips the interpreter's teardown after a local check: the
    verdict, the report and the trace files are complete, the exit code is kept."""
    ok = _console_script("check", "smoke", "--json", "ok.json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().endswith("verdict: pass")
    assert json.loads((tmp_path / "ok.json").read_text())["verdict"] == "pass"
    bad = _console_script("check", "smoke", "--mutant", "leader-epoch-not-bumped",
                          "--json", "bad.json", "--trace-out", "traces", cwd=tmp_path)
    assert bad.returncode == 1, bad.stderr
    assert "verdict: violation" in bad.stdout and bad.stdout.rstrip().endswith(".replay.json")
    assert json.loads((tmp_path / "bad.json").read_text())["verdict"] == "violation"
    assert len(list((tmp_path / "traces").iterdir())) == 3
    usage = _console_script("check", "no-such-scenario", cwd=tmp_path)
    assert usage.returncode == 2 and "error:" in usage.stderr


def test_only_a_finished_local_check_asks_to_skip_the_teardown(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(fast_exit, "_requested", False)
    assert run("check", "no-such-scenario").exit_code == 2
    assert not fast_exit.requested()  # a usage error: nothing was held
    assert run("check", "smoke").exit_code == 0
    assert fast_exit.requested()
