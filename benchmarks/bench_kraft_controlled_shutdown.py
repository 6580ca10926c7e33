"""KRaft mode, controlled shutdown through heartbeats of a broker leading 10,000 of 100,000
partitions (issue 26): under 1 s from SIGTERM until its leaderships have moved in every live
broker's image and it is told it may shut down (Kafka 1.1: about 3 s).

Real ``kcontrol node`` processes: 3 controllers, 9 brokers (``_kraft_cluster_bench.Layout``:
brokers 1-3 each lead exactly 10,000 partitions with two of brokers 4-6 as followers,
brokers 4-6 lead the other 70,000, brokers 7-9 hold nothing), replication factor 3, 1,000
topics x 100 partitions created straight on the active controller. Each run sends SIGTERM to
one victim: it heartbeats at once with ``want_shut_down``; the active controller moves every
leadership off it and takes it out of every ISR (one batch, ending with its registration
change: in controlled shutdown) -- step 1 -- and, in a later heartbeat of the victim's once
every other active broker has reported (heartbeat) an offset at or past that batch, fences it
and answers ``should_shut_down`` -- step 2, Kafka's SHUTDOWN_NOW. Timed from the SIGTERM
(this process's clock, just before the signal):

- **decided**: the active controller's membership line ``broker N: active ->
  controlled_shutdown at offset X`` (its log's millisecond timestamp); for a broker leading
  nothing, step 1 is skipped: ``active -> fenced at offset X``;
- **every live broker's image**: each live broker asked (admin ``wait_offset``) to answer as
  soon as its published metadata offset is at least X (the batch replayed: the new leaders in
  its image), with the time it saw it (woken by the publication; nothing polls the brokers);
- **told**: the victim's own line ``lifecycle PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN``
  (the controller's ``should_shut_down`` decoded and acted on);
- **done**: the later of the two -- the figure of the target; and SIGTERM -> process exit;
  the controller's ``controlled_shutdown -> fenced`` line (step 2) is reported too, and the
  CPU seconds the live brokers used from the SIGTERM until the cluster is quiet again
  (``wait_quiet``: their replay of the batch and their replica writers; less noisy than the
  times on a loaded machine).

Checked after: the live brokers' own leader counts add up to every partition; one live
broker's Metadata answer names no partition led by the victim or by nobody. Baseline, same
run and cluster: the same SIGTERM to a broker leading nothing (brokers 7-9: the heartbeat
round trips and one record). The victims stay down: the next run's victim still leads its
own 10,000.

    .venv/bin/python benchmarks/bench_kraft_controlled_shutdown.py [--runs 3]
        [--topics 1000] [--partitions 100] [--dir DIR]
"""

from __future__ import annotations

import re
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _kraft_cluster_bench import (  # noqa: E402
    Layout,
    cluster_cpu,
    kraft_cluster,
    leaving_brokers,
    load,
    log_since,
    log_time,
    moved_off,
    parse_args,
    per_broker_ms,
    populate_quiet,
    print_calibration_after,
    print_header,
    state_change_log,
    stats,
    wait_quiet,
    watch_move,
)

TARGET_S = 1.0
TOLD = re.compile(r"lifecycle PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN")


