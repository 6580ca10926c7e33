"""``kcontrol check`` for Raft scenarios (``specs/scenarios/raft/``): the object-world command
(``model_check.objects.command``) over the Raft kind -- the same options and table as the
other checkers -- and, with ``--engine spark``, the object-world Spark engine
(``model_check.objects.spark``: the same states level by level, the same shortest
counterexample; a mutant applied on the executors too). Not for Raft: ``--symmetry``,
``--graph``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from model_check.memory import rss_mib_text
from model_check.objects import command
from model_check.objects.kind import Reached
from model_check.objects.search import trace_lines
from model_check.raft.kind import RAFT
from model_check.raft.scenario import is_raft
from model_check.search import Level

__all__ = ["is_raft", "run", "run_spark"]


def run(console: Console, scenario: str, mutant: str | None, depth: int | None,
        max_states: int | None, random_: bool, steps: int, seed: int, json_out: Path | None,
        trace_out: Path, coverage_on: bool) -> int:
    """Run the check; the exit code (0 pass, 1 violation)."""
    return command.run(console, RAFT, scenario, mutant, depth, max_states, random_, steps,
                       seed, json_out, trace_out, coverage_on)


def run_spark(console: Console, scenario: str, mutant: str | None, depth: int | None,
              max_states: int | None, master: str | None, partitions: int | None,
              json_out: Path | None, trace_out: Path, coverage_on: bool) -> int:
    """The breadth-first search on Spark; the exit code. Raises ``SparkUnavailable`` when no
    Spark context can be started."""
    from model_check.objects.spark.engine import KindPatch, ObjectSparkOptions, spark_bfs
    from model_check.spark.cli import SparkUnavailable
    from model_check.spark.session import spark_context

    sc = RAFT.load(scenario)
    console.print(f"[bold]check[/] {sc.name} ({RAFT.title(sc)}) engine=spark bfs"
                  + (f" mutant={mutant}" if mutant else ""))
    try:
        context = spark_context(master)
    except Exception as e:  # noqa: BLE001 -- whatever PySpark raises, the check cannot run
        raise SparkUnavailable(f"cannot start Spark (master {master or 'default'}): "
                               f"{str(e).strip()[:200] or type(e).__name__}") from e
    reached: Reached | None = set() if coverage_on else None
    console.print(f"{'level':>5} {'frontier':>9} {'generated':>10} {'new':>9} "
                  f"{'dupes':>9} {'seconds':>8} {'rss MiB':>8}")

    def on_level(lv: Level) -> None:
        console.print(f"{lv.depth:>5} {lv.frontier:>9} {lv.generated:>10} {lv.new:>9} "
                      f"{lv.duplicates:>9} {lv.seconds:>8.2f} {rss_mib_text():>8}")

    options = ObjectSparkOptions(master, partitions,
                                 KindPatch(RAFT.name, mutant) if mutant else None)
    with RAFT.patched(mutant):
        result = spark_bfs(RAFT, sc, depth, max_states, options, on_level, context,
                           reached)
        trace = trace_lines(RAFT, sc, result.result.violation.path) \
            if result.result.violation is not None else []
    spark = result.settings.as_dict() | {"jobs": result.jobs}
    console.print(f"spark {spark['spark_version']} master={spark['master']} "
                  f"partitions={spark['partitions']} level jobs={result.jobs}", markup=False)
    return command.finish(console, RAFT, sc, result.result, trace, mutant, reached,
                          json_out, trace_out, {"spark": spark})
