"""A KRaft broker's replay of one large metadata batch, in process (issue 26): the 10,001
records the active controller writes when a broker leading 10,000 of 100,000 partitions is
moved out (controlled shutdown) or fenced (its session expired), from the batch's bytes to
the replica effects queued.

The cluster is ``_kraft_cluster_bench.Layout``'s (1,000 topics x 100 partitions, replication
factor 3, 9 brokers: broker 1 leads 10,000 partitions with two of brokers 4-6 as followers,
brokers 4-6 hold every partition and lead the other 70,000, brokers 7-9 hold nothing), built
by the real quorum controller core (``fsm.kraft.controller``: registrations, heartbeats,
CreateTopics with explicit assignments, every append committed at once). The batch is the
one that core appends for broker 1: a heartbeat ``want_shut_down`` (``shutdown``: 10,000
leaderships moved and ISRs shrunk, then its ``BrokerRegistrationChangeRecord``), or its lease
expired (``fence``: the same changes, then its ``FenceBrokerRecord``). Each broker core timed
has replayed everything before the batch and runs (RUNNING, its replicas reconciled).

Timed, CPU (``time.process_time``), best of ``--repeat``, per broker:

* **decode**: the batch's bytes (a record batch v2, CRC-32C, as the broker's log holds it)
  to record values -- ``adapters.raft_log`` splitting the batch with the bytes serde, then
  ``to_values`` (``fsm.kraft.records.codec.decode_record`` per record): what the observer's
  ``MetadataFeed`` does on the high watermark (the log's file read left out);
* **core**: ``KRaftBroker.handle(MetadataFetched(...))`` -- the image updated, the touched
  partitions reconciled into replica effects (on a fresh copy of the running core each time);
* **effects**: the broker shell's port carrying out those effects (``BrokerPort`` ->
  ``ReplicaDirs.apply`` with its writer thread, whose file writes are switched off here: the
  event thread's part is deciding and queueing them);
* **publish**: the shell's status after the event (``BrokerShell._publish``: replica counts
  once per metadata offset) and the ISR expander's scan in the round the batch wakes
  (``isr_changes.IncrementalScan``, the last round before the batch; in a tree without it,
  ``scan`` of every replica);
* **files (writer)**, not in the total: what the replica directories' writer thread then
  does on its own, after the burst (a ``ReplicaDirs`` with its writer given the effects
  again and flushed: each ``replica.properties`` rewritten, a state-change line each, into a
  rotating file at INFO as ``kcontrol node`` logs it), under ``/dev/shm`` as the real
  benchmarks' brokers. (Until 2026-11-27 11:50 UTC this was ``apply`` writing in place, one
  effect at a time, into a plain file handler: the writer's rounds were not measured.)

Broker 4 takes 3,333 of the leaderships (and holds 100,000 replicas); broker 7 holds
nothing (its image only). The collector runs with the node's thresholds
(``adapters.host.gc_tuning``). A calibration, ``sum(i*i for i in range(10**6))`` best of 3,
is printed before and after; ``--baseline FILE`` (a JSON this script wrote with ``--json``)
adds a column: the baseline's figure over this run's.

    .venv/bin/python benchmarks/bench_kraft_broker_replay.py [--repeat 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _kraft_cluster_bench import Layout  # noqa: E402

from adapters.cli.log_options import LOG_FORMAT  # noqa: E402
from adapters.kraft_broker.broker_shell import BrokerPort, BrokerShell  # noqa: E402
from adapters.kraft_broker.isr_expander import scan  # noqa: E402
from adapters.kraft_broker.replica_dirs import ReplicaDirs  # noqa: E402
from adapters.state_change_file import StateChangeFile  # noqa: E402

try:
    from adapters.kraft_broker.isr_changes import ChangeLog, IncrementalScan
except ImportError:  # a tree before the incremental scan (the "before" runs)
    ChangeLog = IncrementalScan = None  # type: ignore[assignment,misc]
from adapters.raft_log import BYTES  # noqa: E402
from adapters.raft_log.batch_format import encode_batch, read_header  # noqa: E402
from adapters.raft_log.batches import decode as decode_batch  # noqa: E402
from adapters.raft_node.record_bytes import to_values  # noqa: E402
from fsm.errors import ErrorCode  # noqa: E402
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig  # noqa: E402
from fsm.kraft.broker.effects import SendToController  # noqa: E402
from fsm.kraft.broker.events import (  # noqa: E402
    ControllerResponse,
    HeartbeatDue,
    MetadataFetched,
    Start,
)
from fsm.kraft.broker_driver import EFFECTS  # noqa: E402
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState  # noqa: E402
from fsm.kraft.controller import requests as rq  # noqa: E402
from fsm.kraft.controller.config import QuorumControllerConfig  # noqa: E402
from fsm.kraft.controller.events import (  # noqa: E402
    AppendRecords,
    Committed,
    ControllerRequest,
    LeadershipGained,
    Reply,
    Tick,
)
from fsm.kraft.controller.quorum_controller import QuorumController  # noqa: E402
from fsm.kraft.records.codec import encode_record  # noqa: E402
from fsm.kraft.records.uuid import uuid_of  # noqa: E402
from fsm.kraft.records.values import BrokerEndpoint  # noqa: E402
from fsm.raft.messages import Batch  # noqa: E402

CLUSTER = "bench-replay"
BROKERS, TOPICS, PARTITIONS = 9, 1_000, 100
VICTIM = 1
TIMED = (4, 7)
SESSION_MS = 6_000
YOUNG, OLDER = 100_000, (50, 100)  # adapters.host.gc_tuning's, as the node runs


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


class Controller:
    """The quorum controller core on an in-memory log committing every append at once."""

    def __init__(self) -> None:
        self.ctl = QuorumController(QuorumControllerConfig(
            node_id=100, cluster_id=CLUSTER, session_timeout_ms=SESSION_MS))
        self.log: list[Any] = []
        self.batches: list[tuple[int, tuple[Any, ...]]] = []
        self.replies: dict[int, Any] = {}
        self.token = 0
        self.feed(LeadershipGained(epoch=1, log_end_offset=0, now_ms=0))

    def feed(self, event: Any) -> None:
        appended = False
        for e in self.ctl.handle(event):
            if isinstance(e, AppendRecords):
                self.batches.append((e.base_offset, e.records))
                self.log += e.records
                appended = True
            elif isinstance(e, Reply):
                self.replies[e.token] = e.response
        if appended:
            self.feed(Committed(len(self.log) - 1))

    def ask(self, request: Any) -> Any:
        self.token += 1
        self.feed(ControllerRequest(self.token, request))
        return self.replies.pop(self.token)

    def heartbeat(self, broker: int, want_shut_down: bool = False) -> Any:
        reg = self.ctl.registration(broker)
        return self.ask(rq.BrokerHeartbeatRequest(broker, reg.epoch, len(self.log) - 1, False,
                                                  want_shut_down))


def endpoint(broker: int) -> tuple[BrokerEndpoint, ...]:
    return (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9000 + broker),)


def build_cluster(kind: str, topics: int = TOPICS) -> tuple[list[Any], int, tuple[Any, ...], dict[int, int]]:
    """The log before the batch, the batch's base offset, its records, the brokers' epochs."""
    c = Controller()
    layout = Layout(BROKERS)
    for b in range(1, BROKERS + 1):
        answer = c.ask(rq.BrokerRegistrationRequest(b, CLUSTER, uuid_of(10_000 + b),
                                                    endpoint(b)))
        assert answer.error == ErrorCode.NONE, answer
    for b in range(1, BROKERS + 1):
        assert not c.heartbeat(b).is_fenced
    for t in range(topics):
        topic = rq.CreatableTopic(f"t{t:05d}", assignments=tuple(
            (p, layout.replicas(t * PARTITIONS + p)) for p in range(PARTITIONS)))
        answer = c.ask(rq.CreateTopicsRequest((topic,), (uuid_of(1_000_000 + t),)))
        assert answer.topics[0].error == ErrorCode.NONE, answer
    before = len(c.batches)
    if kind == "shutdown":
        c.heartbeat(VICTIM, want_shut_down=True)
    else:  # the others heartbeat; the victim's lease runs out
        c.feed(Tick(SESSION_MS // 2))
        for b in range(2, BROKERS + 1):
            c.heartbeat(b)
        c.feed(Tick(SESSION_MS + 1))
    added = c.batches[before:]
    assert len(added) == 1, f"{len(added)} batches for the {kind}"
    base, batch = added[0]
    epochs = {b: c.ctl.registration(b).epoch for b in range(1, BROKERS + 1)}
    return c.log[:base], base, batch, epochs


def running_broker(broker: int, epoch: int, log: list[Any]
                   ) -> tuple[KRaftBroker, list[Any]]:
    """A broker core that replayed ``log`` and runs; the effects of its RECOVERY."""
    core = KRaftBroker(KRaftBrokerConfig(broker, CLUSTER, endpoint(broker)))

    def sent(effects: list[Any]) -> Any:
        (request,) = [e.request for e in effects if isinstance(e, SendToController)]
        return request

    reg = sent(core.handle(Start(uuid_of(20_000 + broker), 0, ())))
    hb = sent(core.handle(ControllerResponse(reg, rq.BrokerRegistrationResponse(
        ErrorCode.NONE, epoch))))
    core.handle(MetadataFetched(0, tuple(log)))
    recovery = core.handle(ControllerResponse(hb, rq.BrokerHeartbeatResponse(
        ErrorCode.NONE, is_caught_up=True)))
    hb = sent(core.handle(HeartbeatDue(10)))
    core.handle(ControllerResponse(hb, rq.BrokerHeartbeatResponse(ErrorCode.NONE, True,
                                                                 is_fenced=False)))
    assert core.state is KRaftBrokerState.RUNNING, core
    return core, recovery


class _Channel:
    """The controller channel: what the core sends (a heartbeat at once after replaying
    another broker's controlled-shutdown mark) is dropped here."""

    def send(self, request: Any) -> None:
        pass


def _no_files(item: Any) -> None:
    """The writer thread's part, switched off: the event thread's is timed."""


def state_change_log(directory: Path) -> None:
    """The state-change log at INFO in a file, as a node writes it (the writer's lines)."""
    handler = StateChangeFile(directory / "state-change.log")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger = logging.getLogger("kcontrol.broker.state.change")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)


