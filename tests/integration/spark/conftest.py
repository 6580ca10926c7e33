"""One Spark context (local[2], no UI, few partitions) for every Spark test of the session.

Checks that the tests build from closures live in ``spark_parity``; cloudpickle ships that
module by value, since the executors' Python does not have the tests directory on its path.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import spark_parity

from model_check.spark.session import spark_context

SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.default.parallelism": "2",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.memory": "1g",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: runs a local Spark context (Java, ~10 s to start)")
    config.addinivalue_line("markers", "slow: takes more than ~10 s (deselect: -m 'not slow')")


@pytest.fixture(scope="session")
def sc() -> Iterator[object]:
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(spark_parity)
    context = spark_context("local[2]", SPARK_CONF)
    try:
        yield context
    finally:
        context.stop()
