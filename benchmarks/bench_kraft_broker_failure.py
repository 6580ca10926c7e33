"""KRaft mode, a broker that stops heartbeating while it leads 10,000 of 100,000 partitions
(issue 26): new leaders for all of them in every live broker's image within the session
timeout + 0.5 s of the stop.

Real ``kcontrol node`` processes: 3 controllers, 9 brokers (``_kraft_cluster_bench.Layout``:
brokers 1-3 each lead exactly 10,000 partitions with two of brokers 4-6 as followers,
brokers 4-6 lead the other 70,000, brokers 7-9 hold nothing), replication factor 3, 1,000
topics x 100 partitions created straight on the active controller. Each run stops one
victim (``kill -9``, or ``--signal STOP``: SIGSTOP, a process that hangs) and times, from the
stop (this process's clock, just before the signal):

- **fenced**: the active controller's membership line ``broker N: active -> fenced at offset
  X (lease expired)`` (its log's millisecond timestamp): the lease ran out and the controller
  wrote the partition changes and the fence as one batch ending at X;
- **every live broker's image**: each live broker is then asked (admin ``wait_offset``) to
  answer as soon as its published metadata offset is at least X -- its image has replayed
  the batch: new leaders for all 10,000 partitions -- with the time it saw it (woken by the
  publication; nothing polls the brokers). Checked
  after: the live brokers' own leader counts add up to every partition, and one live
  broker's Metadata answer names no partition led by the victim or by nobody.

Baseline, same run and cluster: the session timeout itself (``broker.session.timeout.ms``;
a stop lands on average half a heartbeat interval after the last heartbeat, and the
controller looks at leases every 250 ms), and the same stop of a broker leading nothing
(brokers 7-9: the fence alone, one record). The victims stay down: the next run's victim
still leads its own 10,000.

    .venv/bin/python benchmarks/bench_kraft_broker_failure.py [--runs 3] [--signal KILL]
        [--session-timeout-ms 6000] [--topics 1000] [--partitions 100] [--dir DIR]
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _kraft_cluster_bench import (  # noqa: E402
    Layout,
    kraft_cluster,
    leaving_brokers,
    load,
    moved_off,
    parse_args,
    per_broker_ms,
    populate_quiet,
    print_calibration_after,
    print_header,
    stats,
    watch_move,
)

MARGIN_S = 0.5


def main() -> None:
    args = parse_args(
        __doc__, runs=3,
        signal=(str, "KILL", "KILL (kill -9) or STOP (SIGSTOP)"),
        session_timeout_ms=(int, 6000, "broker.session.timeout.ms"),
        heartbeat_interval_ms=(int, 500, "broker.heartbeat.interval.ms"))
    sig = {"KILL": signal.SIGKILL, "STOP": signal.SIGSTOP}[args.signal.upper()]
    layout = Layout(args.brokers)
    session_s = args.session_timeout_ms / 1000
    overrides = {"broker.session.timeout.ms": str(args.session_timeout_ms),
                 "broker.heartbeat.interval.ms": str(args.heartbeat_interval_ms)}
    total = args.topics * args.partitions
    cal0 = print_header("bench_kraft_broker_failure", {
        **overrides, "partitions": f"{total:,}", "brokers": str(args.brokers),
        "replication": "3", "signal": f"SIG{args.signal.upper()}",
        "controller.quorum.*": "local defaults"})
    rows: dict[str, list[tuple[float, float]]] = {"victim": [], "idle": []}
    with kraft_cluster("bench_kraft_broker_failure", args.dir, args.brokers,
                       overrides) as cluster:
        populate_quiet(cluster, args.topics, args.partitions, layout)
        for gone in leaving_brokers(cluster, layout, args.runs):
            broker = gone.broker

            def stop(b: int = broker) -> None:
                cluster.node(b).signal(sig)

            line = re.compile(rf"broker {broker}: \w+ -> fenced at offset (\d+) "
                              r"\(lease expired\)")
            move = watch_move(cluster, stop, line, gone.live, timeout=session_s + 60)
            if sig == signal.SIGSTOP:
                cluster.kill(broker)  # SIGKILL reaches a stopped process
            else:
                cluster.node(broker).kill()  # reaped; counted as stopped on purpose
            check = moved_off(cluster, gone, total)
            fenced, done = move.decided, move.done
            rows[gone.kind].append((fenced, done))
            print(f"# run {gone.run} {gone.kind} broker {broker} (led {gone.led}): fenced "
                  f"{fenced * 1e3:.0f} ms after the stop, every live broker's image at "
                  f"offset {move.offset} after {done * 1e3:.0f} ms (per broker: "
                  f"{per_broker_ms(move)}); {done - session_s:+.3f} s past the session "
                  f"timeout; {check}; {load()}", flush=True)
    target = session_s + MARGIN_S
    print_calibration_after(cal0)
    print("| measure (from the stop) | min | median | max | vs session timeout "
          "(median) | target | verdict |")
    print("|---|---|---|---|---|---|---|")
    for kind, label in (("victim", "leading 10,000"), ("idle", "leading 0")):
        if not rows[kind]:
            continue
        for i, what in ((0, "fenced (controller's line)"),
                        (1, "new leaders in every live broker's image")):
            lo, med, hi = stats([r[i] for r in rows[kind]])
            verdict = ("" if i == 0 else
                       "met" if hi < target else "median met" if med < target else "MISSED")
            print(f"| broker {label}: {what} | {lo:.3f} s | {med:.3f} s | {hi:.3f} s | "
                  f"{med / session_s:.2f}x ({med - session_s:+.3f} s) | "
                  f"{'< ' + format(target, '.1f') + ' s' if i else ''} | {verdict} |")
    print(f"| baseline: broker.session.timeout.ms | {session_s:.3f} s | | | 1.00x | | |")


if __name__ == "__main__":
    main()
