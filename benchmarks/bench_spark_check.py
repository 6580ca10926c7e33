"""The Spark engine against the local engine on one scenario: wall time of Spark local[1]
vs local[2] vs the local engine, level by level, and the fixed cost of one Spark level.

Targets (issue 7): Spark local[2] no slower than 1.5x the local engine, and local[2] at
least 1.6x faster than local[1], on ``standard`` or a scenario of at least 1,000,000
distinct states: ``--scenario deep --depth 6`` (4,027,186 states) is that one, about 32
minutes for the three engines on 2 cores and ~7 GB of memory at its peak (the local
engine's).

Each engine runs in a child process of its own (a fresh JVM per Spark master), one after
the other, so they do not compete with each other; the machine's load average is recorded
before and after each, and the CPU seconds each child used (JVM and Python workers
included, read from ``/proc`` around the search): on a busy machine the wall time says
how much CPU the run got, the CPU seconds how much it needed. The
children also check that every engine found the same levels (states per level, depth,
verdict). After its main run a Spark child explores ``smoke`` in the same context: its
levels hold a handful of states, so their median time is the per-level overhead.

    .venv/bin/python benchmarks/bench_spark_check.py [--scenario standard] [--depth N]
        [--partitions N] [--engines local,local[1],local[2]] [--repeat N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_ENGINES = "local,local[1],local[2]"
OVERHEAD_SCENARIO = "smoke"


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU seconds (user + system) of process ``root`` and all its descendants, alive or
    reaped by a descendant (the JVM, the PySpark daemon and its Python workers), from
    ``/proc``."""
    root = os.getpid() if root is None else root
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()
        # after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
        stats[int(entry)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / tick)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo += [p for p, (ppid, _) in stats.items() if ppid == pid]
    return total


def _levels(result) -> list[list]:  # noqa: ANN001
    return [[lv.depth, lv.frontier, lv.generated, lv.new, lv.duplicates, round(lv.seconds, 3)]
            for lv in result.levels]


def one(engine: str, scenario: str, depth: int | None, partitions: int | None,
        driver_limit: int | None = None) -> dict:
    """Run one engine in this process; return what the parent tabulates."""
    from model_check.checks import default_checks
    from model_check.scenario import load
    from model_check.search import Options, bfs

    sc_ = load(scenario)
    checks = default_checks()
    options = Options(depth=depth)
    if engine == "local":
        cpu, t = tree_cpu_seconds(), time.perf_counter()
        r = bfs(sc_, checks, options)
        return {"engine": engine, "search_s": time.perf_counter() - t, "start_s": 0.0,
                "cpu_s": tree_cpu_seconds() - cpu,
                "verdict": r.verdict, "distinct": r.distinct_states,
                "generated": r.states_generated, "depth": r.depth, "levels": _levels(r)}
    from model_check.spark.engine import SparkOptions, spark_bfs
    from model_check.spark.session import DRIVER_LEVEL_LIMIT, spark_context

    t = time.perf_counter()
    sc = spark_context(engine, {"spark.ui.enabled": "false"})
    start_s = time.perf_counter() - t
    cpu, t = tree_cpu_seconds(), time.perf_counter()
    limit = DRIVER_LEVEL_LIMIT if driver_limit is None else driver_limit
    run = spark_bfs(sc_, checks, options,
                    SparkOptions(partitions=partitions, driver_level_limit=limit), sc=sc)
    search_s = time.perf_counter() - t
    cpu_s = tree_cpu_seconds() - cpu
    r = run.result
    # every level of the tiny scenario a Spark job: what one costs
    tiny = spark_bfs(load(OVERHEAD_SCENARIO), checks, Options(),
                     SparkOptions(partitions=partitions, driver_level_limit=0), sc=sc).result
    tiny_levels = [lv.seconds for lv in tiny.levels[1:]]  # the first level starts workers
    return {"engine": engine, "search_s": search_s, "start_s": start_s, "cpu_s": cpu_s,
            "verdict": r.verdict, "distinct": r.distinct_states,
            "generated": r.states_generated, "depth": r.depth, "levels": _levels(r),
            "spark": run.settings.as_dict() | {"driver_limit": limit,
                                               "driver_levels": run.driver_levels},
            "level_overhead_s": statistics.median(tiny_levels),
            "level_overhead_states": max(lv.new for lv in tiny.levels)}


