"""Snapshot + restore + 64-bit fingerprint of a 3-broker, 2-partition world (RF 3, running,
one controller active). Target (issue 3): at least 20,000 cycles per second on one core.

Prints a table with baselines measured in the same run: ``pickle.dumps`` of the snapshot
alone, a fingerprint over plain pickle, and ``copy.deepcopy`` of the whole world.
``--append`` adds the table, machine and date to docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_world_snapshot.py [--seconds 2] [--append]
"""

from __future__ import annotations

import argparse
import copy
import datetime
import os
import pickle
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model_check.world import CreateTopic, World, WorldConfig, fingerprint  # noqa: E402
from model_check.world import actions as A  # noqa: E402
from model_check.world.fingerprint import encode, fingerprint_plain  # noqa: E402
from model_check.world.runner import Runner  # noqa: E402

TARGET = 20_000


def running_world() -> tuple[World, WorldConfig]:
    config = WorldConfig(brokers=3, admin=(CreateTopic("t", ((0, (1, 2, 3)), (1, (2, 3, 1)))),))
    world = World(config)
    runner = Runner(world, out=lambda _line: None)
    runner.start_all()
    runner.run()
    runner.do(A.Action(A.ADMIN, 0, 0))
    runner.run()
    assert world.is_quiescent() and world.active_controller() == 1
    return world, config


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds`` (best of three slices)."""
    best = 0.0
    for _ in range(3):
        n = 0
        start = time.perf_counter()
        deadline = start + seconds / 3
        while True:
            for _ in range(50):
                fn()
            n += 50
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, n / (now - start))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--append", action="store_true", help="append to docs/benchmarks.md")
    args = ap.parse_args(argv)
    world, config = running_world()
    snap = world.snapshot()
    assert World.restore(snap, config).snapshot() == snap
    assert fingerprint(World.restore(snap, config).snapshot()) == fingerprint(snap)

    def cycle() -> int:
        s = world.snapshot()
        World.restore(s, config)
        return fingerprint(s)

    rows = [
        ("snapshot + restore + fingerprint (the target)", rate(cycle, args.seconds)),
        ("world.snapshot()", rate(world.snapshot, args.seconds)),
        ("World.restore(snapshot)", rate(lambda: World.restore(snap, config), args.seconds)),
        ("fingerprint(snapshot) (primed pickle + blake2b)",
         rate(lambda: fingerprint(snap), args.seconds)),
        ("baseline: pickle.dumps(snapshot)", rate(lambda: pickle.dumps(snap, 5), args.seconds)),
        ("baseline: blake2b over plain pickle",
         rate(lambda: fingerprint_plain(snap), args.seconds)),
        ("baseline: copy.deepcopy(world)", rate(lambda: copy.deepcopy(world), args.seconds)),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"world: 3 brokers, topic t with 2 partitions RF 3, controller 1 active; snapshot "
        f"{len(pickle.dumps(snap, 5))} bytes pickled, {len(encode(snap))} bytes encoded",
        "",
        "| operation | per second | µs each |",
        "| --- | ---: | ---: |",
    ]
    for name, r in rows:
        lines.append(f"| {name} | {r:,.0f} | {1e6 / r:.1f} |")
    verdict = "meets" if rows[0][1] >= TARGET else "MISSES"
    lines += ["", f"target {TARGET:,}/s: {verdict} ({rows[0][1]:,.0f}/s); load average "
              f"{load:.2f} on {os.cpu_count()} cores while measuring"]
    print("\n".join(lines))
    if args.append:
        doc = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        head = [
            "",
            "## World snapshot + restore + fingerprint (`benchmarks/bench_world_snapshot.py`)",
            "",
            f"{now}; {platform.processor() or platform.machine()} "
            f"({_cpu_model()}), Python {platform.python_version()}, one core.",
            "",
        ]
        if not doc.exists():
            head = ["# Benchmarks", *head]
        with doc.open("a") as f:
            f.write("\n".join(head + lines) + "\n")
    return 0


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