def main() -> None:
    args = parse_args(__doc__, runs=3,
                      heartbeat_interval_ms=(int, 500, "broker.heartbeat.interval.ms"))
    layout = Layout(args.brokers)
    overrides = {"broker.heartbeat.interval.ms": str(args.heartbeat_interval_ms)}
    total = args.topics * args.partitions
    cal0 = print_header("bench_kraft_controlled_shutdown", {
        **overrides, "broker.session.timeout.ms": "6000 (local default)",
        "partitions": f"{total:,}", "brokers": str(args.brokers), "replication": "3",
        "controller.quorum.*": "local defaults"})
    rows: dict[str, list[tuple[float, float, float, float, float]]] = {"victim": [], "idle": []}
    with kraft_cluster("bench_kraft_controlled_shutdown", args.dir, args.brokers,
                       overrides) as cluster:
        populate_quiet(cluster, args.topics, args.partitions, layout)
        for gone in leaving_brokers(cluster, layout, args.runs):
            broker = gone.broker
            node = cluster.node(broker)
            own_log, own_pos = node.log_path, node.log_path.stat().st_size
            active = cluster.wait_leader(30).leader
            ctl_log = state_change_log(active)
            ctl_pos = ctl_log.stat().st_size if ctl_log.exists() else 0
            t_term: list[float] = []

            live = [cluster.node(b) for b in gone.live]
            cpu0: list[float] = []

            def term(n=node, at=t_term, cpu0=cpu0, live=live) -> None:  # noqa: ANN001
                n.stopped = True  # its exit is no failure
                cpu0.append(cluster_cpu(cluster, live))
                at.append(time.time())
                n.signal(signal.SIGTERM)

            line = re.compile(rf"broker {broker}: active -> (?:controlled_shutdown|fenced) "
                              r"at offset (\d+)")
            move = watch_move(cluster, term, line, gone.live, timeout=60)
            assert node.proc is not None
            node.proc.wait(60)
            exited = time.time() - t_term[0]
            node.close_client()
            told = _told(own_log, own_pos, t_term[0])
            fenced = _fenced(ctl_log, ctl_pos, broker, t_term[0])
            done = max(move.done, told)
            check = moved_off(cluster, gone, total)
            wait_quiet(cluster)
            cpu = cluster_cpu(cluster, live) - cpu0[0]
            rows[gone.kind].append((move.decided, move.done, told, done, exited))
            print(f"# run {gone.run} {gone.kind} broker {broker} (led {gone.led}): decided "
                  f"{move.decided * 1e3:.0f} ms, every live broker's image at offset "
                  f"{move.offset} {move.done * 1e3:.0f} ms (per broker: {per_broker_ms(move)}"
                  f"), told to shut down {told * 1e3:.0f} ms, "
                  + (f"fenced {fenced * 1e3:.0f} ms, " if fenced is not None else
                     "not fenced by the controller, ")
                  + f"exited {exited * 1e3:.0f} ms after the SIGTERM; {check}; the live "
                  f"brokers' CPU from the SIGTERM until quiet {cpu:.2f} s; {load()}",
                  flush=True)
    print_calibration_after(cal0)
    print("| measure (from SIGTERM) | min | median | max | ratio to the 0-partition "
          "baseline (median) | target | verdict |")
    print("|---|---|---|---|---|---|---|")
    names = ("controller decided (its line)", "moved in every live broker's image",
             "victim told it may shut down", "**done** (both)", "process exited")
    for kind, label in (("victim", "leading 10,000"), ("idle", "leading 0 (baseline)")):
        for i, what in enumerate(names):
            values = [r[i] for r in rows[kind]]
            if not values:
                continue
            lo, med, hi = stats(values)
            base = stats([r[i] for r in rows["idle"]])[1] if rows["idle"] else 0.0
            ratio = f"{med / base:.1f}x" if kind == "victim" and base > 0 else ""
            verdict = ("" if i != 3 or kind != "victim" else
                       "met" if hi < TARGET_S else "median met" if med < TARGET_S
                       else "MISSED")
            target = f"< {TARGET_S:.0f} s" if i == 3 and kind == "victim" else ""
            print(f"| broker {label}: {what} | {lo * 1e3:.0f} ms | {med * 1e3:.0f} ms | "
                  f"{hi * 1e3:.0f} ms | {ratio} | {target} | {verdict} |")


def _told(path: Path, pos: int, t0: float) -> float:
    for row in log_since(path, pos).splitlines():
        if TOLD.search(row):
            stamp = log_time(row)
            if stamp is not None:
                return stamp - t0
    raise RuntimeError(f"{path}: the broker was never told to shut down")


def _fenced(path: Path, pos: int, broker: int, t0: float) -> float | None:
    line = re.compile(rf"broker {broker}: controlled_shutdown -> fenced at offset")
    for row in log_since(path, pos).splitlines():
        if line.search(row):
            stamp = log_time(row)
            return None if stamp is None else stamp - t0
    return None


if __name__ == "__main__":
    main()
