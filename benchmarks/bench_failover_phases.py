"""Where a ZooKeeper-mode failover load's time goes, phase by phase (issue 26).

The controller's cluster load (``ZkReader.cluster_snapshot`` with watches, the collector off as
``ControllerService`` has it) run in this process against a chroot that
``bench_failover_million.py`` populated, with each read of ``fsm.reads`` timed through the port:
ISR notifications, broker registrations, topic listing, topic znodes (watches, reads, decoding),
partition states, the admin znodes. Per phase: wall time, this thread's CPU, the whole
process's CPU (kazoo's connection thread too) and the ZooKeeper servers' CPU (``/proc`` of
``--ensemble-dir``'s pids), so that waiting for the ensemble shows apart from Python work.

``--mode exists`` sets the topic watches with one ``exists`` each (as before ``setWatches``),
``--mode both`` alternates the two, run by run. ``--profile FILE`` writes a cProfile of the
last run.

    .venv/bin/python benchmarks/bench_failover_phases.py --ensemble-dir DIR --chroot /bench-million-...
        [--runs 3] [--mode set-watches|exists|both] [--in-flight 8] [--profile out.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.ensemble import Ensemble  # noqa: E402
from adapters.host.gc_tuning import CollectorPause  # noqa: E402
from adapters.zookeeper.codec import paths as codec_paths  # noqa: E402
from adapters.zookeeper.connect import make_client  # noqa: E402
from adapters.zookeeper.reads import KazooReadPort, ZkNode, ZkReader  # noqa: E402
from fsm import reads  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def calibrate() -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sum(i * i for i in range(10**6))
        best = min(best, time.perf_counter() - t0)
    return best


def jvm_cpu(pids: Sequence[int]) -> float:
    """The servers' CPU seconds so far (user + system)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / TICKS


