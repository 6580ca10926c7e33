"""Committed records per second on the metadata quorum (issue 24): 3 voter processes on
loopback, each on its own fsync'd log, records of about 100 bytes appended on the leader in
batches of 1, 10, 100 and 1000. Target: within 2x of the floor measured in the same run.

Floor: the same batches, encoded as the log encodes them (before the clock starts), appended
one after another to one local file with an fsync after each -- raftlog's
``benchmarks/bench_raft_log.floor_records_per_second``, run here with this benchmark's
records, taking turns with the quorum's measurements: what one disk does for one writer with
no replication and no Python work per record.

Quorum: ``append`` on the leader's admin socket: the leader builds the records and keeps at
most ``--in-flight`` records appended and not yet committed; timed from the first append to
the commit of the last (the high watermark passing it, i.e. on the leader and one follower
durably). Two settings of the leader's flush: ``group`` (the shell's default: one fsync for
the appends queued meanwhile) and ``per-batch`` (``--flush-every 1``: an fsync after every
append, as the floor does). A fixed calibration (``sum(i*i for i in range(10**6))``, best of
5) is printed before and after.

    .venv/bin/python benchmarks/bench_raft_commit.py [--batches 1,10,100,1000] [--size 100]
        [--runs 3] [--modes group,per-batch]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parents[1]))

from adapters.raft_node.launcher import LocalQuorum  # noqa: E402
from adapters.raft_node.node import bench_records  # noqa: E402
from adapters.raft_node.record_bytes import encoded  # noqa: E402
from benchmarks.bench_raft_log import floor_records_per_second  # noqa: E402

TARGET_RATIO = 2.0
MODES = {"group": (), "per-batch": ("--flush-every", "1")}


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def floor_rate(directory: Path, batch: int, size: int, count: int) -> float:
    """``count`` fsync'd appends of one batch of ``batch`` records to one file: records per
    second (raftlog's ``floor_records_per_second``, with this benchmark's records)."""
    values = list(encoded(bench_records(batch, size)))
    return floor_records_per_second([batch], directory=str(directory), fsyncs=count,
                                    rounds=1, values=lambda n: values[:n])[batch]


def quorum_records_per_second(q: LocalQuorum, batch: int, size: int, records: int,
                              in_flight: int) -> float:
    leader = q.wait_leader(60)
    window = max(in_flight // batch, 1)
    r = leader.request("append", records=records, batch=batch, size=size, window=window,
                       timeout=600)
    return records / r["seconds"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", default="1,10,100,1000")
    p.add_argument("--size", type=int, default=100, help="bytes per record (about)")
    p.add_argument("--floor-batches", type=int, default=300,
                   help="fsync'd appends per floor measurement")
    p.add_argument("--min-records", type=int, default=5000,
                   help="records per quorum measurement, at least (and 300 batches)")
    p.add_argument("--in-flight", type=int, default=10_000,
                   help="records appended and not yet committed, at most")
    p.add_argument("--runs", type=int, default=3, help="floor and quorum taking turns")
    p.add_argument("--modes", default="group,per-batch")
    a = p.parse_args()
    batches = [int(x) for x in a.batches.split(",")]
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            p.error(f"--modes: {m!r} is not one of {', '.join(MODES)}")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} "
          f"CPUs, {platform.node()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"calibration sum(i*i) best of 5: {calibration():.3f} s")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-raft-commit-", dir=os.getcwd()) as root:
        for mode in modes:
            q = LocalQuorum(Path(root) / mode, extra_args=MODES[mode])
            q.start()
            try:
                q.wait_leader(60)
                quorum_records_per_second(q, 10, a.size, 500, a.in_flight)  # warm-up
                for b in batches:
                    records = max(a.min_records, 300 * b)
                    floors, rates = [], []
                    for _ in range(a.runs):
                        floors.append(floor_rate(Path(root), b, a.size, a.floor_batches))
                        rates.append(quorum_records_per_second(q, b, a.size, records,
                                                               a.in_flight))
                    rows.append((mode, b, statistics.median(rates), statistics.median(floors)))
                    print(f"  {mode:9s} batch {b:5d}: quorum "
                          f"{' '.join(f'{r:.0f}' for r in rates)} records/s; floor "
                          f"{' '.join(f'{f:.0f}' for f in floors)}", flush=True)
            finally:
                q.stop()
    print(f"calibration sum(i*i) best of 5: {calibration():.3f} s")
    print(f"medians of {a.runs} runs")
    print(f"{'mode':9s} {'batch':>6s} {'quorum rec/s':>13s} {'floor rec/s':>12s} "
          f"{'floor/quorum':>12s}  verdict (target <= {TARGET_RATIO:g}x)")
    for mode, b, rate, floor in rows:
        ratio = floor / rate
        print(f"{mode:9s} {b:6d} {rate:13.0f} {floor:12.0f} {ratio:12.2f}  "
              f"{'ok' if ratio <= TARGET_RATIO else 'over'}")


if __name__ == "__main__":
    main()
