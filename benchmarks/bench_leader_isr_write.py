"""Writing new leader/ISR for 10,000 partitions through ``ZkWriter`` vs a raw kazoo loop (issue 4).

Same run, same ensemble, same bytes: 10,000 partition state znodes get a new ``LeaderAndIsr``
(leader epoch + 1) with their expected version, fenced by ``/controller_epoch``.

* **kcontrol**: one ``ZkWrite`` of 10,000 ``SetDataOp``s through ``ZkWriter.execute`` (encoding
  with the codecs, size-cut batches each beginning with the epoch check, 8 in flight, results
  mapped to a ``WriteResult``);
* **raw, sequential**: ``client.transaction()`` of ``check`` + 1,000 ``set_data`` of the
  pre-encoded bytes, ``commit()`` one after another;
* **raw, pipelined**: the same transactions with ``commit_async()``, all in flight, then gathered.

The three take turns in a rotating order within each run. Best of ``--runs`` each; the ratio
is kcontrol's time over each raw loop's (also the median of the per-run ratios).

    .venv/bin/python benchmarks/bench_leader_isr_write.py [--servers 3] [-n 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazoo.client import KazooClient  # noqa: E402

from adapters.ensemble import Ensemble  # noqa: E402
from adapters.zookeeper import codec  # noqa: E402
from adapters.zookeeper.writer import ZkWriter  # noqa: E402
from fsm import zk_paths as P  # noqa: E402
from fsm.effects import SetDataOp, ZkWrite  # noqa: E402
from fsm.values import LeaderAndIsr  # noqa: E402
from fsm.znodes import ControllerEpochZnode  # noqa: E402

BATCH = 1000


def li_for(i: int, epoch: int) -> LeaderAndIsr:
    """Every partition's value differs (its own leader epoch): no help from the encode memo."""
    reps = tuple((i + k) % 10 for k in range(3))
    return LeaderAndIsr(reps[0], epoch * 100_000 + i, reps, 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--servers", type=int, default=3)
    ap.add_argument("--connect")
    args = ap.parse_args(argv)
    with ExitStack() as stack:
        if args.connect:
            hosts = args.connect
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kcontrol-bench-"))
            ens = Ensemble.create(tmp, servers=args.servers, die_with_parent=True)
            ens.up(timeout=60)
            stack.callback(ens.stop)
            hosts = ens.connect_string
        root = KazooClient(hosts=hosts, timeout=10)
        root.start(timeout=30)
        chroot = f"/bench-write-{int(time.time())}"
        root.ensure_path(chroot)
        root.stop()
        c = KazooClient(hosts=hosts + chroot, timeout=10)
        c.start(timeout=30)
        stack.callback(c.stop)
        c.create(P.CONTROLLER_EPOCH, codec.encode(P.CONTROLLER_EPOCH, ControllerEpochZnode(1)))
        fence = c.exists(P.CONTROLLER_EPOCH).version
        paths = [P.partition_state(f"t{i // 100:04d}", i % 100) for i in range(args.n)]
        for s in range(0, args.n, BATCH):
            tx = c.transaction()
            for i in range(s, min(s + BATCH, args.n)):
                if i % 100 == 0:
                    tx.create(P.topic(f"t{i // 100:04d}"), b"")
                    tx.create(P.partitions(f"t{i // 100:04d}"), b"")
                tx.create(P.partition(f"t{i // 100:04d}", i % 100), b"")
                tx.create(paths[i], codec.encode(paths[i], li_for(i, 0)))
            c.ensure_path(P.TOPICS)
            tx.commit()
        state = {"version": 0, "epoch": 0}
        writer = ZkWriter(c)

        def next_values() -> tuple[int, int]:
            state["epoch"] += 1
            return state["epoch"], state["version"]

        def kcontrol() -> float:
            epoch, version = next_values()
            ops = tuple(SetDataOp(paths[i], li_for(i, epoch), version) for i in range(args.n))
            t0 = time.perf_counter()
            r = writer.execute(ZkWrite(1, ops, fence))
            dt = time.perf_counter() - t0
            assert not r.fenced and not r.failures, r
            return dt

        def raw(pipelined: bool) -> float:
            epoch, version = next_values()
            data = [codec.encode(p, li_for(i, epoch)) for i, p in enumerate(paths)]
            t0 = time.perf_counter()
            pending = []
            for s in range(0, args.n, BATCH):
                tx = c.transaction()
                tx.check(P.CONTROLLER_EPOCH, fence)
                for i in range(s, min(s + BATCH, args.n)):
                    tx.set_data(paths[i], data[i], version)
                if pipelined:
                    pending.append(tx.commit_async())
                else:
                    assert not any(isinstance(x, Exception) for x in tx.commit())
            for p in pending:
                assert not any(isinstance(x, Exception) for x in p.get())
            return time.perf_counter() - t0

        measures = {"kcontrol": kcontrol, "sequential": lambda: raw(False),
                    "pipelined": lambda: raw(True)}
        times: dict[str, list[float]] = {name: [] for name in measures}
        names = list(measures)
        for run in range(args.runs):
            # the three take turns in a rotating order: none always runs first or last
            for name in names[run % 3:] + names[:run % 3]:
                times[name].append(measures[name]())
                state["version"] += 1
            print(f"run {run + 1}: kcontrol {times['kcontrol'][-1]:.3f} s, raw sequential "
                  f"{times['sequential'][-1]:.3f} s, raw pipelined {times['pipelined'][-1]:.3f} s, "
                  f"kcontrol/pipelined {times['kcontrol'][-1] / times['pipelined'][-1]:.2f}x",
                  flush=True)
        o, s_, p_ = (min(times[n]) for n in names)
        per_run = sorted(k / p for k, p in zip(times["kcontrol"], times["pipelined"], strict=True))
        print(f"best of {args.runs}: kcontrol {o:.3f} s ({args.n / o:,.0f} partitions/s), raw "
              f"sequential {s_:.3f} s (kcontrol/raw {o / s_:.2f}x), raw pipelined {p_:.3f} s "
              f"(kcontrol/raw {o / p_:.2f}x); median per-run kcontrol/pipelined "
              f"{statistics.median(per_run):.2f}x; batches per write "
              f"{writer.batches_sent // args.runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
