"""``floor_records_per_second`` is importable by other benchmarks and measures what it says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_floor_function_runs_small(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_raft_log", ROOT / "benchmarks" / "bench_raft_log.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rates = bench.floor_records_per_second([1, 10], directory=tmp_path, fsyncs=3, rounds=1)
    assert set(rates) == {1, 10} and all(r > 0 for r in rates.values())
    assert list(tmp_path.iterdir()) == []  # its files are gone
