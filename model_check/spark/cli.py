"""``kcontrol check --engine spark``: what the command needs from the Spark engine, kept here
so the command itself only parses options and prints."""

from __future__ import annotations

from collections.abc import Callable

from model_check.checks import Checks
from model_check.coverage import Coverage
from model_check.scenario import Scenario
from model_check.search import Level, Options, Result
from model_check.spark.session import DRIVER_LEVEL_LIMIT

MASTER_HELP = ("With --engine spark, the Spark master (local[N], spark://HOST:PORT, yarn and "
               "so on). Default: spark-submit's --master, else local[*].")
PARTITIONS_HELP = ("With --engine spark, the partitions of the frontier and of the visited "
                   "fingerprints. Default: 1 per core in local mode, 2 per core on a cluster.")
PARTITION_BY_HELP = ("With --engine spark, which partition holds a state: by its ZooKeeper "
                     "component (the states sharing one are expanded by one task, whose "
                     "memos then serve them all), or by its key (even whatever the "
                     "scenario). Symmetry reduction always uses the key.")

DRIVER_LIMIT_HELP = ("With --engine spark, a level whose input holds fewer successors than "
                     "this runs in the driver, by the same task code, without a Spark job (the "
                     "first few levels: a job costs more than their work); with 0 every level "
                     f"is a Spark job. Default: {DRIVER_LEVEL_LIMIT}.")


class SparkUnavailable(RuntimeError):
    """No Spark context could be started (no Java, a master that cannot be reached...)."""


def run_spark(scenario: Scenario, checks: Checks, options: Options, master: str | None,
              partitions: int | None, on_level: Callable[[Level], None] | None = None,
              mutant: str | None = None, partition_by: str = "zookeeper",
              driver_limit: int | None = None, coverage: Coverage | None = None
              ) -> tuple[Result, dict[str, object]]:
    """Run the Spark engine; return its result and the Spark settings for the report.
    ``mutant``: the name of a ``model_check.mutants`` mutant the caller has applied in this
    process; it is applied on the executors too."""
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        raise SparkUnavailable("PySpark is not installed: pip install 'kcontrol[spark]' "
                               "(make run and make test install it)") from e
    from model_check.spark.engine import SparkOptions, spark_bfs
    from model_check.spark.patches import MutantPatch
    from model_check.spark.session import spark_context

    try:
        sc = spark_context(master)
    except Exception as e:  # noqa: BLE001 -- whatever PySpark raises, the check cannot run
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SparkUnavailable(f"cannot start Spark (master {master or 'default'}): "
                               f"{first_line}") from e
    patch = MutantPatch(mutant) if mutant else None
    limit = DRIVER_LEVEL_LIMIT if driver_limit is None else driver_limit
    run = spark_bfs(scenario, checks, options,
                    SparkOptions(master, partitions, patch, partition_by, limit), on_level,
                    sc=sc, coverage=coverage)
    return run.result, run.settings.as_dict() | {
        "trace_lookups": run.trace_lookups, "driver_limit": limit,
        "driver_levels": run.driver_levels}


def describe(spark: dict[str, object]) -> str:
    return (f"spark {spark['spark_version']} master={spark['master']} "
            f"partitions={spark['partitions']} by {spark['partition_by']} "
            f"parallelism={spark['default_parallelism']} "
            f"checkpoint={spark['checkpoint']} "
            f"levels in the driver={spark['driver_levels']} (below {spark['driver_limit']} "
            f"successors)")
