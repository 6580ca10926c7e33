"""What splitting the search costs, without Spark: the work term of the Spark engine's scaling.

Every level of the search runs as the Spark engine runs it -- the engine's own task
(``tasks.level_partition``) per partition, the records routed between levels as the
engine's partitioner routes them (``engine._Search``) -- but in plain Python processes
forked here: no JVM, no shuffle, no task start. So the figures are the split's cost alone:

* ``total CPU``: the CPU seconds of every partition's tasks; ``f(N)`` is that over the
  CPU of one partition. It grows with N: a state whose parents sit in two partitions is
  generated, checked and sent by both, and each process warms memos of its own.
* ``critical s``: per level, the busiest partition's CPU, summed over the levels; one
  partition's CPU over it is the **speed-up bound**: what N executors could give at best,
  with Spark costing nothing and the machines never competing.
* ``candidates``: the successors the last level received (before deduplication).

A violation stops the run at the level that holds it, as in the engine (the whole level is
counted here; the engine cuts it where the local engine stops).

Modes (``--mode``):

* ``processes`` (the default): one process per partition, the partitions of a level run one
  after another, so that they do not compete for this machine's cores;
* ``concurrent``: the same, with a level's partitions all at once: ``wall s`` then says what
  this machine gives (fewer cores than partitions, or shared caches, show here);
* ``one``: one process runs every partition, one after another, its memos shared: the split's
  cost without the memos' duplication.

    .venv/bin/python benchmarks/bench_spark_split.py [--scenario standard] [--depth N]
        [--partitions 1,2,4,8] [--mode processes|concurrent|one] [--json FILE]

Results: ``docs/benchmarks.md`` ("The model checker on Spark").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model_check.checks import default_checks  # noqa: E402
from model_check.scenario import load  # noqa: E402
from model_check.spark import tasks as T  # noqa: E402
from model_check.spark.encoding import unpack_bundle  # noqa: E402
from model_check.spark.engine import _Search  # noqa: E402
from model_check.start import start  # noqa: E402

MODES = ("processes", "concurrent", "one")


def _worker(conn: Connection, job: T.Job) -> None:
    """A partition's process: runs the level tasks it is sent, answers with their output,
    sums and CPU seconds, until it is sent None."""
    while (msg := conn.recv()) is not None:
        expand_new, send_snapshots, split, records = msg
        cpu = time.process_time()
        sums = T.LocalSums()
        out = list(T.level_partition(job, sums, expand_new, send_snapshots, split, records))
        conn.send((out, sums.value[split], time.process_time() - cpu))


def _candidates(records: list[tuple[int, tuple]]) -> int:
    return sum(len(unpack_bundle(v[1])) for _, v in records if v[0] == T.CAND)


def measure(scenario: str, depth: int | None, n: int, mode: str) -> dict:
    """The search to the depth bound with ``n`` partitions, in ``mode``."""
    sc = load(scenario)
    checks = default_checks()
    st = start(sc, checks)
    if st.found is not None:
        raise SystemExit(f"{scenario}: the setup violates {st.found.invariant}")
    route = T.ROUTE_KEY if sc.symmetry else T.ROUTE_ZOOKEEPER
    job = T.Job(st.config, checks, n, sc.symmetry, run=f"split-{n}", route=route)
    search = _Search(None, None, st, job, None, None)  # only its routing is used
    bound = sc.depth if depth is None else depth
    ctx = mp.get_context("fork")
    pipes, procs = [], []
    for _ in range(1 if mode == "one" else n):
        here, there = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(there, job), daemon=True)
        proc.start()
        pipes.append(here)
        procs.append(proc)
    levels: list[dict] = []
    inp = search._initial()
    try:
        # level 0 expands the start state; level d deduplicates and expands level d's states
        for d in range(bound + 1):
            expand_new, send_snapshots = d < bound, d + 1 < bound
            candidates = sum(_candidates(part) for part in inp)
            cpu = [0.0] * len(pipes)
            out: list[tuple[int, tuple]] = []
            new, finding = 0, None
            wall = time.perf_counter()
            if mode == "concurrent":
                for i in range(n):
                    pipes[i].send((expand_new, send_snapshots, i, inp[i]))
                answers = [pipes[i].recv() for i in range(n)]
            else:
                answers = []
                for i in range(n):
                    pipe = pipes[0 if mode == "one" else i]
                    pipe.send((expand_new, send_snapshots, i, inp[i]))
                    answers.append(pipe.recv())
            wall = time.perf_counter() - wall
            for i, (records, (_generated, fresh, found), seconds) in enumerate(answers):
                cpu[0 if mode == "one" else i] += seconds
                out.extend(records)
                new += fresh
                finding = T.first(finding, found)
            levels.append({"depth": d, "new": new, "candidates": candidates,
                           "cpu": [round(c, 3) for c in cpu], "wall": round(wall, 3)})
            inp = search._in_driver(out)
            print(f"  partitions {n} depth {d:>2}: {new:>8,} new, {candidates:>8,} candidates,"
                  f" CPU {sum(cpu):6.2f} s (busiest {max(cpu):6.2f})", file=sys.stderr,
                  flush=True)
            if finding is not None:
                print(f"  stopped at depth {d}: {finding.invariant} is violated there (the engine"
                      f" stops at that level too)", file=sys.stderr, flush=True)
                break
            if d and not new:
                break  # no new states: nothing to expand, as the engine stops
    finally:
        for pipe in pipes:
            pipe.send(None)
        for proc in procs:
            proc.join()
    return {"partitions": n, "mode": mode, "levels": levels,
            "total_cpu_s": sum(sum(lv["cpu"]) for lv in levels),
            "critical_s": sum(max(lv["cpu"]) for lv in levels),
            "wall_s": sum(lv["wall"] for lv in levels),
            "distinct": sum(lv["new"] for lv in levels[1:]) + 1,
            "last_candidates": levels[-1]["candidates"]}


def report(runs: list[dict], scenario: str) -> None:
    base = runs[0]
    for r in runs[1:]:
        assert [lv["new"] for lv in r["levels"]] == [lv["new"] for lv in base["levels"]], \
            f"{r['partitions']} partitions found other levels than {base['partitions']}"
    print(f"scenario {scenario}: {base['distinct']:,} distinct states, "
          f"depth {max(lv['depth'] for lv in base['levels'] if lv['new'])} (every "
          f"partition count agrees level by level); "
          f"mode {base['mode']}")
    print(f"{'partitions':>10} {'total CPU s':>11} {'f(N)':>5} {'critical s':>10} "
          f"{'speed-up bound':>14} {'wall s':>7} {'candidates':>10}")
    one = base["total_cpu_s"] if base["partitions"] == 1 else None
    for r in runs:
        f = f"{r['total_cpu_s'] / one:.2f}" if one else "-"
        bound = f"{one / r['critical_s']:.2f}" if one and r["mode"] != "one" else "-"
        print(f"{r['partitions']:>10} {r['total_cpu_s']:>11.2f} {f:>5} {r['critical_s']:>10.2f} "
              f"{bound:>14} {r['wall_s']:>7.1f} {r['last_candidates']:>10,}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="standard")
    ap.add_argument("--depth", type=int, help="default: the scenario's bound")
    ap.add_argument("--partitions", default="1,2,4,8",
                    help="partition counts, comma-separated; the ratios need 1 first")
    ap.add_argument("--mode", choices=MODES, default="processes")
    ap.add_argument("--json", type=Path, help="write every run's figures to FILE")
    args = ap.parse_args()
    try:
        counts = [int(x) for x in args.partitions.split(",")]
    except ValueError:
        ap.error(f"--partitions: comma-separated counts, not {args.partitions!r}")
    if not counts or min(counts) < 1:
        ap.error("--partitions: every count must be at least 1")
    runs = [measure(args.scenario, args.depth, n, args.mode) for n in counts]
    report(runs, args.scenario)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
