"""The object-world tests: ``toy_kind`` importable by name (pytest puts this directory on
``sys.path``), and for the Spark parity tests one Spark context (local[2], no UI) for the
session -- the same settings as ``tests/integration/spark``'s, and the same context when both
run in one session (``spark_context`` returns the running one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
    pytest.importorskip("pyspark")
    from model_check.spark.session import spark_context

    context = spark_context("local[2]", SPARK_CONF)
    try:
        yield context
    finally:
        context.stop()
