"""The ZooKeeper-mode core's failover work: ``Controller.handle(ClusterLoaded)`` for a large
cluster, in process (no ZooKeeper, no sockets) -- the load, the state machines' startup, and
the full LeaderAndIsr and UpdateMetadata requests to every live broker (issue 26: 19-55 s at
1,000,000 partitions on a loaded machine, after the load itself).

The input is what ``bench_failover_million.py``'s reader hands the core: ``topics`` x
``partitions`` (default 10,000 x 100), replication factor 3 over ``brokers`` (30) registered
brokers, replicas ``(t + p + k) % brokers``, the first replica leading with the whole
assignment in the ISR, leader epoch ``p % 5``, controller epoch 1, znode version 0; equal
states share one value, as the reader's memo makes them. Every broker is live: no election,
one round, the full requests at once.

Timed: CPU seconds (``time.process_time``) of ``handle(ClusterLoaded)`` on a fresh, elected
controller, the collector off as ``ControllerService`` has it (``CollectorPause``); best and
median of ``--runs``. Baseline, same run, taking turns: the output's floor -- one
``LeaderAndIsrPartition`` and one ``UpdateMetadataPartition`` built per partition from its
state, nothing else. Calibration ``sum(i*i for i in range(10**6))``, best of 3, before and
after.

    .venv/bin/python benchmarks/bench_cluster_loaded.py [--topics 10000] [--partitions 100]
        [--brokers 30] [--runs 3] [--code DIR]

``--code DIR`` runs another checkout's core (e.g. ``git archive REV | tar -x -C DIR``) for a
before/after comparison.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import timeit
from pathlib import Path

if "--code" in sys.argv:
    CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
else:
    CODE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CODE))

from fsm.controller import Controller, ControllerConfig  # noqa: E402
from fsm.effects import SendRequest, ZkWrite  # noqa: E402
from fsm.events import ClusterLoaded, ControllerChange, WriteResult  # noqa: E402
from fsm.requests import (  # noqa: E402
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import (  # noqa: E402
    BrokerInfo,
    ClusterSnapshot,
    Endpoint,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def snapshot(topics: int, partitions: int, brokers: int) -> ClusterSnapshot:
    live = tuple(BrokerInfo(b, 4_294_967_296 + b, (Endpoint("PLAINTEXT", "h", 9092 + b),))
                 for b in range(brokers))
    memo: dict[tuple[int, int, tuple[int, ...]], PartitionStateZk] = {}
    assignments = []
    states = []
    for t in range(topics):
        name = f"topic-{t:04d}"
        reps = {p: tuple((t + p + k) % brokers for k in range(3)) for p in range(partitions)}
        assignments.append((name, TopicAssignment.of(reps)))
        for p in range(partitions):
            key = (reps[p][0], p % 5, reps[p])
            st = memo.get(key)
            if st is None:
                st = memo[key] = PartitionStateZk(LeaderAndIsr(key[0], key[1], key[2], 1), 0)
            states.append(((name, p), st))
    return ClusterSnapshot(live_brokers=live, topics=tuple(assignments),
                           partition_states=tuple(states))


def elected() -> Controller:
    ctl = Controller(ControllerConfig(broker_id=0))
    for e in ctl.handle(ControllerChange(None, 0, 0)):
        if isinstance(e, ZkWrite):
            ctl.handle(WriteResult(e.token))
    return ctl


def handle_loaded(snap: ClusterSnapshot) -> tuple[float, list]:
    """CPU seconds of the core's handling of ``ClusterLoaded`` (and of the answers to any
    write it makes), the collector off; the effects."""
    ctl = elected()
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        out = list(ctl.handle(ClusterLoaded(snap)))
        while ctl.awaiting_write is not None:
            [w] = [e for e in out[-1:] if isinstance(e, ZkWrite)]
            out.extend(ctl.handle(WriteResult(w.token)))
        cpu = time.process_time() - t0
    finally:
        gc.enable()
    return cpu, out


def floor(snap: ClusterSnapshot) -> float:
    """CPU seconds to build one LeaderAndIsr and one UpdateMetadata entry per partition."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        replicas = {name: dict(a.partitions) for name, a in snap.topics}
        lai = []
        um = []
        for (t, p), st in snap.partition_states:
            li = st.leader_and_isr
            reps = replicas[t][p]
            lai.append(LeaderAndIsrPartition(t, p, li.controller_epoch, li.leader,
                                             li.leader_epoch, li.isr, st.version, reps))
            um.append(UpdateMetadataPartition(t, p, li.controller_epoch, li.leader,
                                              li.leader_epoch, li.isr, st.version, reps, ()))
        cpu = time.process_time() - t0
    finally:
        gc.enable()
    del lai, um
    return cpu


def describe(out: list) -> str:
    sends = [e for e in out if isinstance(e, SendRequest)]
    lai = [e.request for e in sends if isinstance(e.request, LeaderAndIsrRequest)]
    um = [e.request for e in sends if isinstance(e.request, UpdateMetadataRequest)]
    return (f"{len(out)} effects: {len(lai)} LeaderAndIsr "
            f"({sum(len(r.partitions) for r in lai):,} entries), {len(um)} UpdateMetadata "
            f"({sum(len(r.partitions) for r in um):,} entries)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=100, help="Partitions per topic.")
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", type=Path, default=None, help="Another checkout's core to time.")
    args = ap.parse_args(argv)
    cal = calibration()
    n = args.topics * args.partitions
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; load {load()}; calibration {cal:.3f} s; code {CODE}; "
          f"{args.topics:,} topics x {args.partitions} = {n:,} partitions, RF 3, "
          f"{args.brokers} brokers, {args.runs} runs", flush=True)
    snap = snapshot(args.topics, args.partitions, args.brokers)
    core: list[float] = []
    base: list[float] = []
    summary = ""
    for run in range(args.runs):
        cpu, out = handle_loaded(snap)
        core.append(cpu)
        summary = describe(out)
        del out
        base.append(floor(snap))
        print(f"# run {run + 1}: core {core[-1]:.2f} s CPU, floor {base[-1]:.2f} s; "
              f"load {load()}", flush=True)
    cal_after = calibration()
    print(f"# {summary}")
    print(f"\n| {n:,} partitions, CPU s | best | median | per partition, best |")
    print("|---|---:|---:|---:|")
    print(f"| core: handle(ClusterLoaded) | {min(core):.2f} | {statistics.median(core):.2f} | "
          f"{min(core) / n * 1e6:.1f} us |")
    print(f"| floor: 2 entries per partition | {min(base):.2f} | {statistics.median(base):.2f} | "
          f"{min(base) / n * 1e6:.1f} us |")
    print(f"| ratio core / floor (best) | {min(core) / min(base):.1f}x | | |")
    print(f"\ncalibration before / after: {cal:.3f} / {cal_after:.3f} s; load {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
