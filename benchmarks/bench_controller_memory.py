"""Controller state for 100,000 partitions (6 brokers, RF 3), measured with tracemalloc:
what stays allocated after ClusterLoaded once the event itself is dropped.

Run: .venv/bin/python benchmarks/bench_controller_memory.py
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _controller_cluster import cluster_snapshot, loaded_controller  # noqa: E402


def main() -> None:
    n = 100_000
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    snap = cluster_snapshot(n)
    ctl = loaded_controller(snap)
    del snap
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    per = used / n
    print(f"# bench_controller_memory  {time.strftime('%Y-%m-%d')}")
    print("| measure | value |")
    print("|---|---|")
    print(f"| partitions | {n:,} |")
    print(f"| controller state | {used / 2**20:.1f} MiB |")
    print(f"| per partition | {per:.0f} B |")
    assert ctl.is_active
    assert per <= 1024, "controller state must stay within 1 KiB per partition"


if __name__ == "__main__":
    main()
