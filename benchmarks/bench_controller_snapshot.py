"""The controller's share of a model-checker step: snapshot + restore + 64-bit fingerprint
(blake2b of the pickled snapshot) of an active controller of a 3-broker, 2-partition
cluster. Run: .venv/bin/python benchmarks/bench_controller_snapshot.py
"""

from __future__ import annotations

import hashlib
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


def main() -> None:
    ctl = small()
    cfg = ctl.config
    n = 20_000
    t0 = time.perf_counter()
    for _ in range(n):
        s = ctl.snapshot()
        Controller.restore(s, cfg)
        int.from_bytes(hashlib.blake2b(pickle.dumps(s, 5), digest_size=8).digest(), "big")
    dt = (time.perf_counter() - t0) / n
    print(f"# bench_controller_snapshot  {time.strftime('%Y-%m-%d')}")
    print("| measure | value |")
    print("|---|---|")
    print(f"| snapshot+restore+fingerprint, one controller | {dt * 1e6:.1f} µs |")
    print(f"| per second | {1 / dt:,.0f} |")


if __name__ == "__main__":
    main()
