"""Controller failover load in ZooKeeper mode at 1,000,000 partitions (10,000 topics x 100, issue 26).

The failover load of ``bench_failover_load.py`` (whose population, load and baseline code this
reuses), at ten times its size and past Kafka's advice (at most 200,000 partitions per
ZooKeeper-based cluster):

* **population**: 30 broker registrations, 10,000 topic znodes, 1,000,000 partition znodes and
  their states (RF 3): ``multi`` batches bounded by count and request bytes (under ZooKeeper's
  1 MB ``jute.maxbuffer``), a bounded number in flight, progress printed;
* **kcontrol**: a fresh ``ControllerService`` wins ``/controller``; the time from winning to
  ``ClusterLoaded`` built (``ControllerService.last_load_s``), and "start to idle" (connect,
  election, load and the core handling ``ClusterLoaded``);
* **baseline**: the same znodes read raw with pipelined ``get_async``, in the same run (after
  the first ``--baseline-runs`` loads: one takes minutes at this size);
* around them: calibration (``sum(i*i for i in range(10**6))``, best of 3, before and after),
  the load average, this process's RSS with the controller loaded, each ZooKeeper server's heap
  (``jcmd GC.heap_info`` after a full collection, forced once the runs are over) and RSS.

The ensemble (3 servers by default) is started here with ``--heap`` per server (G1); or use a
running one: ``--ensemble-dir DIR`` (from ``kcontrol zookeeper up --dir DIR``, heap figures
included) or ``--connect HOSTS``. ``--chroot`` reuses a chroot this benchmark populated
earlier on that ensemble (its broker registrations are re-created: they are ephemeral).

    .venv/bin/python benchmarks/bench_failover_million.py [--topics 10000] [--partitions 100]
        [--brokers 30] [--runs 3] [--baseline-runs 1] [--heap 3g] [--ensemble-dir DIR | --connect HOSTS]
        [--chroot /bench-million-...] [--distinct] [--watches set-watches|exists|alternate]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazoo.client import KazooClient  # noqa: E402

from adapters.ensemble import Ensemble  # noqa: E402
from adapters.ensemble.processes import JVM_OPTS_ENV  # noqa: E402
from adapters.zookeeper import codec  # noqa: E402
from adapters.zookeeper.reads import KazooReadPort  # noqa: E402
from benchmarks.bench_failover_load import (  # noqa: E402
    baseline,
    kcontrol_load,
    populate,
    rss_bytes,
    state_paths_of,
)
from fsm import zk_paths as P  # noqa: E402
from fsm.values import Endpoint  # noqa: E402
from fsm.znodes import BrokerRegistration  # noqa: E402


def calibrate() -> float:
    """``sum(i*i for i in range(10**6))`` in this process, best of 3 (seconds)."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sum(i * i for i in range(10**6))
        best = min(best, time.perf_counter() - t0)
    return best


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def jvm_heap(pid: int) -> str:
    """The server's heap after a full collection (``jcmd``), e.g. ``used 812M of 3072M``."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=120, check=True)
        out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    for line in out.splitlines():
        words = line.replace(",", " ").split()
        if "total" in words and "used" in words:
            total = words[words.index("total") + 1]
            used = words[words.index("used") + 1]
            return f"used {_mib(used)} of {_mib(total)} committed"
    return "unknown"


def _mib(kib: str) -> str:
    return f"{int(kib.rstrip('K')) // 1024:,} MiB" if kib.endswith("K") else kib


def register_brokers(c: KazooClient, brokers: int) -> None:
    for b in range(brokers):
        path = P.broker(b)
        reg = BrokerRegistration(b, (Endpoint("PLAINTEXT", "h", 9092 + b),))
        c.create(path, codec.encode(path, reg), ephemeral=True)


def progress_printer(total: int) -> Callable[[int], None]:
    t0 = time.monotonic()
    step = max(total // 10, 1)
    last = [0]

    def report(done: int) -> None:
        if done - last[0] >= step or done == total:
            last[0] = done
            dt = time.monotonic() - t0
            print(f"  populated {done:,}/{total:,} partitions in {dt:.1f} s "
                  f"({done / max(dt, 1e-9):,.0f}/s, load {load_average()})", flush=True)

    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=100, help="per topic")
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--servers", type=int, default=3)
    ap.add_argument("--heap", default="3g", help="each ZooKeeper server's -Xmx (started here)")
    ap.add_argument("--distinct", action="store_true", help="every partition state different")
    ap.add_argument("--baseline-runs", type=int, default=1,
                    help="runs followed by the get_async baseline (at 1,000,000 partitions one "
                    "takes minutes); 0: none")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--connect", help="a running ensemble's connect string")
    where.add_argument("--ensemble-dir", help="a running ensemble (`kcontrol zookeeper up --dir`)")
    ap.add_argument("--chroot", help="reuse this chroot, populated earlier by this benchmark")
    ap.add_argument("--watches", choices=["set-watches", "exists", "alternate"],
                    default="set-watches", help="how the load sets its topic watches: "
                    "setWatches requests, one exists each (as before 2026-11-27), or run by run")
    args = ap.parse_args(argv)
    total = args.topics * args.partitions
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, {os.cpu_count()} cores, "
          f"load {load_average()}; calibration {calibrate():.3f} s", flush=True)
    with ExitStack() as stack:
        pids: list[int] = []
        if args.connect:
            hosts = args.connect
        elif args.ensemble_dir:
            ens = Ensemble.load(args.ensemble_dir)
            hosts = ens.connect_string
            pids = [s.pid for s in ens.servers if s.pid]
        else:
            os.environ.setdefault(JVM_OPTS_ENV, f"-Xms512m -Xmx{args.heap} -XX:+UseG1GC "
                                  "-Djava.awt.headless=true")
            print(f"ensemble: {args.servers} servers, JVM options {os.environ[JVM_OPTS_ENV]!r}",
                  flush=True)
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kcontrol-bench-1m-"))
            ens = Ensemble.create(tmp, servers=args.servers, die_with_parent=True,
                                  max_session_timeout_ms=30000)
            ens.up(timeout=120)
            stack.callback(ens.stop)
            hosts = ens.connect_string
            pids = [s.pid for s in ens.servers if s.pid]
        chroot = args.chroot or f"/bench-million-{int(time.time())}"
        root = KazooClient(hosts=hosts, timeout=10)
        root.start(timeout=30)
        root.ensure_path(chroot)
        root.stop()
        hosts += chroot
        c = KazooClient(hosts=hosts, timeout=30)
        c.start(timeout=30)
        stack.callback(c.stop)
        if args.chroot:
            register_brokers(c, args.brokers)
            state_paths = state_paths_of(args.topics, args.partitions)
            print(f"reusing {chroot}: {len(state_paths):,} partitions", flush=True)
        else:
            t0 = time.monotonic()
            state_paths = populate(c, args.topics, args.partitions, args.distinct, args.brokers,
                                   progress=progress_printer(total))
            print(f"populated {len(state_paths):,} partitions ({args.topics:,} topics, "
                  f"{args.brokers} brokers, {args.servers} server(s)) in "
                  f"{time.monotonic() - t0:.1f} s under {chroot}, load {load_average()}",
                  flush=True)
        ours, base, idle, cpus = [], [], [], []
        for run in range(args.runs):
            mode = args.watches if args.watches != "alternate" else \
                ("set-watches", "exists")[run % 2]
            KazooReadPort.set_watches = mode == "set-watches"
            before, rss0 = load_average(), rss_bytes()
            r = kcontrol_load(hosts, 1000 + run)
            assert r.partitions == len(state_paths), (r.partitions, len(state_paths))
            ours.append(r.load_s)
            idle.append(r.start_to_idle_s)
            cpus.append(r.cpu_s)
            line = (f"run {run + 1} ({mode}): kcontrol load {r.load_s:.2f} s ({r.cpu_s:.2f} s CPU), "
                    f"start to idle "
                    f"{r.start_to_idle_s:.2f} s, RSS {r.rss_bytes / 2**20:,.0f} MiB loaded "
                    f"({rss0 / 2**20:,.0f} MiB before)")
            if run < args.baseline_runs:
                b = baseline(c, args.topics, state_paths)
                base.append(b)
                line += f"; get_async baseline {b:.2f} s, ratio {b / r.load_s:.1f}x"
            print(f"{line} (load {before} -> {load_average()})", flush=True)
        summary = (f"kcontrol load best {min(ours):.2f} s, median {statistics.median(ours):.2f} s "
                   f"(CPU best {min(cpus):.2f} s); "
                   f"start to idle best {min(idle):.2f} s, median {statistics.median(idle):.2f} s")
        if base:
            summary += (f"; baseline best {min(base):.2f} s, median {statistics.median(base):.2f}"
                        f" s; ratio (best) {min(base) / min(ours):.1f}x")
        print(summary)
        # after the runs: a forced full collection stops a server for seconds (with 2,000,000
        # znodes, on a loaded machine long enough to cost the ensemble its leader)
        for pid in pids:
            print(f"  ZooKeeper pid {pid}: heap {jvm_heap(pid)}, RSS "
                  f"{rss_bytes(pid) / 2**20:,.0f} MiB", flush=True)
        print(f"load {load_average()}; calibration after {calibrate():.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
