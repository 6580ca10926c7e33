"""The controller's share of a model-checker step: snapshot + restore + 64-bit fingerprint
(blake2b of the pickled snapshot) of an active controller of a 3-broker, 2-partition
cluster. Baseline, in the same run: pickle + blake2b of a plain tuple whose pickle has the
same size. Best of 3 (the machine is shared). Run:
.venv/bin/python benchmarks/bench_controller_snapshot.py
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsm.controller import Controller, ControllerConfig  # noqa: E402
from fsm.effects import ZkWrite  # noqa: E402
from fsm.events import ClusterLoaded, ControllerChange, WriteResult  # noqa: E402
from fsm.values import (  # noqa: E402
    BrokerInfo,
    ClusterSnapshot,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)


def small() -> Controller:
    cfg = ControllerConfig(broker_id=1)
    ctl = Controller(cfg)
    for ev in (ControllerChange(None, 0, 0), ClusterLoaded(ClusterSnapshot(
            live_brokers=tuple(BrokerInfo(b, 10 + b) for b in (1, 2, 3)),
            topics=(("t", TopicAssignment.of({0: (1, 2), 1: (2, 3)})),),
            partition_states=((("t", 0), PartitionStateZk(LeaderAndIsr(1, 0, (1, 2), 1), 0)),
                              (("t", 1), PartitionStateZk(LeaderAndIsr(2, 0, (2, 3), 1), 0)))))):
        for e in ctl.handle(ev):
            if isinstance(e, ZkWrite):
                ctl.handle(WriteResult(e.token))
    return ctl


def fingerprint(s: tuple) -> int:
    return int.from_bytes(hashlib.blake2b(pickle.dumps(s, 5), digest_size=8).digest(), "big")


def plain_tuple_of_size(size: int) -> tuple:
    """A tuple of builtins (str/int pairs) whose protocol-5 pickle is about ``size`` bytes."""
    n = 1
    while len(pickle.dumps(tuple((f"k{i}", i) for i in range(n + 1)), 5)) <= size:
        n += 1
    return tuple((f"k{i}", i) for i in range(n))


def best_interleaved(fns: dict, n: int, repeat: int = 3) -> dict[str, float]:
    """Best of ``repeat`` per function; the functions take turns within each repetition,
    so the baseline sees the same machine load as what it is compared with."""
    out: dict[str, float] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            out[name] = min(out.get(name, float("inf")), (time.perf_counter() - t0) / n)
    return out


def main() -> None:
    ctl = small()
    cfg = ctl.config
    snap = ctl.snapshot()
    size = len(pickle.dumps(snap, 5))
    base = plain_tuple_of_size(size)
    n = 20_000

    def step() -> None:
        s = ctl.snapshot()
        Controller.restore(s, cfg)
        fingerprint(s)

    t = best_interleaved({
        "step": step,
        "snapshot": ctl.snapshot,
        "restore": lambda: Controller.restore(snap, cfg),
        "fingerprint": lambda: fingerprint(snap),
        "baseline": lambda: fingerprint(base),
    }, n)
    dt, t_snap, t_restore, t_fp, t_base = (
        t["step"], t["snapshot"], t["restore"], t["fingerprint"], t["baseline"])
    print(f"# bench_controller_snapshot  {time.strftime('%Y-%m-%d')}  "
          f"load average {os.getloadavg()[0]:.2f}")
    print("| measure | value |")
    print("|---|---|")
    print(f"| pickled snapshot | {size} bytes |")
    print(f"| **snapshot+restore+fingerprint, one controller** (best of 3) | "
          f"**{dt * 1e6:.1f} µs** |")
    print(f"| snapshot() | {t_snap * 1e6:.1f} µs |")
    print(f"| Controller.restore() | {t_restore * 1e6:.1f} µs |")
    print(f"| fingerprint (pickle protocol 5 + blake2b-64) | {t_fp * 1e6:.1f} µs |")
    print(f"| baseline: fingerprint of a plain tuple, {len(pickle.dumps(base, 5))}-byte pickle "
          f"| {t_base * 1e6:.1f} µs |")
    print(f"| ratio step / baseline | {dt / t_base:.1f}x |")
    print(f"| per second | {1 / dt:,.0f} |")


if __name__ == "__main__":
    main()
