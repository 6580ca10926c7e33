"""Writing new leader/ISR for 10,000 partitions through ``ZkWriter`` vs a raw kazoo loop (issue 4).

Same run, same ensemble, same bytes: 10,000 partition state znodes get a new ``LeaderAndIsr``
(leader epoch + 1) with their expected version, fenced by ``/controller_epoch``.

* **kcontrol**: one ``ZkWrite`` of 10,000 ``SetDataOp``s through ``ZkWriter.execute`` (encoding
  with the codecs, size-cut batches each beginning with the epoch check, 8 in flight, results
  mapped to a ``WriteResult``);
* **raw, sequential**: ``client.transaction()`` of ``check`` + 1,000 ``set_data`` of the
  pre-encoded bytes, ``commit()`` one after another;
* **raw, pipelined**: the same transactions with ``commit_async()``, all in flight, then gathered.

Best of ``--runs`` each; the ratio is kcontrol's time over each raw loop's.

    .venv/bin/python benchmarks/bench_leader_isr_write.py [--servers 3] [-n 10000] [--runs 3]
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

from adapters.zookeeper import codecs  # noqa: E402
from adapters.zookeeper.ensemble import Ensemble  # noqa: E402
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
        c.create(P.CONTROLLER_EPOCH, codecs.encode(P.CONTROLLER_EPOCH, ControllerEpochZnode(1)))
        fence = c.exists(P.CONTROLLER_EPOCH).version
        paths = [P.partition_state(f"t{i // 100:04d}", i % 100) for i in range(args.n)]
        for s in range(0, args.n, BATCH):
            tx = c.transaction()
            for i in range(s, min(s + BATCH, args.n)):
                if i % 100 == 0:
                    tx.create(P.topic(f"t{i // 100:04d}"), b"")
                    tx.create(P.partitions(f"t{i // 100:04d}"), b"")
                tx.create(P.partition(f"t{i // 100:04d}", i % 100), b"")
                tx.create(paths[i], codecs.encode(paths[i], li_for(i, 0)))
            c.ensure_path(P.TOPICS)
            tx.commit()
        version = 0
        epoch = 0
        ours, seq, pipe = [], [], []
        writer = ZkWriter(c)
        for run in range(args.runs):
            # kcontrol
            epoch += 1
            ops = tuple(SetDataOp(paths[i], li_for(i, epoch), version) for i in range(args.n))
            t0 = time.perf_counter()
            r = writer.execute(ZkWrite(1, ops, fence))
            ours.append(time.perf_counter() - t0)
            assert not r.fenced and not r.failures, r
            version += 1
            # raw sequential
            epoch += 1
            data = [codecs.encode(p, li_for(i, epoch)) for i, p in enumerate(paths)]
            t0 = time.perf_counter()
            for s in range(0, args.n, BATCH):
                tx = c.transaction()
                tx.check(P.CONTROLLER_EPOCH, fence)
                for i in range(s, min(s + BATCH, args.n)):
                    tx.set_data(paths[i], data[i], version)
                res = tx.commit()
                assert not any(isinstance(x, Exception) for x in res)
            seq.append(time.perf_counter() - t0)
            version += 1
            # raw pipelined
            epoch += 1
            data = [codecs.encode(p, li_for(i, epoch)) for i, p in enumerate(paths)]
            t0 = time.perf_counter()
            pending = []
            for s in range(0, args.n, BATCH):
                tx = c.transaction()
                tx.check(P.CONTROLLER_EPOCH, fence)
                for i in range(s, min(s + BATCH, args.n)):
                    tx.set_data(paths[i], data[i], version)
                pending.append(tx.commit_async())
            for p in pending:
                assert not any(isinstance(x, Exception) for x in p.get())
            pipe.append(time.perf_counter() - t0)
            version += 1
            print(f"run {run + 1}: kcontrol {ours[-1]:.3f} s, raw sequential {seq[-1]:.3f} s, "
                  f"raw pipelined {pipe[-1]:.3f} s", flush=True)
        o, s_, p_ = min(ours), min(seq), min(pipe)
        print(f"best of {args.runs}: kcontrol {o:.3f} s ({args.n / o:,.0f} partitions/s), raw "
              f"sequential {s_:.3f} s (kcontrol/raw {o / s_:.2f}x), raw pipelined {p_:.3f} s "
              f"(kcontrol/raw {o / p_:.2f}x); batches per write {writer.batches_sent // args.runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
