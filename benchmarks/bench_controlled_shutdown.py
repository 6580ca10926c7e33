"""Controlled shutdown of a broker leading 10,000 partitions (3 brokers, replication factor
3; issue 5 target: under 1 s from request to response; Kafka 1.1: about 3 s).

Real ``kcontrol broker`` processes on their own 3-server ensemble. Each run: the victim (not
the controller) leads all 10,000 partitions with full ISRs; it gets SIGTERM; its
ControlledShutdown v2 goes to the controller, which moves every leadership (one conditional
ZooKeeper round for 10,000 partition states, LeaderAndIsr to the two new leaders,
UpdateMetadata to all) and answers; the victim exits. Timed from the victim's own log: the
line written just before it connects and sends the request, and the line written once the
answer is decoded (millisecond timestamps). Also: SIGTERM to process exit. Between runs the
victim restarts, rejoins every ISR (its leaders' batched ISR expansion) and a preferred
election gives it the 10,000 leaderships back.

Baseline, same run and ensemble: ``raw_zookeeper_write`` -- the ZooKeeper floor of the
round the controller must make (10,000 znodes set with pipelined ``transaction()`` batches of
1,000, no encoding, no fencing).

Run: .venv/bin/python benchmarks/bench_controlled_shutdown.py [--runs 3]
"""

from __future__ import annotations

import re
import signal
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _broker_bench import (  # noqa: E402
    load,
    parse_args,
    raw_zookeeper_write,
    restore_leader,
    victim_cluster,
    zk,
)

STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"
ASKING = re.compile(STAMP + r" .*asking controller (\d+) .*for a controlled shutdown")
ANSWERED = re.compile(STAMP + r" .*ControlledShutdown \(epoch \d+\) answered (\w+)")


def _t(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def request_to_response(log: str) -> tuple[float, int, str]:
    """(seconds from the first request to the first NONE answer, attempts, last answer)."""
    asks = ASKING.findall(log)
    answers = ANSWERED.findall(log)
    if not asks or not answers:
        raise RuntimeError("no ControlledShutdown request/answer in the victim's log")
    done = next((t for t, e in answers if e == "NONE"), None)
    if done is None:
        raise RuntimeError(f"the controlled shutdown was never answered NONE: {answers}")
    return _t(done) - _t(asks[0][0]), len(asks), answers[-1][1]


def main() -> None:
    args = parse_args()
    with victim_cluster("bench_controlled_shutdown", args.dir) as bench:
        cluster, client, victim = bench.cluster, bench.client, bench.victim
        rows = []
        for run in range(args.runs):
            if run:
                t_restore = time.perf_counter()
                restore_leader(cluster, client, victim)
                print(f"# run {run + 1}: restored (ISR expansion + preferred election) "
                      f"in {time.perf_counter() - t_restore:.1f} s")
            log_file = cluster.brokers[victim].log_file
            offset = log_file.stat().st_size
            t_kill = time.perf_counter()
            cluster.kill_broker(victim, signal.SIGTERM)
            if not cluster.wait_stopped(victim, 120):
                raise RuntimeError("the victim did not exit within 120 s")
            exit_s = time.perf_counter() - t_kill
            code = cluster.exit_codes.get(victim)
            cluster.forget(victim)
            with log_file.open(errors="replace") as f:
                f.seek(offset)
                log = f.read()
            rtt, attempts, answer = request_to_response(log)
            after = zk(client)
            still = sum(1 for s in after.partition_states.values()
                        if s.leader_and_isr.leader == victim)
            rows.append((rtt, exit_s, attempts))
            print(f"# run {run + 1}: request->response {rtt * 1e3:.0f} ms, "
                  f"SIGTERM->exit {exit_s * 1e3:.0f} ms, attempts {attempts}, "
                  f"answer {answer}, exit code {code}, partitions still led by the "
                  f"victim {still}; {load()}")
            cluster.start_broker(victim)
        base = raw_zookeeper_write(client)
        best = min(r[0] for r in rows)
        med = statistics.median(r[0] for r in rows)
        print("| measure | value |")
        print("|---|---|")
        print(f"| ControlledShutdown request -> response, best of {len(rows)} | "
              f"**{best * 1e3:.0f} ms** |")
        print(f"| same, median | {med * 1e3:.0f} ms |")
        print(f"| SIGTERM -> process exit, best | {min(r[1] for r in rows) * 1e3:.0f} ms |")
        print(f"| baseline: raw ZooKeeper write of 10,000 znodes (best of 3) | "
              f"{base * 1e3:.0f} ms |")
        print(f"| ratio best / baseline | {best / base:.1f}x |")
        print(f"| load after | {load()} |")


if __name__ == "__main__":
    main()
