"""The KRaft metadata image (issue 23): replaying a snapshot of 1,000,000 partitions (10,000
topics x 100, replication factor 3 over 30 brokers) into an empty image -- target under 5 s
here and at most 500 bytes of memory per partition -- plus ``snapshot_records`` of that image
and ``MetadataImage.copy()``.

The record list is built before anything is timed; only the replay is timed. Timings are the
best of ``--runs``; the baseline, in the same run and taking turns with the replay, is the
least any replay does: one pass over the same records putting one 7-tuple per partition into
a dict per topic. Memory is measured twice: ``tracemalloc`` (what stays allocated by the
image, the record list excluded: it was allocated before tracing started; a separate, untimed
replay, since tracing slows allocation) and the RSS delta of the first timed replay (the
process's resident set, from /proc/self/statm; coarser: freed arenas and the allocator's
slack count too). A fixed calibration (``sum(i*i for i in range(10**6))``, best of 5) is
printed before and after, to compare absolute figures across machines and moments.

    .venv/bin/python benchmarks/bench_image.py [--topics 10000] [--partitions 100]
        [--brokers 30] [--runs 3] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import timeit
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsm.kraft.image import MetadataImage, image_from_records, snapshot_records  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import (  # noqa: E402
    BrokerEndpoint,
    ConfigRecord,
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)

TARGET_SECONDS_PER_MILLION = 5.0
TARGET_BYTES_PER_PARTITION = 500


def calibration() -> float:
    """Seconds for ``sum(i*i for i in range(10**6))``, best of 5."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def snapshot_of(topics: int, partitions: int, brokers: int, rf: int = 3) -> list[Any]:
    """A snapshot as a controller would write it: one feature, the brokers (unfenced), then
    each topic followed by its partitions (replicas spread over the brokers: ``brokers x
    (brokers - rf + 1)`` distinct lists, the first replica leads, ISR = replicas, epochs as
    after some history), and one config per 100 topics."""
    out: list[Any] = [FeatureLevelRecord("metadata.version", 1, 7)]
    out += [RegisterBrokerRecord(b, uuid_of(1_000_000 + b), 10 + b,
                                 (BrokerEndpoint("PLAINTEXT", f"broker{b}", 9092),),
                                 (), f"rack{b % 3}", False)
            for b in range(brokers)]
    lists: dict[tuple[int, ...], tuple[int, ...]] = {}
    for t in range(topics):
        tid, shift = uuid_of(t + 1), t % (brokers - rf + 1)
        out.append(TopicRecord(f"topic-{t:06d}", tid))
        for p in range(partitions):
            first = (t + p) % brokers
            replicas = (first, *((first + 1 + shift + k) % brokers for k in range(rf - 1)))
            replicas = lists.setdefault(replicas, replicas)
            out.append(PartitionRecord(p, tid, replicas, replicas, (), (), replicas[0],
                                       (t + p) % 7, (t + p) % 11))
    out += [ConfigRecord(2, f"topic-{t:06d}", "retention.ms", "86400000")
            for t in range(0, topics, 100)]
    return out


def baseline(records: list[Any]) -> dict[bytes, dict[int, tuple[Any, ...]]]:
    """The least a replay does: one pass, one tuple per partition in a dict per topic."""
    topics: dict[bytes, dict[int, tuple[Any, ...]]] = {}
    for r in records:
        if type(r) is PartitionRecord:
            topics[r.topic_id][r.partition_id] = (
                r.replicas, r.isr, r.removing_replicas, r.adding_replicas, r.leader,
                r.leader_epoch, r.partition_epoch)
        elif type(r) is TopicRecord:
            topics[r.topic_id] = {}
    return topics


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def traced_bytes(records: list[Any]) -> int:
    """Bytes that stay allocated by an image replayed from ``records`` (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    image = image_from_records(records)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del image
    return used


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=100, help="per topic (default 100)")
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3, help="best of RUNS (default 3)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1,000 topics (100,000 partitions), one run")
    args = ap.parse_args(argv)
    if args.quick:
        args.topics, args.runs = min(args.topics, 1_000), 1
    n = args.topics * args.partitions

    cal0 = calibration()
    print(f"# bench_image  {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    records = snapshot_of(args.topics, args.partitions, args.brokers)
    print(f"# {args.topics:,} topics x {args.partitions} partitions = {n:,} partitions, "
          f"RF 3 over {args.brokers} brokers: {len(records):,} records")

    t_replay = t_base = t_snap = t_copy = float("inf")
    rss = 0
    image: MetadataImage | None = None
    for run in range(args.runs):
        image = None
        gc.collect()
        rss0 = rss_bytes()
        dt, image = timed(lambda: image_from_records(records))
        if run == 0:
            rss = rss_bytes() - rss0
        t_replay = min(t_replay, dt)
        gc.collect()
        t_base = min(t_base, timed(lambda: baseline(records))[0])
    assert image is not None and image.partition_count() == n
    for _ in range(args.runs):
        dt, snap = timed(lambda: snapshot_records(image))
        t_snap = min(t_snap, dt)
        t_copy = min(t_copy, timed(image.copy)[0])
    assert snap == records, "the snapshot of a replayed snapshot is that snapshot"
    del snap
    image = None
    traced = traced_bytes(records)
    cal1 = calibration()

    target_s = TARGET_SECONDS_PER_MILLION * n / 1_000_000
    time_met = t_replay < target_s
    mem_met = traced / n <= TARGET_BYTES_PER_PARTITION
    print(f"| measure ({n:,} partitions, best of {args.runs}) | value |")
    print("|---|---:|")
    print(f"| **replay the snapshot into an empty image** | **{t_replay:.2f} s** "
          f"(target < {target_s:g} s: {'met' if time_met else 'NOT met'}) |")
    print(f"| per partition | {t_replay / n * 1e6:.2f} µs |")
    print(f"| baseline: one tuple per partition in a dict per topic | {t_base:.2f} s |")
    print(f"| ratio replay / baseline | {t_replay / t_base:.1f}x |")
    print(f"| **image memory, tracemalloc** | **{traced / 2**20:.0f} MiB, "
          f"{traced / n:.0f} B per partition** (target <= {TARGET_BYTES_PER_PARTITION}: "
          f"{'met' if mem_met else 'NOT met'}) |")
    print(f"| image memory, RSS delta of the first replay | {rss / 2**20:.0f} MiB, "
          f"{rss / n:.0f} B per partition |")
    print(f"| snapshot_records(image) | {t_snap:.2f} s |")
    print(f"| image.copy() | {t_copy:.3f} s |")
    print(f"# calibration after: {cal1:.3f} s; load average {os.getloadavg()[0]:.2f}")
    return 0 if (time_met and mem_met) or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