def run_child(engine: str, args: argparse.Namespace) -> dict:
    out = Path(f"/tmp/bench_spark_check.{os.getpid()}.json")
    cmd = [sys.executable, __file__, "--one", engine, "--scenario", args.scenario,
           "--out", str(out)]
    if args.partitions is not None:
        cmd += ["--partitions", str(args.partitions)]
    if args.driver_limit is not None:
        cmd += ["--driver-limit", str(args.driver_limit)]
    if args.depth is not None:
        cmd += ["--depth", str(args.depth)]
    load_before = os.getloadavg()
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - t
    doc = json.loads(out.read_text())
    out.unlink()
    doc["process_wall_s"] = wall
    doc["load_before"] = [round(x, 2) for x in load_before]
    doc["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return doc


def report(docs: list[dict], args: argparse.Namespace) -> None:
    base = docs[0]
    for d in docs[1:]:
        same = [lv[:5] for lv in d["levels"]] == [lv[:5] for lv in base["levels"]]
        assert same and d["verdict"] == base["verdict"], \
            f"{d['engine']} disagrees with {base['engine']}"
    print(f"scenario {args.scenario}, depth {args.depth or 'the scenario bound'}: "
          f"{base['distinct']:,} distinct states, {base['generated']:,} generated, "
          f"depth {base['depth']}, verdict {base['verdict']} (all engines agree level by level)")
    print(f"{'engine':<10} {'search s':>9} {'start s':>8} {'cpu s':>7} {'states/s':>9} "
          f"{'lvl ovh s':>9} {'load before':>18} {'load after':>18}")
    for d in docs:
        ovh = f"{d['level_overhead_s']:.2f}" if "level_overhead_s" in d else "-"
        print(f"{d['engine']:<10} {d['search_s']:>9.1f} {d['start_s']:>8.1f} "
              f"{d['cpu_s']:>7.1f} {d['distinct'] / d['search_s']:>9.0f} {ovh:>9} "
              f"{str(d['load_before']):>18} {str(d['load_after']):>18}")
    for d in docs:
        if "spark" in d:
            print(f"{d['engine']}: {d['spark']['driver_levels']} levels ran in the driver "
                  f"(input below {d['spark']['driver_limit']} successors)")
    by = {d["engine"]: d for d in docs}
    if "local" in by and "local[2]" in by:
        print(f"local[2] / local engine: {by['local[2]']['search_s'] / by['local']['search_s']:.2f}"
              f"x (target <= 1.5)")
    if "local[1]" in by and "local[2]" in by:
        print(f"local[1] / local[2]: {by['local[1]']['search_s'] / by['local[2]']['search_s']:.2f}"
              f"x (target >= 1.6)")
    print("per level (seconds):")
    print(f"{'depth':>5} {'new':>8} " + " ".join(f"{d['engine']:>9}" for d in docs))
    for i, lv in enumerate(base["levels"]):
        print(f"{lv[0]:>5} {lv[3]:>8} " + " ".join(f"{d['levels'][i][5]:>9.2f}" for d in docs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="standard")
    ap.add_argument("--depth", type=int)
    ap.add_argument("--partitions", type=int, help="default: the engine's (1 per core here)")
    ap.add_argument("--driver-limit", type=int,
                    help="Spark: levels with fewer successors in their input run in the "
                         "driver (default: the engine's; 0: every level a Spark job)")
    ap.add_argument("--engines", default=DEFAULT_ENGINES)
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the engines in rotation N times; report each one's fastest")
    ap.add_argument("--json", type=Path, help="write every engine's figures to FILE")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        args.out.write_text(json.dumps(one(args.one, args.scenario, args.depth,
                                           args.partitions, args.driver_limit)))
        return
    engines = args.engines.split(",")
    runs: dict[str, list[dict]] = {e: [] for e in engines}
    for _ in range(args.repeat):  # in rotation, so every engine sees the same spells of load
        for engine in engines:
            runs[engine].append(run_child(engine, args))
    docs = [min(runs[e], key=lambda d: d["search_s"]) for e in engines]
    if args.repeat > 1:
        print("every run (search s, load before):")
        for e in engines:
            print(f"  {e:<10} " + ", ".join(f"{d['search_s']:.1f} ({d['load_before'][0]})"
                                            for d in runs[e]))
    report(docs, args)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
