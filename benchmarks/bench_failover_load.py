"""Controller failover load with 100,000 partitions (1,000 topics x 100 partitions, issue 4).

Measures, in the same run on the same ensemble:

* **kcontrol**: a fresh ``ControllerService`` wins ``/controller``; the time from winning (the
  election's ``WriteResult``) to having built ``ClusterLoaded`` (``ControllerService.last_load_s``:
  live brokers, topic znodes with their data watches, every partition state through
  ``multiRead`` batches, decoded with the codecs);
* **baseline**: reading the same znodes (broker registrations, topic znodes, partition states)
  with pipelined ``get_async`` (8,000 in flight), bytes only, not decoded.

Best of ``--runs`` for each (the machine is shared). ``--distinct`` gives every partition state
different bytes (a unique leader epoch), defeating the decoder's memo: the worst case.

    .venv/bin/python benchmarks/bench_failover_load.py [--servers 3] [--topics 1000]
        [--partitions 100] [--runs 3] [--distinct] [--connect HOSTS]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazoo.client import KazooClient  # noqa: E402

from adapters.controller import ControllerService  # noqa: E402
from adapters.ensemble import Ensemble  # noqa: E402
from adapters.zookeeper import codec  # noqa: E402
from adapters.zookeeper.multi_read import read_many  # noqa: E402
from fsm import zk_paths as P  # noqa: E402
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment  # noqa: E402
from fsm.znodes import BrokerRegistration  # noqa: E402

BROKERS = 10


def populate(c: KazooClient, topics: int, partitions: int, distinct: bool) -> list[str]:
    for p in P.PERSISTENT_PATHS:
        c.ensure_path(p)
    for b in range(BROKERS):
        path = P.broker(b)
        c.create(path, codec.encode(path, BrokerRegistration(b, (Endpoint("PLAINTEXT", "h", 9092 + b),))),
                 ephemeral=True)
    paths: list[str] = []
    pending = []
    tx = c.transaction()
    n = 0
    for t in range(topics):
        name = f"topic-{t:04d}"
        reps = {p: [(t + p + k) % BROKERS for k in range(3)] for p in range(partitions)}
        tx.create(P.topic(name), codec.encode(P.topic(name), TopicAssignment.of(reps)))
        tx.create(P.partitions(name), b"")
        for p in range(partitions):
            epoch = t * partitions + p if distinct else p % 5
            li = LeaderAndIsr(reps[p][0], epoch, tuple(reps[p]), 1)
            tx.create(P.partition(name, p), b"")
            sp = P.partition_state(name, p)
            tx.create(sp, codec.encode(sp, li))
            paths.append(sp)
            n += 2
            if n >= 4000:
                pending.append(tx.commit_async())
                tx, n = c.transaction(), 0
                if len(pending) >= 8:
                    pending.pop(0).get()
    pending.append(tx.commit_async())
    for r in pending:
        res = r.get()
        bad = [x for x in res if isinstance(x, Exception)]
        assert not bad, bad[:3]
    return paths


def kcontrol_load(hosts: str, broker_id: int) -> tuple[float, float, int]:
    svc = ControllerService(broker_id, hosts, session_timeout_ms=10000)
    t0 = time.monotonic()
    svc.start()
    try:
        deadline = time.monotonic() + 600
        while svc.last_load_s is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert svc.is_active, "the benchmark's service did not win /controller"
        svc.wait_idle(600)
        total = time.monotonic() - t0
        return svc.last_load_s or 0.0, total, len(svc.controller.ctx.states)
    finally:
        svc.stop()


def baseline(c: KazooClient, topics: int, state_paths: list[str]) -> float:
    t0 = time.monotonic()
    ids = c.get_children(P.BROKER_IDS)
    names = c.get_children(P.TOPICS)
    paths = [P.broker(int(i)) for i in ids] + [P.topic(t) for t in names] + state_paths
    got = read_many(c, paths, mode="get_async")
    assert len(got) == len(paths)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--servers", type=int, default=3)
    ap.add_argument("--distinct", action="store_true")
    ap.add_argument("--connect")
    args = ap.parse_args(argv)
    with ExitStack() as stack:
        if args.connect:
            hosts = args.connect
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kcontrol-bench-"))
            ens = Ensemble.create(tmp, servers=args.servers, die_with_parent=True,
                                  max_session_timeout_ms=30000)
            ens.up(timeout=60)
            stack.callback(ens.stop)
            hosts = ens.connect_string
        root = KazooClient(hosts=hosts, timeout=10)
        root.start(timeout=30)
        chroot = f"/bench-failover-{int(time.time())}"
        root.ensure_path(chroot)
        root.stop()
        hosts = hosts + chroot
        c = KazooClient(hosts=hosts, timeout=10)
        c.start(timeout=30)
        stack.callback(c.stop)
        t0 = time.monotonic()
        state_paths = populate(c, args.topics, args.partitions, args.distinct)
        print(f"populated {len(state_paths):,} partitions ({args.servers} server(s)) in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
        ours, base, totals = [], [], []
        for run in range(args.runs):
            load, total, n = kcontrol_load(hosts, 100 + run)
            assert n == len(state_paths), (n, len(state_paths))
            b = baseline(c, args.topics, state_paths)
            ours.append(load)
            totals.append(total)
            base.append(b)
            print(f"run {run + 1}: kcontrol load {load:.3f} s (service start to idle "
                  f"{total:.2f} s), get_async baseline {b:.3f} s, ratio {b / load:.1f}x",
                  flush=True)
        print(f"best of {args.runs}: kcontrol {min(ours):.3f} s, baseline {min(base):.3f} s, "
              f"ratio {min(base) / min(ours):.1f}x; start-to-idle {min(totals):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
