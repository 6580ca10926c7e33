"""KRaft mode: how fast ISRs take a returning broker back (the ISR expander,
``adapters/kraft_broker/isr_expander.py``), on real processes.

3 controllers, 3 brokers (``KRaftCluster``; heartbeat 200 ms, session 3 s), one topic of
``--partitions`` partitions at replication factor 3 created over the wire. Each run: ``kill
-9`` broker 3; wait until the controller has fenced it and it is out of every ISR; restart
it; time from its being seen registered and unfenced (admin ``brokers`` of the active
controller, polled every 20 ms) to every ISR whole again in the committed image (admin
``topics``, polled every 20 ms). The leaders ask with AlterPartition; this is what their
asking costs.

Baseline, same run and cluster: the same runs first with only a 1-partition topic (the fixed
cost: a round of the expander, one AlterPartition and its commit), then the big topic is
created and the runs repeated.
``--code DIR`` runs the nodes from another checkout (e.g. ``git worktree`` of an earlier
commit): its figures are the "before".

    .venv/bin/python benchmarks/bench_kraft_isr_regrowth.py [--partitions 1500] [--runs 3]
        [--code DIR] [--dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.cluster import kraft_launcher  # noqa: E402
from adapters.cluster.kraft_launcher import KRaftCluster  # noqa: E402
from adapters.cluster.kraft_nodes import subprocess_env  # noqa: E402
from adapters.kraft_node.wire_client import WireClient  # noqa: E402
from fsm.errors import ErrorCode  # noqa: E402
from fsm.kraft.controller import requests as rq  # noqa: E402

VICTIM = 3


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def load() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in __import__("os").getloadavg())


def until(what: str, probe: Callable[[], Any], timeout: float, step: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(step)
    raise TimeoutError(f"{what}: not within {timeout:g} s")


def active_ask(c: KRaftCluster, op: str) -> dict[str, Any] | None:
    v = c.quorum()
    got = None if v is None else c.controllers[v.leader].ask(op)
    return got if got and got.get("active") else None


def partitions(c: KRaftCluster, topic: str) -> dict[str, Any] | None:
    got = active_ask(c, "topics")
    t = None if got is None else got["topics"].get(topic)
    return None if t is None else t["partitions"]


def whole(c: KRaftCluster, topic: str, n: int) -> bool:
    ps = partitions(c, topic)
    return ps is not None and len(ps) == n and all(
        p["leader"] >= 0 and sorted(p["isr"]) == sorted(p["replicas"]) for p in ps.values())


def victim_out(c: KRaftCluster, topic: str) -> bool:
    ps = partitions(c, topic)
    return ps is not None and all(VICTIM not in p["isr"] for p in ps.values())


def create(c: KRaftCluster, topic: str, n: int) -> None:
    host, port = c.brokers[1].address.rsplit(":", 1)
    with WireClient(host, int(port), timeout=60) as client:
        got = client.call_value(rq.CreateTopicsRequest((rq.CreatableTopic(topic, n, 3),), ()))
    if [t.error for t in got.topics] != [ErrorCode.NONE]:
        raise RuntimeError(f"CreateTopics {topic}: {got}")
    until(f"{topic}: {n} partitions led and whole", lambda: whole(c, topic, n), 120)


def regrow(c: KRaftCluster, topic: str, n: int) -> float:
    """kill -9 the victim, restart it once it is out of every ISR; seconds from its being
    unfenced again to every ISR whole."""
    c.kill(VICTIM)
    c.wait_brokers((VICTIM,), fenced=True, timeout=30)
    until(f"broker {VICTIM} out of every ISR of {topic}", lambda: victim_out(c, topic), 60)
    c.start_node(VICTIM)
    c.wait_brokers((VICTIM,), timeout=60)
    t0 = time.monotonic()
    until(f"{topic}: every ISR whole", lambda: whole(c, topic, n), 120)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", type=Path, default=None, help="run the nodes from this checkout")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args(argv)
    if args.partitions < 1 or args.runs < 1:
        ap.error("--partitions and --runs: at least 1")
    cal0 = calibration()
    print(f"# bench_kraft_isr_regrowth {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"calibration {cal0:.3f} s; {load()}; nodes from {args.code or 'this checkout'}",
          flush=True)
    if args.code is not None:
        kraft_launcher.REPO_ROOT = args.code.resolve()
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-isr-regrowth-"))
    c = KRaftCluster(root, 3, 3, overrides={
        "broker.heartbeat.interval.ms": "200", "broker.session.timeout.ms": "3000"})
    if args.code is not None:
        c.env = subprocess_env(args.code.resolve())
    rows: dict[str, list[float]] = {"base": [], "many": []}
    try:
        c.up(timeout=120)
        for kind, topic, n in (("base", "one", 1), ("many", "many", args.partitions)):
            create(c, topic, n)
            for run in range(args.runs):
                s = regrow(c, topic, n)
                rows[kind].append(s)
                print(f"# run {run + 1} {topic} ({n:,} partitions): ISRs whole {s:.2f} s "
                      f"after broker {VICTIM} was seen unfenced; {load()}", flush=True)
    finally:
        c.stop()
    cal1 = calibration()
    base = statistics.median(rows["base"])
    print(f"# calibration after {cal1:.3f} s; {load()}")
    print("| ISRs whole after the victim's unfencing | min | median | max | ratio to 1 |")
    print("|---|---:|---:|---:|---:|")
    for kind, label in (("base", "1 partition (baseline)"),
                        ("many", f"{args.partitions:,} partitions")):
        v = rows[kind]
        med = statistics.median(v)
        print(f"| {label} | {min(v):.2f} s | {med:.2f} s | {max(v):.2f} s | "
              f"{med / base if base > 0 else float('nan'):.1f}x |")


if __name__ == "__main__":
    main()
