"""A KRaft broker's replica writer after a controlled shutdown's batch, in process (issue 26):
the CPU its ``ReplicaDirs`` spends on the replica effects of one batch -- each
``replica.properties`` rewritten and a state-change line each -- this tree's code against an
earlier revision's, alternating, in the same run.

The effects are those of the controlled shutdown of broker 1 in
``_kraft_cluster_bench.Layout``'s cluster (9 brokers, 1,000 topics ``t00000``.. x 100
partitions, replication factor 3; broker 1 leads every tenth partition, two of brokers 4-6
follow): **broker 4** takes the leadership of the 3,334 of broker 1's partitions it is first
in and follows a new leader in 3,333 more (6,667 effects: ``BecomeLeader`` with the ISR of
the two left, ``BecomeFollower``, leader epoch 2); **broker 1** (the one shutting down)
follows a new leader in all 10,000. Built here, not replayed (``bench_kraft_broker_replay``
replays the real batch); the files and lines are what the real ones give.

Each figure: a fresh ``ReplicaDirs`` with its writer thread (``background=True``, as the
broker process runs it) over directories that hold the replicas as they were before the
batch (written first, untimed); timed, CPU of the process (``time.process_time``): every
effect applied (queued) and the writer flushed -- the writer's own work and the event
thread's queueing (the same in both: a few ms). Logging as ``kcontrol node`` sets it up
(``configure_logging``: the state-change loggers at INFO into a rotating
``state-change.log``), files under ``/dev/shm`` as the cluster benchmarks' brokers. Best of
``--repeat`` each, the variants interleaved run by run:

* **baseline**: ``adapters/kraft_broker/replica_dirs.py`` of ``--baseline-rev`` (``git show``,
  loaded as a module beside this tree's), one log record per line, ``open`` + rename;
* **this tree**;
* **this tree, no state-change lines** (the loggers at WARNING): what the files alone cost;
* **this tree, files in place** (evaluated, not used): ``replica.properties`` truncated and
  written, no temporary file and rename -- a kill between the two calls leaves it empty.

A calibration, ``sum(i*i for i in range(10**6))`` best of 3, is printed before and after.

    .venv/bin/python benchmarks/bench_kraft_replica_dirs.py [--repeat 5] [--baseline-rev main]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _kraft_cluster_bench import Layout  # noqa: E402

import adapters.kraft_broker.replica_dirs as current  # noqa: E402
from adapters.cli.log_options import configure_logging  # noqa: E402
from fsm.kraft.broker.effects import BecomeFollower, BecomeLeader  # noqa: E402
from fsm.kraft.records.uuid import Uuid, uuid_of  # noqa: E402

TOPICS, PARTITIONS, VICTIM, EPOCH = 1_000, 100, 1, 1
STATE_LOGGERS = ("kcontrol.state.change", "kcontrol.broker.state.change")


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def topic_id(t: int) -> Uuid:
    return uuid_of(1_000_000 + t)


def effects(broker: int) -> tuple[list[Any], list[Any]]:
    """(the replicas before the batch, the batch's effects) for ``broker``."""
    layout = Layout(9)
    before: list[Any] = []
    batch: list[Any] = []
    for index in range(TOPICS * PARTITIONS):
        replicas = layout.replicas(index)
        if replicas[0] != VICTIM or broker not in replicas:
            continue
        key = (topic_id(index // PARTITIONS), index % PARTITIONS)
        new_leader, isr = replicas[1], replicas[1:]
        if broker == VICTIM:
            before.append(BecomeLeader(*key, EPOCH, replicas))
            batch.append(BecomeFollower(*key, new_leader, EPOCH + 1))
        elif broker == new_leader:
            before.append(BecomeFollower(*key, VICTIM, EPOCH))
            batch.append(BecomeLeader(*key, EPOCH + 1, isr))
        else:
            before.append(BecomeFollower(*key, VICTIM, EPOCH))
            batch.append(BecomeFollower(*key, new_leader, EPOCH + 1))
    return before, batch


def load_baseline(rev: str) -> ModuleType:
    source = subprocess.run(["git", "show", f"{rev}:adapters/kraft_broker/replica_dirs.py"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("baseline_replica_dirs", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{rev}:replica_dirs.py", "exec"), module.__dict__)  # noqa: S102
    return module


def _in_place(directory: str, data: bytes, fresh: bool) -> None:
    """The rejected option: no temporary file, no rename."""
    if fresh:
        os.makedirs(directory, exist_ok=True)
    fd = os.open(directory + os.sep + current.PROPERTIES, current._CREATE, 0o666)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


@contextmanager
def patched(module: ModuleType, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


@contextmanager
def state_lines(on: bool) -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in STATE_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.INFO if on else logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def names(tid: Uuid) -> str:
    return f"t{int.from_bytes(tid, 'big') - 1_000_000:05d}"


def run_once(module: ModuleType, broker: int, before: list[Any], batch: list[Any],
             root: Path) -> float:
    """CPU seconds: ``batch`` applied to a ``ReplicaDirs`` with its writer, and flushed."""
    shutil.rmtree(root, ignore_errors=True)
    setup = module.ReplicaDirs(root, broker, names)
    with state_lines(False):
        for e in before:
            setup.apply(e)
    dirs = module.ReplicaDirs(root, broker, names, background=True)
    dirs.scan()
    gc.collect()
    t0 = time.process_time()
    for e in batch:
        dirs.apply(e)
    assert dirs.flush(120), "the writer did not finish"
    spent = time.process_time() - t0
    dirs.close()
    return spent


def check_same_files(base: ModuleType, broker: int, before: list[Any], batch: list[Any],
                     tmp: Path) -> None:
    """Both versions leave the same files (and the same lines, less their time stamps)."""
    found = []
    for module in (base, current):
        root = tmp / f"same-{module.__name__}"
        log = tmp / "logs" / "state-change.log"
        start = log.stat().st_size if log.exists() else 0
        run_once(module, broker, before, batch, root)
        logging.getLogger(STATE_LOGGERS[1]).handlers[0].flush()
        lines = log.read_bytes()[start:].decode().splitlines()[-len(batch):]
        found.append(({p.name: (p / current.PROPERTIES).read_text() for p in root.iterdir()},
                      [line.split(" ", 2)[2] for line in lines]))
        shutil.rmtree(root)
    assert found[0] == found[1], "this tree's files or lines differ from the baseline's"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline-rev", default="main")
    args = ap.parse_args(argv)
    base = load_baseline(args.baseline_rev)
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.2f}; baseline {args.baseline_rev}")
    print(f"# calibration sum(i*i for i in range(10**6)), best of 3: {cal0:.3f} s", flush=True)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    variants: dict[str, Callable[[], Any]] = {
        "baseline": lambda: (base, state_lines(True)),
        "this tree": lambda: (current, state_lines(True)),
        "this tree, no state-change lines": lambda: (current, state_lines(False)),
        "this tree, files in place (rejected)": lambda: (
            current, patched(current, "_write", _in_place)),
    }
    results: dict[tuple[int, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-replica-dirs-", dir=shm) as tmp_name:
        tmp = Path(tmp_name)
        setup = configure_logging("INFO", tmp / "logs", None)
        try:
            for broker in (4, VICTIM):
                before, batch = effects(broker)
                check_same_files(base, broker, before, batch, tmp)
                print(f"# broker {broker}: {len(batch):,} effects "
                      f"({sum(isinstance(e, BecomeLeader) for e in batch):,} BecomeLeader); "
                      f"same files and lines as the baseline", flush=True)
                for _ in range(args.repeat):
                    for name, make in variants.items():
                        module, context = make()
                        with context:
                            spent = run_once(module, broker, before, batch, tmp / "dirs")
                        key = (broker, name)
                        results[key] = min(results.get(key, float("inf")), spent)
        finally:
            setup.close()
    cal1 = calibration()
    print(f"\nCPU seconds, best of {args.repeat} (effects applied, writer flushed)")
    print("| broker | effects | variant | CPU s | us per effect | baseline / this |")
    print("|---:|---:|---|---:|---:|---:|")
    for (broker, name), spent in results.items():
        n = len(effects(broker)[1])
        ratio = results[(broker, "baseline")] / spent
        print(f"| {broker} | {n:,} | {name} | {spent:.3f} | {spent / n * 1e6:.1f} | "
              f"{ratio:.2f}x |")
    print(f"\n# calibration before {cal0:.3f} s, after {cal1:.3f} s; load average "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
