"""``kcontrol check`` for object worlds (``kind.WorldKind``: KRaft, Raft): the same options
and table as ZooKeeper mode -- a row per level, the summary, the verdict, the trace saved to
``--trace-out``, the JSON report -- over the kind's scenarios."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from model_check.memory import rss_mib_text
from model_check.objects.kind import Reached, WorldKind
from model_check.objects.search import bfs, trace_lines
from model_check.objects.walk import walks
from model_check.progress import Progress
from model_check.search import Level, Result


def run(console: Console, kind: WorldKind, scenario: str, mutant: str | None,
        depth: int | None, max_states: int | None, random_: bool, steps: int, seed: int,
        json_out: Path | None, trace_out: Path, coverage_on: bool, engine: str = "local",
        master: str | None = None, partitions: int | None = None) -> int:
    """Run the check; the exit code (0 pass, 1 violation). ``engine="spark"``: the search
    runs on Spark (``objects.spark``; ``master`` and ``partitions`` as for ZooKeeper mode);
    raises ``spark_cli.SparkUnavailable`` when it cannot start."""
    sc = kind.load(scenario)
    mode = f"random walks: {steps} steps, seed {seed}" if random_ else "bfs"
    console.print(f"[bold]check[/] {sc.name} ({kind.title(sc)}) {mode}"
                  + (" engine=spark" if engine == "spark" else "")
                  + (f" mutant={mutant}" if mutant else ""))
    spark: dict[str, Any] | None = None
    reached: Reached | None = set() if coverage_on else None
    with kind.patched(mutant):
        if random_:
            with Progress(f"{sc.name} --random", steps, "steps") as bar:
                result = walks(kind, sc, steps, seed, depth, on_walk=lambda w: bar.advance(
                    w.generated), reached=reached)
        else:
            console.print(f"{'level':>5} {'frontier':>9} {'generated':>10} {'new':>9} "
                          f"{'dupes':>9} {'seconds':>8} {'rss MiB':>8}")

            def on_level(lv: Level) -> None:
                console.print(f"{lv.depth:>5} {lv.frontier:>9} {lv.generated:>10} "
                              f"{lv.new:>9} {lv.duplicates:>9} {lv.seconds:>8.2f} "
                              f"{rss_mib_text():>8}")

            with console.status("exploring ..."):
                if engine == "spark":
                    result, spark = _spark(kind, sc, depth, max_states, on_level, reached,
                                           mutant, master, partitions)
                else:
                    result = bfs(kind, sc, depth, max_states, on_level, reached)
        trace = trace_lines(kind, sc, result.violation.path) \
            if result.violation is not None else []
    if spark is not None:
        console.print(f"spark {spark['spark_version']} master={spark['master']} "
                      f"partitions={spark['partitions']} by key "
                      f"parallelism={spark['default_parallelism']} jobs={spark['jobs']} "
                      f"(every level a Spark job)", markup=False)
    return finish(console, kind, sc, result, trace, mutant, reached, json_out, trace_out,
                  None if spark is None else {"spark": spark})


def _spark(kind: WorldKind, sc: Any, depth: int | None, max_states: int | None,
           on_level: Callable[[Level], None], reached: Reached | None, mutant: str | None,
           master: str | None, partitions: int | None) -> tuple[Result, dict[str, Any]]:
    """The Spark engine, started as ``kcontrol check --engine spark`` starts it for
    ZooKeeper mode (``spark.cli``); the result and the settings for the report."""
    from model_check.spark.cli import SparkUnavailable

    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        raise SparkUnavailable("PySpark is not installed: pip install 'kcontrol[spark]' "
                               "(make run and make test install it)") from e
    from model_check.objects.spark.engine import KindPatch, ObjectSparkOptions, spark_bfs
    from model_check.spark.session import spark_context

    try:
        context = spark_context(master)
    except Exception as e:  # noqa: BLE001 -- whatever PySpark raises, the check cannot run
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SparkUnavailable(f"cannot start Spark (master {master or 'default'}): "
                               f"{first_line}") from e
    patch = KindPatch(kind.name, mutant) if mutant else None
    run = spark_bfs(kind, sc, depth, max_states,
                    ObjectSparkOptions(master, partitions, patch), on_level, context, reached)
    return run.result, run.settings.as_dict() | {"jobs": run.jobs}


def finish(console: Console, kind: WorldKind, sc: Any, result: Result, trace: list[str],
           mutant: str | None, reached: Reached | None, json_out: Path | None,
           trace_out: Path, extra: dict[str, Any] | None = None) -> int:
    """Print the coverage, the summary, the verdict and the trace; save the trace and the
    JSON report; the exit code."""
    if reached is not None:
        for line in kind.coverage_lines(reached):
            console.print(line, markup=False)
    console.print(f"states generated {result.states_generated}, distinct states "
                  f"{result.distinct_states}, depth {result.depth} ({result.bounded_by}), "
                  f"{result.seconds:.2f}s, {result.states_per_second:.0f} states/s")
    saved = None
    if result.violation is None:
        console.print("[bold green]verdict: pass[/]")
    else:
        v = result.violation
        console.print(f"[bold red]verdict: violation[/] of {v.invariant}: {v.detail}")
        console.print(f"trace ({len(trace)} steps after the setup of {result.setup_steps}):")
        for i, line in enumerate(trace, 1):
            console.print(f"  {i:>3} {line}", markup=False)
        trace_out.mkdir(parents=True, exist_ok=True)
        saved = trace_out / f"{sc.name}-{v.invariant}{'-' + mutant if mutant else ''}.txt"
        saved.write_text(f"# {sc.name}: {v.invariant}: {v.detail}\n" + "\n".join(trace) + "\n")
        console.print(f"  trace: {saved}", markup=False)
    if json_out is not None:
        doc = _report(kind, result, trace, saved, mutant, reached) | (extra or {})
        text = json.dumps(doc, indent=2)
        if str(json_out) == "-":
            print(text)
        else:
            json_out.write_text(text + "\n")
    return 1 if result.violation is not None else 0


def _report(kind: WorldKind, result: Result, trace: list[str], saved: Path | None,
            mutant: str | None, reached: Reached | None) -> dict:
    doc: dict = {
        "verdict": result.verdict, "scenario": result.scenario, "mode": kind.name,
        "engine": result.engine, "states_generated": result.states_generated,
        "distinct_states": result.distinct_states, "depth": result.depth,
        "seconds": round(result.seconds, 3), "bounded_by": result.bounded_by,
        "setup_steps": result.setup_steps,
        "levels": [{"depth": lv.depth, "frontier": lv.frontier, "generated": lv.generated,
                    "new": lv.new, "duplicates": lv.duplicates,
                    "seconds": round(lv.seconds, 3)} for lv in result.levels],
    }
    if result.violation is not None:
        doc["violation"] = {"invariant": result.violation.invariant,
                            "detail": result.violation.detail, "trace": trace,
                            "file": None if saved is None else str(saved)}
    if mutant:
        doc["mutant"] = mutant
    if reached is not None:
        doc["coverage"] = {"reached": sorted(" ".join(i) for i in reached),
                           "unreached": [" ".join(i) for i in kind.coverage_unreached(reached)]}
    return doc
