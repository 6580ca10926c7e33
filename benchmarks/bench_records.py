"""Encode and decode rates of the KRaft metadata record codec (``fsm.kraft.records``, issue 23)
for the two records a controller writes most: PartitionRecord (a new partition: RF 3, ISR of
3) and PartitionChangeRecord (an ISR shrink with a new leader: tags 0 and 1).

Every rate is records per second of one core (``time.process_time``), the best of
``--repeat`` runs of ``--n`` records each, the records all distinct (built before timing).
A fixed calibration (``sum(i*i for i in range(10**6))``, best of 5) is printed before and
after, to compare the absolute figures across machines and moments.

    .venv/bin/python benchmarks/bench_records.py [--n 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fsm.kraft.records import decode_record, encode_record  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import PartitionChangeRecord, PartitionRecord  # noqa: E402


def calibration() -> float:
    """Seconds for ``sum(i*i for i in range(10**6))``, best of 5."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def partitions(n: int) -> list[PartitionRecord]:
    return [PartitionRecord(i % 100, uuid_of(i // 100), (i % 7, i % 7 + 1, i % 7 + 2),
                            (i % 7, i % 7 + 1, i % 7 + 2), leader=i % 7, leader_epoch=0,
                            partition_epoch=0) for i in range(n)]


def changes(n: int) -> list[PartitionChangeRecord]:
    return [PartitionChangeRecord(i % 100, uuid_of(i // 100), isr=(i % 7 + 1, i % 7 + 2),
                                  leader=i % 7 + 1) for i in range(n)]


def rate(fn: Callable[[Any], object], items: list[Any], repeat: int) -> float:
    """Items per CPU second of ``fn`` over ``items``, best of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return len(items) / best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000, help="records per run")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"# {args.n} distinct records per run, best of {args.repeat}, per CPU second")
    print(f"{'record':<24} {'bytes':>5} {'encode rec/s':>13} {'decode rec/s':>13} "
          f"{'enc us':>7} {'dec us':>7}")
    for name, values in (("PartitionRecord", partitions(args.n)),
                         ("PartitionChangeRecord", changes(args.n))):
        encoded = [encode_record(v) for v in values]
        assert [decode_record(b) for b in encoded] == values
        enc = rate(encode_record, values, args.repeat)
        dec = rate(decode_record, encoded, args.repeat)
        print(f"{name:<24} {len(encoded[0]):>5} {enc:>13,.0f} {dec:>13,.0f} "
              f"{1e6 / enc:>7.2f} {1e6 / dec:>7.2f}")
    cal1 = calibration()
    print(f"# calibration after: {cal1:.3f} s; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
