"""Distinct states per second of the model checker on one core (issue 6: target 10,000/s).

For each scenario (``standard`` by default, and ``symmetric``, where two brokers host no
replica) it runs, in this one process, one after the other:

1. **baseline: world only** -- the same breadth-first search over the same world with no
   invariant, no global view and no symmetry: restore + apply(one action) + snapshot +
   fingerprint per successor (what ``bench_world_snapshot.py`` times), i.e. the floor the
   checker cannot go below without changing the world or the cores;
2. **checker** -- ``model_check.search.bfs`` with the invariant catalogue, symmetry off;
3. **checker + symmetry** -- the same with ``Options(symmetry=True)``.

All three explore to the same depth. Reported: distinct states, successors generated, CPU
seconds (``time.process_time``: one core, whatever else the machine runs), distinct states
per CPU second, the ratio to the baseline, and the reduction symmetry gives. The load
average is printed before and after: the machine is shared.

    .venv/bin/python benchmarks/bench_model_check.py [--depth 8] [--scenario standard ...]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _world_bfs import next_level  # noqa: E402

from model_check.checks import default_checks  # noqa: E402
from model_check.memo import Memos  # noqa: E402
from model_check.scenario import load  # noqa: E402
from model_check.search import Options, bfs  # noqa: E402
from model_check.start import start  # noqa: E402
from model_check.world import fingerprint  # noqa: E402

TARGET = 10_000
DEFAULT_DEPTHS = {"standard": 8, "symmetric": 9}


def world_only(name: str, depth: int) -> tuple[int, int, float]:
    """BFS of bare worlds to ``depth``: (distinct states, successors, CPU seconds)."""
    st = start(load(name))
    config = st.config
    seen = {fingerprint(st.snapshot)}
    frontier = [st.snapshot]
    generated = 0
    was = gc.isenabled()
    gc.disable()  # as the checker does (search._no_cyclic_gc)
    t = time.process_time()
    try:
        memos = Memos(config)
        for _ in range(depth):
            frontier, n = next_level(frontier, config, seen, describe=False, memos=memos)
            generated += n
        return len(seen), generated, time.process_time() - t
    finally:
        if was:
            gc.enable()


def checker(name: str, depth: int, symmetry: bool) -> tuple[int, int, float, str]:
    """(distinct states, successors, CPU seconds, verdict) of ``bfs``."""
    t = time.process_time()
    r = bfs(load(name), default_checks(), Options(depth=depth, symmetry=symmetry))
    return r.distinct_states, r.states_generated, time.process_time() - t, r.verdict


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", nargs="*", default=["standard", "symmetric"])
    ap.add_argument("--depth", type=int, help="one depth for all (default: 8, symmetric 9)")
    args = ap.parse_args(argv)
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print("| scenario | depth | run | distinct | generated | CPU s | distinct/CPU s | "
          "vs baseline | symmetry reduction |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name in args.scenario:
        depth = args.depth or DEFAULT_DEPTHS.get(name, 8)
        base_n, base_g, base_s = world_only(name, depth)
        base_rate = base_n / base_s
        print(f"| {name} | {depth} | baseline: world only | {base_n:,} | {base_g:,} | "
              f"{base_s:.1f} | {base_rate:,.0f} | 1.00 | |", flush=True)
        plain = None
        for sym in (False, True):
            n, g, s, verdict = checker(name, depth, sym)
            rate = n / s
            reduction = "" if plain is None else f"{1 - n / plain:.0%} fewer states"
            label = "checker + symmetry" if sym else "checker"
            print(f"| {name} | {depth} | {label} ({verdict}) | {n:,} | {g:,} | {s:.1f} | "
                  f"{rate:,.0f} | {rate / base_rate:.2f} | {reduction} |", flush=True)
            if not sym:
                plain = n
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"target {TARGET:,} distinct states per second per core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
