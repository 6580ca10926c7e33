"""Fencing a broker in KRaft mode (issue 23): a broker that leads 10,000 of 100,000 partitions
(1,000 topics x 100, replication factor 3 over 10 brokers) stops heartbeating; one ``Tick``
past its lease makes the quorum controller write a PartitionChangeRecord for every partition
it leads or is in the ISR of, and its FenceBrokerRecord -- target under 0.3 s here.

Timed: ``QuorumController.handle(Tick)`` on a controller whose image holds the cluster (a
fresh copy each run, built before timing). Baseline, in the same run, taking turns: one pass
over the same 100,000 partitions doing the least the fencing must do (look at the ISR and
leader of each, and build one small tuple for each partition the broker is in). A fixed
calibration (``sum(i*i for i in range(10**6))``, best of 5) is printed before and after.

    .venv/bin/python benchmarks/bench_kraft_fencing.py [--topics 1000] [--partitions 100]
        [--brokers 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsm.kraft.controller.config import QuorumControllerConfig  # noqa: E402
from fsm.kraft.controller.events import (  # noqa: E402
    AppendRecords,
    LeadershipGained,
    Replayed,
    Tick,
)
from fsm.kraft.controller.quorum_controller import QuorumController  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import (  # noqa: E402
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)

TARGET_SECONDS = 0.3
SESSION_MS = 18_000


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def cluster(topics: int, partitions: int, brokers: int) -> QuorumController:
    records: list = []
    for b in range(brokers):
        records.append(RegisterBrokerRecord(b, uuid_of(1000 + b), len(records)))
    for b in range(brokers):
        records.append(UnfenceBrokerRecord(b, b))
    for t in range(topics):
        tid = uuid_of(10_000 + t)
        records.append(TopicRecord(f"topic-{t:05d}", tid))
        for p in range(partitions):
            replicas = tuple((t + p + k) % brokers for k in range(3))
            records.append(PartitionRecord(p, tid, replicas, replicas, (), (), replicas[0]))
    ctl = QuorumController(QuorumControllerConfig(node_id=3000, cluster_id="bench",
                                                  session_timeout_ms=SESSION_MS))
    ctl.handle(Replayed(0, tuple(records)))
    ctl.handle(LeadershipGained(1, len(records), 0))
    return ctl


def fence_once(base: QuorumController, victim: int) -> tuple[float, int]:
    ctl = base.copy()
    for b in ctl.leases:
        if b != victim:
            ctl.leases[b] = 10 * SESSION_MS
    t = time.perf_counter()
    out = ctl.handle(Tick(SESSION_MS + 1))
    seconds = time.perf_counter() - t
    records = sum(len(e.records) for e in out if isinstance(e, AppendRecords))
    return seconds, records


def baseline_once(base: QuorumController, victim: int) -> float:
    t = time.perf_counter()
    out = []
    for tid, topic in base.image.topics.items():
        for pid, p in topic.partitions.items():
            if p.leader == victim or victim in p.isr:
                out.append((tid, pid, p.leader == victim))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--brokers", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    cal0 = calibration()
    base = cluster(a.topics, a.partitions, a.brokers)
    victim = 0
    led = sum(1 for t in base.image.topics.values() for p in t.partitions.values()
              if p.leader == victim)
    fences, baselines, records = [], [], 0
    for _ in range(a.runs):
        s, records = fence_once(base, victim)
        fences.append(s)
        baselines.append(baseline_once(base, victim))
    cal1 = calibration()
    best, floor = min(fences), min(baselines)
    total = a.topics * a.partitions
    print(f"# KRaft fencing: {platform.node()} python {platform.python_version()} "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"calibration sum(i*i) best of 5: {cal0:.3f} s before, {cal1:.3f} s after")
    print(f"{'partitions':>10} {'led':>7} {'records':>8} {'fence s':>8} {'baseline s':>10} "
          f"{'ratio':>6} {'target':>7} {'verdict':>8}")
    print(f"{total:>10} {led:>7} {records:>8} {best:>8.3f} {floor:>10.3f} "
          f"{best / floor:>6.1f} {TARGET_SECONDS:>7.2f} "
          f"{'ok' if best < TARGET_SECONDS else 'MISSED':>8}")


if __name__ == "__main__":
    main()
