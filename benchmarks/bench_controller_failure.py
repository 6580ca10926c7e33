"""A broker leading ~10,000 of 100,000 partitions (6 brokers, RF 3) fails: time for the
controller to decide and produce every effect (the ZkWrite round and the WriteResult
round with its requests). Baseline: building 10,000 SetDataOps in a plain loop.

Run: .venv/bin/python benchmarks/bench_controller_failure.py
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _controller_cluster import BROKERS, cluster_snapshot, loaded_controller  # noqa: E402

from fsm.effects import SendRequest, SetDataOp, ZkWrite  # noqa: E402
from fsm.events import BrokerChange, WriteResult  # noqa: E402
from fsm.values import BrokerInfo, LeaderAndIsr  # noqa: E402

VICTIM = 1


def one_run(snap) -> tuple[float, float, int, int, int]:
    ctl = loaded_controller(snap)
    led = sum(1 for tp in ctl.ctx.states
              if ctl.ctx.states[tp].leader_and_isr.leader == VICTIM)
    event = BrokerChange(tuple(BrokerInfo(b, 1000 + b) for b in BROKERS if b != VICTIM))
    gc.collect()
    gc.disable()
    t0 = time.perf_counter()
    out = ctl.handle(event)
    t1 = time.perf_counter()
    (w,) = [e for e in out if isinstance(e, ZkWrite)]
    out2 = ctl.handle(WriteResult(w.token))
    t2 = time.perf_counter()
    gc.enable()
    reqs = sum(1 for e in out2 if isinstance(e, SendRequest))
    return t1 - t0, t2 - t1, len(w.ops), reqs, led


def baseline(n: int) -> float:
    li = LeaderAndIsr(2, 1, (2, 3), 1)
    t0 = time.perf_counter()
    ops = []
    for i in range(n):
        ops.append(SetDataOp(f"/brokers/topics/topic-{i // 1000:04d}/partitions/{i % 1000}/state",
                             li, 0))
    return time.perf_counter() - t0


def main() -> None:
    snap = cluster_snapshot()
    runs = [one_run(snap) for _ in range(3)]
    best = min(runs, key=lambda r: r[0] + r[1])  # best of 3 (a shared, loaded machine)
    decide, result = best[0], best[1]
    _, _, n_ops, n_reqs, led = runs[0]
    total = decide + result
    median_total = statistics.median(r[0] + r[1] for r in runs)
    base = min(baseline(n_ops) for _ in range(5))
    print(f"# bench_controller_failure  python {platform.python_version()}  "
          f"{platform.machine()}  {time.strftime('%Y-%m-%d')}")
    print("| measure | value |")
    print("|---|---|")
    print("| partitions in cluster | 100,000 (6 brokers, RF 3) |")
    print(f"| partitions led by the failed broker | {led:,} |")
    print(f"| partition state writes (ops in the ZkWrite) | {n_ops:,} |")
    print(f"| requests produced | {n_reqs} |")
    print(f"| decide (BrokerChange -> ZkWrite) | {decide * 1e3:.1f} ms |")
    print(f"| WriteResult -> requests | {result * 1e3:.1f} ms |")
    print(f"| **total** (best of 3) | **{total * 1e3:.1f} ms** |")
    print(f"| total, median of 3 | {median_total * 1e3:.1f} ms |")
    print(f"| per written partition | {total / n_ops * 1e6:.1f} µs |")
    print(f"| baseline: build {n_ops:,} SetDataOps in a loop (best of 5) | {base * 1e3:.1f} ms |")
    print(f"| ratio total / baseline | {total / base:.1f}x |")
    print(f"| load average (1 min) | {os.getloadavg()[0]:.2f} |")
    assert total < 1.0, "controller failure handling must take under 1 s"


if __name__ == "__main__":
    main()
