"""A KRaft node's start: what the interpreter, the command line and the node's imports cost
before the node does anything (issue 26: a restarted 1,000,000-partition controller spent
1.2-1.55 s in "start-up (interpreter, imports, log open)").

Timed, each a fresh process, CPU seconds (user + system, all threads):

* ``python -m adapters.cli node --help`` -- the command line alone (``os.wait4``);
* **a controller to readiness**: a one-voter quorum (``KRaftCluster``, 1 controller, no
  broker, empty log: ``kcontrol node --config F``), started and polled on its admin socket
  until it leads; then the process's CPU from ``/proc/PID/stat``. What the node's start costs
  before any metadata is loaded;
* floor: ``python -c pass`` (the interpreter and ``site``).

Same-run baseline: with ``--before DIR`` (a checkout, e.g. ``git archive REV | tar -x -C DIR``)
every measurement alternates between DIR's code and this checkout's, and the table gives both
and their ratio. Calibration ``sum(i*i for i in range(10**6))``, best of 3, before and after.

    .venv/bin/python benchmarks/bench_node_startup.py [--runs 7] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.cluster import kraft_launcher  # noqa: E402
from adapters.cluster.kraft_launcher import NODE, KRaftCluster  # noqa: E402
from adapters.cluster.kraft_nodes import subprocess_env  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def child_cpu(argv: list[str], code: Path) -> float:
    """CPU seconds (user + system) of one process run to its end from ``code``."""
    proc = subprocess.Popen(argv, cwd=code, env=subprocess_env(code),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid: int) -> float:
    """CPU seconds so far of a running process, all its threads (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)


def controller_ready(code: Path) -> tuple[float, float]:
    """(CPU s, wall s) of a one-voter controller from its start to leading its quorum."""
    kraft_launcher.REPO_ROOT = code  # the node's working directory and imports
    with tempfile.TemporaryDirectory(prefix="bench-node-") as tmp:
        cluster = KRaftCluster(tmp, controllers=1, brokers=0, backend=NODE)
        cluster.env = subprocess_env(code)
        try:
            cluster.prepare()
            cluster.format_storage()
            [node_id] = cluster.controllers
            t0 = time.perf_counter()
            cluster.start_node(node_id)
            pid = cluster.controllers[node_id].pid
            assert pid is not None
            cluster.wait_leader(60)
            wall = time.perf_counter() - t0
            cpu = process_cpu(pid)
        finally:
            cluster.stop()
    return cpu, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="Runs of each measurement and code.")
    ap.add_argument("--before", type=Path, default=None,
                    help="A checkout of the code to compare with, run alternately.")
    args = ap.parse_args(argv)
    codes = {"after": ROOT}
    if args.before is not None:
        codes = {"before": args.before.resolve(), "after": ROOT}
    python = sys.executable
    measures: dict[str, Callable[[Path], float]] = {
        "python -c pass": lambda code: child_cpu([python, "-c", "pass"], code),
        "node --help": lambda code: child_cpu([python, "-m", "adapters.cli", "node", "--help"],
                                              code),
        "controller to readiness": lambda code: controller_ready(code)[0],
    }
    cal_before = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs; load {load()}; "
          f"calibration {cal_before:.3f} s; {args.runs} runs, codes alternating: "
          f"{', '.join(f'{k}={v}' for k, v in codes.items())}", flush=True)
    results: dict[tuple[str, str], list[float]] = {(m, c): [] for m in measures for c in codes}
    for run in range(args.runs):
        for m, fn in measures.items():
            for c, code in (codes.items() if run % 2 == 0 else reversed(codes.items())):
                results[m, c].append(fn(code))
        print(f"# run {run + 1}/{args.runs} done, load {load()}", flush=True)
    cal_after = calibration()
    heads = " | ".join(f"{c}: best / median" for c in codes)
    ratio_head = " | before / after (best, median)" if len(codes) == 2 else ""
    print(f"\n| CPU s | {heads}{ratio_head} |")
    print("|---|" + "---:|" * (len(codes) + (1 if len(codes) == 2 else 0)))
    for m in measures:
        cells = []
        for c in codes:
            v = results[m, c]
            cells.append(f"{min(v):.3f} / {statistics.median(v):.3f}")
        ratio = ""
        if len(codes) == 2:
            b, a = results[m, "before"], results[m, "after"]
            ratio = (f" | {min(b) / min(a):.2f}x, "
                     f"{statistics.median(b) / statistics.median(a):.2f}x")
        print(f"| {m} | {' | '.join(cells)}{ratio} |")
    print(f"\ncalibration before / after: {cal_before:.3f} / {cal_after:.3f} s; load {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
