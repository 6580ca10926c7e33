"""The Spark context a check runs in, and the settings a report names.

``spark_context(master)`` returns the running context if there is one (a notebook, a test
fixture) and otherwise starts one: on ``master`` if given, else on the master
``spark-submit`` was given, else on ``local[*]``. In local mode the Python workers run this
interpreter (``PYSPARK_PYTHON`` unless set), so they import the same kcontrol code as the
driver; on a cluster they import what ``--py-files`` or the executors' environment
provides (README, "Model checking on Spark").
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

DEFAULT_MASTER = "local[*]"
APP_NAME = "kcontrol-check"
PARTITIONS_PER_CORE = 2
"""Default partitions on a cluster: two per core, so one slow task does not idle a core. In
local mode one per core: a task there is a Python round trip on the very cores that do the
work (~0.1 s on a loaded 2-core machine), and hashing spreads a level's states evenly."""

DRIVER_LEVEL_LIMIT = 2_000
"""A level whose input holds fewer successors than this runs in the driver
(``engine._Search``): on ``standard`` levels 1-5, 0.3 s of one core, where as Spark jobs
they took 3 s (the first job starts the Python workers)."""

_CONF = {
    "spark.ui.showConsoleProgress": "false",  # the check prints its own per-level lines
    "spark.python.worker.reuse": "true",
    "spark.rdd.compress": "true",  # persisted levels hold marshalled states: lz4 them
    # with spark.kcontrol.checkpointDir, a level's files go once the next level replaced it
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
}
_LOCAL_CONF = {
    # In local mode the JVM only moves bytes (shuffle, cache) while Python does the work;
    # the C1 compiler alone halves the JVM's CPU on a short run (5.5 -> 2.4 s on standard
    # to depth 7), which on a small machine is CPU taken from the Python workers.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
}


@dataclass(frozen=True)
class SparkSettings:
    master: str
    partitions: int
    spark_version: str
    default_parallelism: int
    app_id: str
    checkpoint: str  # "local" (localCheckpoint) or the reliable checkpoint directory
    partition_by: str = "zookeeper"  # which partition holds a state: "zookeeper" | "key"

    def as_dict(self) -> dict[str, object]:
        return {"master": self.master, "partitions": self.partitions,
                "partition_by": self.partition_by,
                "spark_version": self.spark_version,
                "default_parallelism": self.default_parallelism, "app_id": self.app_id,
                "checkpoint": self.checkpoint}


def spark_context(master: str | None = None, conf: dict[str, str] | None = None):  # noqa: ANN201
    """The active ``SparkContext``, or a new one (see the module docstring)."""
    from pyspark import SparkConf, SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        return active
    # Under spark-submit (or the pyspark shell) the driver talks to a JVM that was started
    # with the submit's configuration, master included; PySpark finds it by this variable.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    chosen = master or (None if submitted else DEFAULT_MASTER)
    sconf = SparkConf()
    if chosen is not None:
        sconf.setMaster(chosen)
    if not sconf.contains("spark.app.name"):
        sconf.setAppName(APP_NAME)
    local = chosen is not None and chosen.startswith("local")
    for key, value in {**_CONF, **(_LOCAL_CONF if local else {}), **(conf or {})}.items():
        if not sconf.contains(key):
            sconf.set(key, value)
    if local and not submitted:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    sc = SparkContext.getOrCreate(sconf)
    sc.setLogLevel("ERROR")
    return sc


def default_partitions(sc) -> int:  # noqa: ANN001
    per_core = 1 if sc.master.startswith("local") else PARTITIONS_PER_CORE
    return max(1, per_core * sc.defaultParallelism)


def settings(sc, partitions: int, checkpoint: str,  # noqa: ANN001
             partition_by: str = "zookeeper") -> SparkSettings:
    return SparkSettings(master=sc.master, partitions=partitions, spark_version=sc.version,
                         default_parallelism=sc.defaultParallelism,
                         app_id=sc.applicationId, checkpoint=checkpoint,
                         partition_by=partition_by)
