"""``kcontrol check --engine spark``: the same report as the local engine, plus Spark's
settings; the options that only make sense with Spark are refused without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import fast_exit, main

TIMINGS = {"seconds", "states_per_second"}


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(main, list(args))


def _report(path: Path) -> dict:
    doc = json.loads(path.read_text())
    for lv in doc["levels"]:
        del lv["seconds"]
    return doc


@pytest.mark.spark
@pytest.mark.integration
def test_smoke_on_spark_reports_what_the_local_engine_reports(sc, tmp_path: Path,  # noqa: ANN001
                                                              monkeypatch) -> None:  # noqa: ANN001
    local_json, spark_json = tmp_path / "local.json", tmp_path / "spark.json"
    r = run("check", "smoke", "--json", str(local_json))
    assert r.exit_code == 0, r.output
    monkeypatch.setattr(fast_exit, "_requested", False)
    r = run("check", "smoke", "--engine", "spark", "--master", "local[2]", "--partitions", "3",
            "--driver-limit", "0", "--json", str(spark_json))
    assert r.exit_code == 0, r.output
    assert not fast_exit.requested()  # Spark's exit hooks stop the context and its JVM
    assert "verdict: pass" in r.output and \
        "master=local[2] partitions=3 by zookeeper" in r.output
    local, spark = _report(local_json), _report(spark_json)
    assert set(spark) == set(local) | {"spark"}
    assert spark.pop("engine") == "spark" and local.pop("engine") == "local"
    settings = spark.pop("spark")
    assert settings["master"] == "local[2]" and settings["partitions"] == 3
    assert settings["partition_by"] == "zookeeper"
    assert (settings["driver_limit"], settings["driver_levels"]) == (0, 0)  # all Spark jobs
    assert settings["spark_version"] == sc.version
    assert {k: v for k, v in spark.items() if k not in TIMINGS} == \
        {k: v for k, v in local.items() if k not in TIMINGS}
    assert spark["bounded_by"] == "exhausted" and spark["distinct_states"] > 100


@pytest.mark.spark
@pytest.mark.integration
def test_a_mutant_on_spark_gives_the_local_trace_files_and_they_replay(sc, tmp_path: Path  # noqa: ANN001
                                                                     ) -> None:
    """The mutant is applied on the executors: the Spark run finds the same counterexample,
    and saves the same text and Mermaid files as the local run."""
    runs = {}
    for engine in ("local", "spark"):
        out, traces = tmp_path / f"{engine}.json", tmp_path / engine
        r = run("check", "mutants-shutdown", "--mutant", "early-controlled-shutdown-reply",
                "--engine", engine, "--json", str(out), "--trace-out", str(traces))
        assert r.exit_code == 1, r.output
        runs[engine] = json.loads(out.read_text())
    local, spark = runs["local"], runs["spark"]
    # the default: the first levels in the driver (the mutant applied there by the command)
    assert spark["spark"]["driver_levels"] >= 1
    for key in ("verdict", "invariant", "detail", "violation_depth", "trace", "distinct_states",
                "states_generated", "depth", "mutant"):
        assert spark[key] == local[key], key
    for kind in ("text", "mermaid"):
        assert Path(spark["trace_files"][kind]).read_text() == \
            Path(local["trace_files"][kind]).read_text()
    r = run("replay", spark["trace_files"]["replay"])
    assert r.exit_code == 1 and "REPRODUCED" in r.output, r.output


@pytest.mark.parametrize("args", [("--master", "local[2]"), ("--partitions", "2"),
                                  ("--partition-by", "key"), ("--driver-limit", "5"),
                                  ("--engine", "spark", "--driver-limit", "-1"),
                                  ("--engine", "spark", "--partition-by", "nope"),
                                  ("--engine", "spark", "--random"),
                                  ("--engine", "spark", "--graph", "g.graphml")])
def test_options_the_engine_cannot_take_are_usage_errors(args: tuple[str, ...]) -> None:
    r = run("check", "smoke", *args)
    assert r.exit_code == 2 and "error:" in r.output.lower()


@pytest.mark.spark
@pytest.mark.integration
def test_spark_submit_runs_the_check_as_the_readme_shows(tmp_path: Path,
                                                         monkeypatch) -> None:  # noqa: ANN001
    """``spark-submit ... model_check/spark/submit.py SCENARIO.toml --partitions N --json F``
    (README, "Model checking on Spark"): the checker's own command in the driver that
    spark-submit starts, on its master; the same counts as the local engine."""
    root = Path(__file__).resolve().parents[3]
    submit = Path(sys.executable).parent / "spark-submit"
    if not submit.exists():
        pytest.skip("no spark-submit next to this interpreter (pyspark ships one)")
    out, local_json = tmp_path / "smoke.json", tmp_path / "local.json"
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
         str(root / "model_check" / "spark" / "submit.py"),
         str(root / "specs" / "scenarios" / "smoke.toml"), "--partitions", "2",
         "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "verdict: pass" in done.stdout
    spark = json.loads(out.read_text())
    assert spark["engine"] == "spark" and spark["spark"]["master"] == "local[2]"
    assert spark["spark"]["partitions"] == 2
    monkeypatch.setattr(fast_exit, "_requested", False)  # restored after the local check
    r = run("check", "smoke", "--json", str(local_json))
    assert r.exit_code == 0, r.output
    local = json.loads(local_json.read_text())
    for key in ("verdict", "distinct_states", "states_generated", "depth", "bounded_by"):
        assert spark[key] == local[key], key
