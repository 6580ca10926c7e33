"""Seed 000's Appendix A ("Zookeeper Performance") reproduced with kazoo, plus multiRead.

Writes/reads N znodes (default 20,000) one at a time (sync), all in flight (async), in ``multi``
transactions of B set_data (sync, and check-and-set async), and with ``multiRead`` batches of
1000 (``adapters.zookeeper.multi_read``). The sync set is the baseline every ratio is against,
measured in the same run on the same ensemble.

    .venv/bin/python benchmarks/bench_zookeeper_appendix_a.py             # 3-server ensemble
    .venv/bin/python benchmarks/bench_zookeeper_appendix_a.py --quick      # smoke run, 2,000 znodes
    .venv/bin/python benchmarks/bench_zookeeper_appendix_a.py --append docs/benchmarks.md

The ensemble is started in a temporary directory (``adapters.ensemble``) and stopped at
the end; ``--connect HOSTS`` uses a running one instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazoo.client import KazooClient  # noqa: E402

from adapters.ensemble import Ensemble  # noqa: E402
from adapters.zookeeper.multi_read import read_many  # noqa: E402

ROOT = "/kcontrol-bench-appendix-a"
Op = Callable[[KazooClient, list[str], bytes], None]


def set_sync(c: KazooClient, paths: list[str], data: bytes) -> None:
    for p in paths:
        c.set(p, data)


def get_sync(c: KazooClient, paths: list[str], data: bytes) -> None:
    for p in paths:
        c.get(p)


def set_async(c: KazooClient, paths: list[str], data: bytes) -> None:
    for r in [c.set_async(p, data) for p in paths]:
        r.get()


def get_async(c: KazooClient, paths: list[str], data: bytes) -> None:
    for r in [c.get_async(p) for p in paths]:
        r.get()


def multi_set_sync(batch: int) -> Op:
    def run(c: KazooClient, paths: list[str], data: bytes) -> None:
        for i in range(0, len(paths), batch):
            tx = c.transaction()
            for p in paths[i : i + batch]:
                tx.set_data(p, data)
            tx.commit()

    return run


def multi_check_and_set_async(batch: int) -> Op:
    def run(c: KazooClient, paths: list[str], data: bytes) -> None:
        version = c.exists(ROOT).version
        pending = []
        for i in range(0, len(paths), batch):
            tx = c.transaction()
            tx.check(ROOT, version)
            for p in paths[i : i + batch]:
                tx.set_data(p, data)
            pending.append(tx.commit_async())
        for r in pending:
            r.get()

    return run


def multi_read(batch: int) -> Op:
    def run(c: KazooClient, paths: list[str], data: bytes) -> None:
        got = read_many(c, paths, max_batch_paths=batch, mode="multi_read")
        assert len(got) == len(paths) and not any(isinstance(v, Exception) for v in got.values())

    return run


OPERATIONS: list[tuple[str, Op]] = [
    ("set-data-sync", set_sync),
    ("get-data-sync", get_sync),
    ("set-data-async (all in flight)", set_async),
    ("get-data-async (all in flight)", get_async),
    ("multi-set-data-sync (batch 100)", multi_set_sync(100)),
    ("multi-set-data-sync (batch 1000)", multi_set_sync(1000)),
    ("multi-check-and-set-data-async (batch 1000)", multi_check_and_set_async(1000)),
    ("multiRead (batch 1000)", multi_read(1000)),
]


def prepare(c: KazooClient, n: int, data: bytes) -> list[str]:
    if c.exists(ROOT):
        c.delete(ROOT, recursive=True)
    c.create(ROOT, b"")
    paths = [f"{ROOT}/{i:07d}" for i in range(n)]
    for i in range(0, n, 1000):
        tx = c.transaction()
        for p in paths[i : i + 1000]:
            tx.create(p, data)
        tx.commit()
    return paths


def measure(c: KazooClient, paths: list[str], data: bytes, runs: int) -> list[tuple[str, float]]:
    results = []
    for name, op in OPERATIONS:
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            op(c, paths, data)
            seconds.append(time.perf_counter() - start)
        ops = len(paths) / statistics.median(seconds)
        results.append((name, ops))
        print(f"  {name:<45} {ops:>10,.0f} ops/s", flush=True)
    return results


def table(results: list[tuple[str, float]]) -> str:
    base = results[0][1]
    lines = ["| operation | ops/s | vs set-data-sync |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {ops:,.0f} | {ops / base:.1f}x |" for name, ops in results]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", "--znodes", type=int, default=20_000)
    ap.add_argument("--size", type=int, default=100, help="bytes written per znode (default 100)")
    ap.add_argument("--runs", type=int, default=3, help="runs per operation; the median is kept")
    ap.add_argument("--servers", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke run: 2,000 znodes, one run")
    ap.add_argument("--connect", help="use this running ensemble instead of starting one")
    ap.add_argument("--append", type=Path, help="append a section with the table to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.znodes, args.runs = min(args.znodes, 2_000), 1
    data = os.urandom(args.size)
    with ExitStack() as stack:
        hosts = args.connect
        if hosts is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kcontrol-bench-zk-"))
            ensemble = Ensemble.create(tmp, servers=args.servers, die_with_parent=True)
            stack.callback(ensemble.stop)
            ensemble.up(timeout=60)
            hosts = ensemble.connect_string
        client = KazooClient(hosts=hosts, timeout=30.0)
        client.start(timeout=30)
        stack.callback(client.close)
        stack.callback(client.stop)
        where = f"{args.servers}-server ensemble" if args.connect is None else hosts
        print(f"{args.znodes:,} znodes of {args.size} bytes, {args.runs} run(s), {where}")
        paths = prepare(client, args.znodes, data)
        results = measure(client, paths, data, args.runs)
        client.delete(ROOT, recursive=True)
    print()
    print(table(results))
    if args.append:
        section = (
            f"\n## ZooKeeper client throughput: seed 000 Appendix A with kazoo (issue 4)\n\n"
            f"- date: 2026-11-22; machine: 2 cores, 24 GiB, Debian 12, Python 3.11, kazoo 2.11, "
            f"ZooKeeper 3.8.0 ({where} on loopback, no fsync)\n"
            f"- {args.znodes:,} znodes of {args.size} bytes; median of {args.runs} run(s) per "
            f"operation; one KazooClient\n"
            f"- reproduce: `.venv/bin/python benchmarks/bench_zookeeper_appendix_a.py "
            f"-n {args.znodes} --runs {args.runs} --servers {args.servers}`\n\n"
            f"{table(results)}\n"
        )
        with args.append.open("a") as f:
            f.write(section)
        print(f"\nappended to {args.append}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
