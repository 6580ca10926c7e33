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
import gc
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

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


MAX_MULTI_BYTES = 1_000_000
"""A ``multi`` request's bound: below ZooKeeper's default ``jute.maxbuffer`` (0xfffff)."""
MAX_MULTI_OPS = 4000
MAX_IN_FLIGHT = 8
_CREATE_OVERHEAD = 9 + 4 + 4 + 4 + (4 + 4 + len("world") + 4 + len("anyone")) + 4
"""A create inside a ``multi``: op header, path and data lengths, one open ACL, flags."""


def populate(c: KazooClient, topics: int, partitions: int, distinct: bool,
             brokers: int = BROKERS, *, max_ops: int = MAX_MULTI_OPS,
             max_bytes: int = MAX_MULTI_BYTES, max_in_flight: int = MAX_IN_FLIGHT,
             progress: Callable[[int], None] | None = None) -> list[str]:
    """Broker registrations (ephemeral, this session), ``topics`` x ``partitions`` (replication
    factor 3 over the brokers) with their partition states; ``multi`` batches of at most
    ``max_ops`` creates and ``max_bytes`` request bytes, ``max_in_flight`` at a time. Returns
    the partition state paths; ``progress(partitions_done)`` after each topic batch committed."""
    for p in P.PERSISTENT_PATHS:
        c.ensure_path(p)
    for b in range(brokers):
        path = P.broker(b)
        c.create(path, codec.encode(path, BrokerRegistration(b, (Endpoint("PLAINTEXT", "h", 9092 + b),))),
                 ephemeral=True)
    paths: list[str] = []
    pending: deque[tuple[Any, int]] = deque()
    tx = c.transaction()
    ops = size = 0

    def create(path: str, data: bytes) -> None:
        nonlocal tx, ops, size
        cost = _CREATE_OVERHEAD + len(path.encode()) + len(data)
        if ops >= max_ops or size + cost > max_bytes - 64:
            flush()
        tx.create(path, data)
        ops += 1
        size += cost

    def settle(result: Any, done: int) -> None:
        bad = [x for x in result.get() if isinstance(x, Exception)]
        assert not bad, bad[:3]
        if progress is not None:
            progress(done)

    def flush() -> None:
        nonlocal tx, ops, size
        if ops:
            pending.append((tx.commit_async(), len(paths)))
            tx, ops, size = c.transaction(), 0, 0
            if len(pending) >= max_in_flight:
                settle(*pending.popleft())

    for t in range(topics):
        name = topic_name(t)
        reps = {p: [(t + p + k) % brokers for k in range(3)] for p in range(partitions)}
        create(P.topic(name), codec.encode(P.topic(name), TopicAssignment.of(reps)))
        create(P.partitions(name), b"")
        for p in range(partitions):
            epoch = t * partitions + p if distinct else p % 5
            li = LeaderAndIsr(reps[p][0], epoch, tuple(reps[p]), 1)
            create(P.partition(name, p), b"")
            sp = P.partition_state(name, p)
            create(sp, codec.encode(sp, li))
            paths.append(sp)
    flush()
    while pending:
        settle(*pending.popleft())
    return paths


def topic_name(t: int) -> str:
    return f"topic-{t:04d}"


def state_paths_of(topics: int, partitions: int) -> list[str]:
    """The partition state paths ``populate`` creates (for a chroot populated earlier)."""
    return [P.partition_state(topic_name(t), p) for t in range(topics) for p in range(partitions)]


class LoadRun(NamedTuple):
    load_s: float  # ControllerService.last_load_s: won -> ClusterLoaded built
    start_to_idle_s: float  # service start -> the core has handled ClusterLoaded, queue empty
    partitions: int  # partition states in the controller's context
    rss_bytes: int  # this process's resident set with the controller loaded
    cpu_s: float  # this process's CPU time from service start to the load built (all threads)


def kcontrol_load(hosts: str, broker_id: int) -> LoadRun:
    svc = ControllerService(broker_id, hosts, session_timeout_ms=10000)
    t0, c0 = time.monotonic(), time.process_time()
    svc.start()
    try:
        deadline = time.monotonic() + 600
        while svc.last_load_s is None and time.monotonic() < deadline:
            time.sleep(0.01)
        cpu = time.process_time() - c0
        assert svc.is_active, "the benchmark's service did not win /controller"
        svc.wait_idle(600)
        total = time.monotonic() - t0
        return LoadRun(svc.last_load_s or 0.0, total, len(svc.controller.ctx.states), rss_bytes(),
                       cpu)
    finally:
        svc.stop()
        del svc
        gc.collect()  # the stopped controller's state (cycles through kazoo) before the next run


def rss_bytes(pid: int | str = "self") -> int:
    """VmRSS of a process (Linux ``/proc``), 0 if unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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
            load, total, n, _, _ = kcontrol_load(hosts, 100 + run)
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
