"""A KRaft controller's snapshot load in one process (issue 26): the table-driven path against
the fast load, on the same checkpoint file.

* **before** -- what a restarted controller did until the fast load: read and check the
  batches and decode every record into a value (``snapshots.records_of`` with the METADATA
  serde: ``MetadataLog.read_snapshot(serde=METADATA)``), then replay the values into an
  empty image (``image_from_records``, the controller's ``SnapshotLoaded``);
* **after** -- ``snapshot_image.load_image`` (``MetadataLog.read_snapshot_image``): the same
  checks, runs of PartitionRecords read with one ``struct`` call into ``PartitionImage``s;
  with the collector on (the node's thresholds) and paused, as the node runs it
  (``NodePort.read_snapshot_image``);
* **baseline** -- the bytes alone: read the file, header and CRC-32C of every batch.

CPU seconds (``time.process_time``) of each, best of ``--runs``, the variants taking turns;
the GC thresholds are the node's (``tune_for_bursts``, start-up frozen). The checkpoint is
``--file`` (e.g. one a ``bench_kraft_million.py --keep`` cluster wrote), else one built here
(10,000 topics x 100 partitions, RF 3 over brokers 1-3, the records a controller's snapshot
holds) and kept in ``--dir`` for the next run. Calibration ``sum(i*i for i in range(10**6))``
(best of 3) and the load average before and after.

    .venv/bin/python benchmarks/bench_snapshot_load.py [--partitions 1000000] [--runs 3]
        [--file CHECKPOINT] [--dir /tmp/bench-snapshot-load]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.host.gc_tuning import CollectorPause, tune_for_bursts  # noqa: E402
from adapters.raft_log.batch_format import crc_matches, read_header  # noqa: E402
from adapters.raft_log.serde import METADATA  # noqa: E402
from adapters.raft_log.snapshot_image import load_image  # noqa: E402
from adapters.raft_log.snapshots import (  # noqa: E402
    encode_snapshot,
    parse_snapshot_name,
    records_of,
    snapshot_name,
    write_file,
)
from fsm.kraft.image import image_from_records  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import (  # noqa: E402
    BrokerEndpoint,
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from fsm.raft.messages import OffsetAndEpoch  # noqa: E402

MAX_BATCH_BYTES = 16 << 20
ORDERS = ((1, 2, 3), (2, 3, 1), (3, 1, 2))


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def snapshot_records(topics: int, per_topic: int) -> Iterator[Any]:
    """What a controller's snapshot of the cluster holds, in its order."""
    yield FeatureLevelRecord("metadata.version", 1, 7)
    for b in (1, 2, 3):
        yield RegisterBrokerRecord(b, uuid_of(b), 10 + b,
                                   (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9000 + b),), (),
                                   None, False, False)
    for t in range(topics):
        tid = uuid_of(1_000_000 + t)
        yield TopicRecord(f"topic-{t:06d}", tid)
        for p in range(per_topic):
            replicas = ORDERS[(t + p) % 3]
            yield PartitionRecord(p, tid, replicas, replicas, (), (), replicas[0], 0, 0)


def build(directory: Path, topics: int, per_topic: int) -> Path:
    records = 4 + topics * (1 + per_topic)
    snap = OffsetAndEpoch(records, 1)
    path = directory / snapshot_name(snap)
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        write_file(directory, snap, encode_snapshot(
            snap, snapshot_records(topics, per_topic), METADATA, timestamp_ms=1_700_000_000_000,
            max_batch_bytes=1 << 20))
        print(f"# built {path} ({path.stat().st_size / 2**20:.1f} MiB) in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
    return path


def bytes_only(path: Path, snap: OffsetAndEpoch) -> int:
    data = path.read_bytes()
    pos = n = 0
    while pos < len(data):
        header = read_header(data, pos)
        if not crc_matches(data, pos, header):
            raise RuntimeError(f"CRC mismatch at byte {pos}")
        pos, n = pos + header.size, n + 1
    return n


def before_decode(path: Path, snap: OffsetAndEpoch) -> tuple[Any, ...]:
    return records_of(path.read_bytes(), snap, METADATA, str(path), MAX_BATCH_BYTES)


def before(path: Path, snap: OffsetAndEpoch) -> Any:
    return image_from_records(before_decode(path, snap))


def after(path: Path, snap: OffsetAndEpoch) -> Any:
    return load_image(path.read_bytes(), snap.epoch, MAX_BATCH_BYTES)[0]


def after_paused(path: Path, snap: OffsetAndEpoch) -> Any:
    pause = CollectorPause()
    pause.pause()
    try:
        return after(path, snap)
    finally:
        pause.resume()


VARIANTS: dict[str, Callable[[Path, OffsetAndEpoch], Any]] = {
    "baseline: read + CRC-32C of every batch": bytes_only,
    "before: read + check + decode (records_of)": before_decode,
    "before: read + check + decode + replay": before,
    "after: fast load, collector on": after,
    "after: fast load, collector paused (the node)": after_paused,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--per-topic", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--file", type=Path, default=None, help="a checkpoint to load")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench-snapshot-load"))
    args = ap.parse_args(argv)
    cal0, load0 = calibration(), load()
    print(f"# bench_snapshot_load  {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; load {load0}",
          flush=True)
    path = args.file or build(args.dir, args.partitions // args.per_topic, args.per_topic)
    snap = parse_snapshot_name(path.name)
    if snap is None:
        ap.error(f"{path.name} is not a checkpoint's name")
    tune_for_bursts()  # the node's thresholds, start-up frozen
    first = before(path, snap)
    if after_paused(path, snap) != first:
        raise AssertionError("the fast load and the table-driven path give different images")
    partitions = first.partition_count()
    print(f"# {path} ({path.stat().st_size / 2**20:.1f} MiB): {len(first.topics):,} topics, "
          f"{partitions:,} partitions; the two paths' images equal", flush=True)
    del first
    gc.collect()
    cpu = {name: float("inf") for name in VARIANTS}
    wall = dict(cpu)
    for run in range(args.runs):
        for name, fn in VARIANTS.items():
            c0, w0 = time.process_time(), time.perf_counter()
            got = fn(path, snap)
            c1, w1 = time.process_time(), time.perf_counter()
            cpu[name], wall[name] = min(cpu[name], c1 - c0), min(wall[name], w1 - w0)
            del got
            gc.collect()
        print(f"# run {run + 1}: " + ", ".join(f"{v:.2f}" for v in cpu.values()), flush=True)
    cal1, load1 = calibration(), load()
    base = cpu["baseline: read + CRC-32C of every batch"]
    old = cpu["before: read + check + decode + replay"]
    print()
    print(f"| {partitions:,} partitions, best of {args.runs} | CPU s | wall s | x bytes | "
          "before / this |")
    print("|---|---:|---:|---:|---:|")
    for name in VARIANTS:
        print(f"| {name} | {cpu[name]:.2f} | {wall[name]:.2f} | {cpu[name] / base:.1f} | "
              f"{old / cpu[name]:.2f} |")
    print(f"\n# per partition (CPU): before {old / partitions * 1e6:.2f} us, after "
          f"{cpu['after: fast load, collector paused (the node)'] / partitions * 1e6:.2f} us")
    print(f"# calibration before {cal0:.3f} s, after {cal1:.3f} s; load before {load0}, "
          f"after {load1}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