def best(fn: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None
         ) -> tuple[float, Any]:
    """Best CPU seconds of ``repeat`` calls of ``fn(setup())``; the last result."""
    top, out = float("inf"), None
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        gc.collect()
        t0 = time.process_time()
        out = fn(arg) if setup is not None else fn()  # type: ignore[call-arg]
        top = min(top, time.process_time() - t0)
    return top, out


def measure(kind: str, repeat: int, tmp: Path, topics: int = TOPICS
            ) -> dict[str, dict[str, float]]:
    log, base, batch, epochs = build_cluster(kind, topics)
    raw = encode_batch(base, 1, [(None, encode_record(r)) for r in batch])
    print(f"# {kind}: {len(batch):,} records at offset {base:,}, {len(raw):,} bytes; "
          f"{len(log):,} records before", flush=True)
    return {str(b): measure_broker(b, epochs[b], log, base, batch, raw, repeat,
                                   tmp / f"{kind}-{b}") for b in TIMED}


def measure_broker(broker: int, epoch: int, log: list[Any], base: int,
                   batch: tuple[Any, ...], raw: bytes, repeat: int, tmp: Path
                   ) -> dict[str, float]:
    core, recovery = running_broker(broker, epoch, log)
    shell = BrokerShell(core, _Channel(), ReplicaDirs(
        tmp, broker, lambda tid: core.image.topics[tid].name, background=True))
    shell.replicas._writer._carry_out = _no_files  # type: ignore[union-attr]
    port = BrokerPort(shell)
    for e in recovery:
        if type(e) in EFFECTS:
            EFFECTS[type(e)](port, e)
    shell._publish()

    def decode() -> Batch:
        return to_values(decode_batch(raw, read_header(raw), BYTES))

    t_decode, decoded = best(decode, repeat)
    assert decoded.records == batch, "the batch does not decode to what was written"
    event = MetadataFetched(base, decoded.records)
    t_core, (fresh, effects) = best(lambda c: (c, c.handle(event)), repeat, setup=core.copy)
    shell.core = fresh

    def carry_out() -> None:
        for e in effects:
            EFFECTS[type(e)](port, e)

    t_effects, _ = best(carry_out, repeat)
    shell.replicas.flush()

    def round_before() -> Callable[[KRaftBroker], Any]:
        """The ISR expander's scan as a round after the batch runs it: the incremental one,
        having scanned the core before the batch, the batch's changes noted."""
        if IncrementalScan is None:  # a tree before it: every round scans every replica
            return scan
        log = ChangeLog()
        inc = IncrementalScan(log.take)
        inc(core)
        log.note(event)
        return inc  # type: ignore[no-any-return]

    def publish(scanner: Callable[[KRaftBroker], Any]) -> None:
        shell._counted = None  # the offset moved: counted again, as after the batch
        shell._publish()
        scanner(fresh)

    t_publish, _ = best(publish, repeat, setup=round_before)
    name_of = lambda tid: core.image.topics[tid].name  # noqa: E731
    roles = [e for e in effects if hasattr(e, "partition_id")]  # (not the heartbeat sent)
    setup = ReplicaDirs(tmp / "files", broker, name_of)
    for e in roles:  # the directories made first, as a running broker has them
        setup.apply(e)

    def written(files: ReplicaDirs) -> None:
        for e in roles:
            files.apply(e)
        assert files.flush(120)
        files.close()

    t_files, _ = best(written, repeat, setup=lambda: ReplicaDirs(tmp / "files", broker,
                                                                 name_of, background=True))
    led = sum(1 for e in effects if type(e).__name__ == "BecomeLeader")
    print(f"# broker {broker}: {len(effects):,} effects ({led:,} BecomeLeader), "
          f"{shell.status.replicas:,} replicas, {shell.status.leaders:,} led", flush=True)
    shell.replicas.close()
    return {"decode": t_decode, "core": t_core, "effects": t_effects, "publish": t_publish,
            "total": t_decode + t_core + t_effects + t_publish, "files (writer)": t_files}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kinds", default="shutdown,fence")
    ap.add_argument("--topics", type=int, default=TOPICS,
                    help=f"topics of {PARTITIONS} partitions (a smaller cluster: a quick try)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--baseline", type=Path, help="a --json of an earlier run: ratios to it")
    args = ap.parse_args(argv)
    old = gc.get_threshold()
    gc.set_threshold(YOUNG, *OLDER)
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"# calibration sum(i*i for i in range(10**6)), best of 3: {cal0:.3f} s")
    results: dict[str, Any] = {}
    try:
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None  # as the real benchmarks
        with tempfile.TemporaryDirectory(prefix="bench-replay-", dir=shm) as tmp:
            state_change_log(Path(tmp))
            for kind in args.kinds.split(","):
                results[kind] = measure(kind, args.repeat, Path(tmp), args.topics)
    finally:
        gc.set_threshold(*old)
    cal1 = calibration()
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    print(f"\nCPU seconds, best of {args.repeat}" +
          ("; ratio = baseline / this run" if baseline else ""))
    head = f"| batch | broker | part | CPU s |{' baseline s | ratio |' if baseline else ''}"
    print(head)
    print("|---|---:|---|---:|" + ("---:|---:|" if baseline else ""))
    for kind, brokers in results.items():
        for broker, parts in brokers.items():
            for part, seconds in parts.items():
                row = f"| {kind} | {broker} | {part} | {seconds:.3f} |"
                if baseline:
                    was = baseline["results"].get(kind, {}).get(broker, {}).get(part)
                    row += (f" {was:.3f} | {was / seconds:.2f}x |" if was else " | |")
                print(row)
    print(f"\n# calibration before {cal0:.3f} s, after {cal1:.3f} s; load average "
          f"{os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"calibration": [cal0, cal1], "results": results,
                                         "load": os.getloadavg()[0]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