class Phases:
    """Per label: calls, items, wall, thread CPU, process CPU, servers' CPU."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.pids = pids
        self.rows: dict[str, list[float]] = defaultdict(lambda: [0.0] * 6)

    def timed(self, label: str, items: int, fn: Callable[[], Any]) -> Any:
        w0, t0, p0, j0 = time.perf_counter(), time.thread_time(), time.process_time(), \
            jvm_cpu(self.pids)
        try:
            return fn()
        finally:
            row = self.rows[label]
            row[0] += 1
            row[1] += items
            row[2] += time.perf_counter() - w0
            row[3] += time.thread_time() - t0
            row[4] += time.process_time() - p0
            row[5] += jvm_cpu(self.pids) - j0

    def timed_iter(self, label: str, items: int, it: Iterator[Any]) -> Iterator[Any]:
        """``it``'s items, timed from the first asked to the last handed: the consumer's work
        on each meanwhile included (a bulk read streamed to the reader)."""
        box: list[Any] = []
        self.timed(label, items, lambda: box.append(next(it, None)))  # the first batch
        if box[0] is None:
            return
        yield box[0]
        w0, t0, p0, j0 = time.perf_counter(), time.thread_time(), time.process_time(), \
            jvm_cpu(self.pids)
        yield from it
        row = self.rows[label]
        row[2] += time.perf_counter() - w0
        row[3] += time.thread_time() - t0
        row[4] += time.process_time() - p0
        row[5] += jvm_cpu(self.pids) - j0


def label_of(path: str) -> str:
    kind = codec_paths.classify(path) or path
    return {codec_paths.TOPIC: "topic znodes", codec_paths.PARTITION_STATE: "partition states",
            codec_paths.BROKER: "broker registrations"}.get(kind, kind)


class TimedPort(KazooReadPort):
    phases: Phases

    def get(self, path: str, watch: bool = False) -> ZkNode | None:
        return self.phases.timed(f"get {label_of(path)}", 1, lambda: super(TimedPort, self).get(
            path, watch))

    def children(self, path: str, watch: bool = False) -> list[str]:
        return self.phases.timed(f"children {path}", 1,
                                 lambda: super(TimedPort, self).children(path, watch))

    def get_many(self, paths: Sequence[str], watch: bool = False) -> list[ZkNode | None]:
        paths = list(paths)
        label = label_of(paths[0]) if paths else "nothing"
        return self.phases.timed(label + (" (watched)" if watch else ""), len(paths),
                                 lambda: super(TimedPort, self).get_many(paths, watch))

    def get_states(self, topics: Sequence[tuple[str, Sequence[int]]]) -> Iterator[Any]:
        return self.phases.timed_iter("partition states, bulk (and the reader's work)",
                                      sum(len(ps) for _, ps in topics),
                                      iter(super().get_states(topics)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--connect")
    where.add_argument("--ensemble-dir")
    ap.add_argument("--chroot", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mode", choices=["set-watches", "exists", "both"], default="set-watches")
    ap.add_argument("--in-flight", type=int, default=None, help="multiRead batches in flight")
    ap.add_argument("--batch-paths", type=int, default=None, help="paths per multiRead batch")
    ap.add_argument("--switch-interval", type=float, default=None,
                    help="sys.setswitchinterval through the load (seconds)")
    ap.add_argument("--profile", help="cProfile of the last run to this file")
    args = ap.parse_args(argv)
    pids: list[int] = []
    if args.ensemble_dir:
        ens = Ensemble.load(args.ensemble_dir)
        hosts, pids = ens.connect_string, [s.pid for s in ens.servers if s.pid]
    else:
        hosts = args.connect
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load "
          f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())}, calibration {calibrate():.3f} s",
          flush=True)
    client = make_client(hosts + args.chroot, timeout=30.0)
    client.start(timeout=30)
    fired: dict[tuple[str, str], int] = defaultdict(int)
    watchers: dict[tuple[str, str], Callable[[Any], None]] = {}

    def watch(kind: str, arg: str = "") -> Callable[[Any], None]:
        w = watchers.get((kind, arg))
        if w is None:
            def w(event: Any, key: tuple[str, str] = (kind, arg)) -> None:
                fired[key] += 1
            watchers[(kind, arg)] = w
        return w

    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    reader = ZkReader(client, timeout=60.0)
    modes = ["set-watches", "exists"] if args.mode == "both" else [args.mode]
    try:
        for run in range(args.runs):
            mode = modes[run % len(modes)]
            phases = Phases(pids)
            port = TimedPort(client, reader.timeout, watch, reader.decode)
            port.phases = phases
            port.set_watches = mode == "set-watches"  # type: ignore[misc]
            if args.in_flight is not None:
                port.max_in_flight = args.in_flight
            if args.batch_paths is not None:
                port.max_batch_paths = args.batch_paths
            prof = cProfile.Profile(time.thread_time) if args.profile and run == args.runs - 1 \
                else None  # this thread's CPU, not the wall
            pause = CollectorPause()
            pause.pause()
            w0, p0, j0 = time.perf_counter(), time.process_time(), jvm_cpu(pids)
            if prof:
                prof.enable()
            snap = reads.cluster_snapshot(port, True).value
            if prof:
                prof.disable()
            wall, cpu, jcpu = time.perf_counter() - w0, time.process_time() - p0, \
                jvm_cpu(pids) - j0
            pause.resume()
            print(f"run {run + 1} ({mode}): load {wall:.2f} s wall, {cpu:.2f} s CPU (process), "
                  f"servers {jcpu:.2f} s CPU; {len(snap.topics):,} topics, "
                  f"{len(snap.partition_states):,} partition states; load "
                  f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
            print(f"  {'phase':<44} {'items':>9} {'wall s':>7} {'thread CPU':>10} "
                  f"{'proc CPU':>9} {'servers':>8}")
            for label, (calls, items, w, t, p, j) in phases.rows.items():
                if w >= 0.005:
                    print(f"  {label[:44]:<44} {int(items):>9,} {w:>7.3f} {t:>10.3f} {p:>9.3f} "
                          f"{j:>8.2f}" + (f"  ({int(calls)} calls)" if calls > 1 else ""))
            if prof:
                prof.dump_stats(args.profile)
                print(f"  profile written to {args.profile}")
            del snap
            gc.collect()
    finally:
        client.stop()
        client.close()
    print(f"calibration after {calibrate():.3f} s; watch notifications received: "
          f"{sum(fired.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
