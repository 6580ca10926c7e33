"""Seeded random walks of every shipped scenario (ZooKeeper mode's, KRaft mode's and the Raft
quorum's), over a range of seeds: one row per (scenario, seed), exit 1 when any walk finds a
violation.

    .venv/bin/python scripts/walk_all.py                      # seeds 1-20, 100,000 steps each
    .venv/bin/python scripts/walk_all.py --seeds 1-3 --steps 20000 --scenario deep
    .venv/bin/python scripts/walk_all.py --jobs 2 --json walks.json

Each row is what ``kcontrol check SCENARIO --random --steps N --seed S`` reports; a
violation's trace is saved as that command saves it (``--trace-out``). The walks of one
scenario and seed are deterministic, so a failing row is reproduced by that command.
The rows go to standard output; the walks done of all, their rate and the time left to
standard error (``model_check.progress``: a bar on a terminal, else a plain line at most
every 10 s).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model_check import counterexample as cx  # noqa: E402
from model_check.checks import default_checks  # noqa: E402
from model_check.kraft import walk as kraft_walk  # noqa: E402
from model_check.kraft.scenario import load_kraft  # noqa: E402
from model_check.kraft.scenario import names as kraft_names  # noqa: E402
from model_check.kraft.search import replay as kraft_replay  # noqa: E402
from model_check.objects import walk as object_walk  # noqa: E402
from model_check.objects.search import trace_lines  # noqa: E402
from model_check.progress import Progress  # noqa: E402
from model_check.raft.kind import RAFT  # noqa: E402
from model_check.raft.scenario import names as raft_names  # noqa: E402
from model_check.scenario import load, shipped_names  # noqa: E402
from model_check.walk import walks  # noqa: E402


def seed_range(text: str) -> list[int]:
    """``"1-20"`` or ``"1,4,7"`` or ``"5"``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            out += list(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a seed range: {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"no seed in {text!r}")
    return out


def one(job: tuple[str, int, int, str]) -> dict:
    name, seed, steps, trace_out = job
    if name in kraft_names():
        return one_kraft(name, seed, steps, trace_out)
    if name in raft_names():
        return one_raft(name, seed, steps, trace_out)
    sc = load(name)
    r = walks(sc, default_checks(), steps, seed)
    row = {"scenario": name, "seed": seed, "verdict": r.verdict, "steps": r.states_generated,
           "distinct": r.distinct_states, "deepest": r.depth, "seconds": round(r.seconds, 2)}
    if r.violation is not None:
        v = r.violation
        trace = cx.rebuild(sc, v.setup, v.path, v.invariant, v.detail)
        saved = cx.save(trace, Path(trace_out), "random")
        row["violation"] = f"{v.invariant}: {v.detail}"
        row["trace"] = str(saved.get("text", ""))
    return row


def one_kraft(name: str, seed: int, steps: int, trace_out: str) -> dict:
    """A KRaft scenario's walks (``kcontrol check kraft-... --random``)."""
    sc = load_kraft(name)
    r = kraft_walk.walks(sc, steps, seed)
    row = {"scenario": name, "seed": seed, "verdict": r.verdict, "steps": r.states_generated,
           "distinct": r.distinct_states, "deepest": r.depth, "seconds": round(r.seconds, 2)}
    if r.violation is not None:
        v = r.violation
        out = Path(trace_out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{name}-random-{seed}-{v.invariant}.txt"
        path.write_text("\n".join(a.describe(sc) for a, _ in kraft_replay(sc, v.path)) + "\n")
        row["violation"] = f"{v.invariant}: {v.detail}"
        row["trace"] = str(path)
    return row


def one_raft(name: str, seed: int, steps: int, trace_out: str) -> dict:
    """A Raft scenario's walks (``kcontrol check raft-... --random``)."""
    sc = RAFT.load(name)
    r = object_walk.walks(RAFT, sc, steps, seed)
    row = {"scenario": name, "seed": seed, "verdict": r.verdict, "steps": r.states_generated,
           "distinct": r.distinct_states, "deepest": r.depth, "seconds": round(r.seconds, 2)}
    if r.violation is not None:
        v = r.violation
        out = Path(trace_out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{name}-random-{seed}-{v.invariant}.txt"
        path.write_text("\n".join(trace_lines(RAFT, sc, v.path)) + "\n")
        row["violation"] = f"{v.invariant}: {v.detail}"
        row["trace"] = str(path)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=seed_range, default=seed_range("1-20"),
                    help="seeds: 1-20 (default), 1,4,7 or 5")
    ap.add_argument("--steps", type=int, default=100_000,
                    help="steps per scenario and seed (default 100,000)")
    ap.add_argument("--scenario", action="append", choices=shipped_names() + kraft_names() + raft_names(),
                    help="only this scenario (repeatable; default: every shipped one)")
    ap.add_argument("--jobs", type=int, default=max(1, multiprocessing.cpu_count()),
                    help="walks run at once (default: the CPU count)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON to FILE")
    ap.add_argument("--trace-out", default=".kcontrol/counterexamples",
                    help="where a violation's trace is saved")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.jobs < 1:
        ap.error("--steps and --jobs must be at least 1")
    names = args.scenario or shipped_names() + kraft_names() + raft_names()
    jobs = [(n, s, args.steps, args.trace_out) for n in names for s in args.seeds]
    print(f"{len(jobs)} walks: {len(names)} scenarios x {len(args.seeds)} seeds, "
          f"{args.steps} steps each, {args.jobs} at once", flush=True)
    print(f"{'scenario':<20} {'seed':>4} {'verdict':<9} {'steps':>8} {'distinct':>9} "
          f"{'deepest':>7} {'seconds':>8}", flush=True)
    t0 = time.perf_counter()
    rows: list[dict] = []
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool, \
            Progress("walk_all", len(jobs), "walks") as bar:
        for row in pool.imap(one, jobs):
            rows.append(row)
            bar.advance()
            print(f"{row['scenario']:<20} {row['seed']:>4} {row['verdict']:<9} "
                  f"{row['steps']:>8} {row['distinct']:>9} {row['deepest']:>7} "
                  f"{row['seconds']:>8.1f}", flush=True)
            if "violation" in row:
                print(f"    {row['violation']}\n    trace: {row['trace']}", flush=True)
    bad = [r for r in rows if r["verdict"] != "pass"]
    print(f"{len(rows) - len(bad)} of {len(rows)} walks pass "
          f"({time.perf_counter() - t0:.0f} s)")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
