"""What ``--coverage`` costs the model checker (issue 20: at most 10% of distinct states per
second on ``standard``).

Runs ``model_check.search.bfs`` on one scenario with and without a ``Coverage``, alternating
(off, on, off, on, ...), each run in a fresh child process -- the step memo, the codec's and
the views' memos start empty every time, as in ``kcontrol check`` -- and reports per pair the
distinct states per CPU second (``time.process_time`` of the child: one core, whatever else
the machine runs) and the ratio on/off. Alternating pairs cancel most of the drift of a noisy
machine; the median ratio is the figure. A fixed calibration (``sum(i*i for i in
range(10**6))``, best of 5) is printed before and after, to compare absolute figures across
machines and moments.

    .venv/bin/python benchmarks/bench_coverage.py [--scenario standard] [--depth N]
        [--pairs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = 0.90  # coverage on keeps at least 90% of the states per second


def calibration() -> float:
    """Seconds for ``sum(i*i for i in range(10**6))``, best of 5."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def child(scenario: str, depth: int | None, coverage: bool) -> dict:
    """One run (in this process): states, generated, CPU seconds, verdict."""
    from model_check.checks import default_checks
    from model_check.coverage import Coverage
    from model_check.scenario import load
    from model_check.search import Options, bfs

    cov = Coverage() if coverage else None
    t = time.process_time()
    r = bfs(load(scenario), default_checks(), Options(depth=depth), coverage=cov)
    cpu = time.process_time() - t
    out = {"states": r.distinct_states, "generated": r.states_generated, "cpu": cpu,
           "verdict": r.verdict}
    if cov is not None:
        rep = cov.report()
        out["core_steps"] = rep["core_steps"]
        out["never"] = len(rep["never"])
    return out


def run_child(scenario: str, depth: int | None, coverage: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", "--scenario", scenario,
           *(["--depth", str(depth)] if depth is not None else []),
           *(["--coverage"] if coverage else [])]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="standard")
    ap.add_argument("--depth", type=int, help="default: the scenario's")
    ap.add_argument("--pairs", type=int, default=3, help="off/on pairs (default 3)")
    ap.add_argument("--json", type=Path, help="write the runs as JSON to FILE")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--coverage", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.scenario, args.depth, args.coverage)))
        return 0
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"# {args.scenario}, depth {args.depth or 'as the scenario'}; each run in a fresh "
          f"process, coverage off and on alternating")
    print(f"{'pair':>4} {'states':>9} {'off cpu s':>10} {'off st/s':>9} {'on cpu s':>9} "
          f"{'on st/s':>9} {'on/off':>7}")
    runs, ratios = [], []
    for i in range(1, args.pairs + 1):
        off = run_child(args.scenario, args.depth, False)
        on = run_child(args.scenario, args.depth, True)
        assert (off["states"], off["generated"], off["verdict"]) == \
            (on["states"], on["generated"], on["verdict"]), "coverage changed the search"
        rate_off, rate_on = off["states"] / off["cpu"], on["states"] / on["cpu"]
        ratios.append(rate_on / rate_off)
        runs.append({"pair": i, "off": off, "on": on, "ratio": ratios[-1]})
        print(f"{i:>4} {off['states']:>9,} {off['cpu']:>10.2f} {rate_off:>9,.0f} "
              f"{on['cpu']:>9.2f} {rate_on:>9,.0f} {ratios[-1]:>7.3f}", flush=True)
    cal1 = calibration()
    median = statistics.median(ratios)
    print(f"# median on/off {median:.3f} (target at least {TARGET:.2f}: "
          f"{'met' if median >= TARGET else 'NOT met'}); calibration after: {cal1:.3f} s, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"# coverage counted {runs[-1]['on']['core_steps']:,} core steps; "
          f"{runs[-1]['on']['never']} items never reached by this scenario alone")
    if args.json is not None:
        args.json.write_text(json.dumps({"scenario": args.scenario, "depth": args.depth,
                                         "calibration": [cal0, cal1], "runs": runs,
                                         "median_ratio": median}, indent=2) + "\n")
    return 0 if median >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
