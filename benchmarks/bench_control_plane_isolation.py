"""Control-plane isolation (KIP-291, seed 002): p50/p99 latency of LeaderAndIsr at a broker
whose data plane is flooded with Metadata requests, with and without the control-plane
listener. Issue 5 target: with it, p99 within 2x of the unloaded p99.

One real ``kcontrol broker`` process per configuration (each a one-broker cluster in its own
chroot of one 3-server ensemble this benchmark starts):

- **with** ``--control-plane-listener CONTROLLER`` (the default ``--control-plane-priority
  auto``): LeaderAndIsr goes to the CONTROLLER listener (its own selector thread, queue of 20
  and handler thread, which writes the answer itself), both threads at real-time priority
  when the machine permits (``adapters.host.thread_priority``);
- **with, priority normal**: the same with ``--control-plane-priority normal``;
- **without**: LeaderAndIsr goes to the PLAINTEXT listener, in the data-plane queue behind
  the clients' requests (Kafka before 2.2).

The probe thread plays the controller's sender thread (``channel_manager``), which raises its
own priority the same way: at real-time priority except for the "priority normal" broker.

The broker's metadata cache is filled with 10,000 partitions by one UpdateMetadata this
process sends (stamped with the broker's epoch and controller epoch 1,000, above its own
controller's, whose later requests it then refuses as stale). A probe is a LeaderAndIsr for
10 partitions (this broker leads them; the leader epoch grows with every probe), sent on
one connection, one at a time, every 5 ms; latency = request written to answer read.
The flood: ``FLOOD_PROCS`` processes (at nice 10: in a real cluster the clients are other
machines) with ``FLOOD_CONNS`` connections each, every connection keeping ``FLOOD_DEPTH``
Metadata v8 requests (all topics, a 500 KB answer) in flight on the PLAINTEXT listener,
answers read and dropped unparsed.

Both brokers run side by side. The probes are taken in interleaved phases -- for each
round and each broker: unloaded (the baseline), then with that broker's flood on -- so
that all four conditions share the machine's background load over the same minutes (on a
shared, noisy machine, conditions measured one after the other differ more by the minute
they ran in than by the condition).

Run: .venv/bin/python benchmarks/bench_control_plane_isolation.py [--probes 1000 --rounds 5]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _broker_bench import HOST, SESSION_MS, load, machine, wait_until  # noqa: E402
from kazoo.client import KazooClient  # noqa: E402

from adapters.cluster import Cluster  # noqa: E402
from adapters.ensemble import Ensemble  # noqa: E402
from adapters.host import thread_priority as priority  # noqa: E402
from adapters.network import WireClient  # noqa: E402
from adapters.network.codec import ApiKey, RequestHeader, encode_request  # noqa: E402
from adapters.network.codec import convert as C  # noqa: E402
from adapters.network.codec.apis.metadata import all_topics_request  # noqa: E402
from fsm import zk_paths as P  # noqa: E402
from fsm.requests import (  # noqa: E402
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint  # noqa: E402

CONFIGURATIONS = (  # (name, control-plane listener, --control-plane-priority)
    ("with the control plane", True, priority.AUTO),
    ("with it, priority normal", True, priority.NORMAL),
    ("without (shared queue)", False, priority.AUTO),
)
FLOOD_PROCS = 2
FLOOD_CONNS = 8
FLOOD_DEPTH = 2
BROKER = 1
CONTROLLER_EPOCH = 1000
PARTITIONS = 10_000


# ---------------------------------------------------------------- the flood (other processes)


def flood(port: int, conns: int, depth: int, go, quit_, counter) -> None:  # noqa: ANN001
    """While ``go`` is set, keep ``depth`` Metadata requests in flight on each of ``conns``
    connections (closed when ``go`` is cleared); return when ``quit_`` is set. ``counter``
    counts the answers. At nice 10: clients run on other machines in a real cluster; here
    they share the broker's two cores and get the CPU the broker leaves (they still keep
    its data-plane queue full)."""
    os.nice(10)
    body = all_topics_request(8)
    body["include_cluster_authorized_operations"] = False
    body["include_topic_authorized_operations"] = False
    request = encode_request(RequestHeader(ApiKey.METADATA, 8, 1, "flood"), body)
    while not quit_.is_set():
        if not go.wait(0.1):
            continue
        _flood_phase(port, conns, depth, request, go, counter)


def _flood_phase(port: int, conns: int, depth: int, request: bytes, go, counter) -> None:  # noqa: ANN001
    sel = selectors.DefaultSelector()
    buffers: dict[socket.socket, bytearray] = {}
    for _ in range(conns):
        s = socket.create_connection((HOST, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(request * depth)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        buffers[s] = bytearray()
    try:
        while go.is_set():
            answered = 0
            for key, _ in sel.select(timeout=0.1):
                s = key.fileobj
                try:
                    data = s.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not data:
                    return
                buf = buffers[s]
                buf += data
                while len(buf) >= 4:
                    size = int.from_bytes(buf[:4], "big")
                    if len(buf) < 4 + size:
                        break
                    del buf[:4 + size]
                    answered += 1
                    s.setblocking(True)
                    s.sendall(request)
                    s.setblocking(False)
            with counter.get_lock():
                counter.value += answered
    finally:
        for s in buffers:
            s.close()
        sel.close()


# ---------------------------------------------------------------- probes


def cache_request(port: int, epoch: int) -> UpdateMetadataRequest:
    """One UpdateMetadata naming this broker (PLAINTEXT ``port``) and 10,000 partitions."""
    me = BrokerInfo(BROKER, epoch, (Endpoint("PLAINTEXT", HOST, port),))
    parts = tuple(UpdateMetadataPartition(f"data-{i // 1000:02d}", i % 1000, CONTROLLER_EPOCH,
                                          BROKER, 0, (BROKER,), 0, (BROKER,))
                  for i in range(PARTITIONS))
    return UpdateMetadataRequest(BROKER, CONTROLLER_EPOCH, epoch, parts, (me,))


def probes(port: int, epoch: int, count: int, first_epoch: int, prio: str,
           pause: float = 0.005) -> list[float]:
    """``count`` LeaderAndIsr round trips (seconds), each answered without error, from a
    thread of their own at control-plane priority ``prio`` (as the controller's sender)."""
    out: list[float] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            priority.configure(prio)
            priority.raise_priority("the probe (the controller's sender)")
            out.extend(_probes(port, epoch, count, first_epoch, pause))
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller
            errors.append(exc)

    t = threading.Thread(target=run, name="probe")
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return out


def _probes(port: int, epoch: int, count: int, first_epoch: int, pause: float) -> list[float]:
    out = []
    with WireClient(HOST, port, client_id="controller-bench", timeout=30) as c:
        for i in range(count):
            parts = tuple(LeaderAndIsrPartition("probe", p, CONTROLLER_EPOCH, BROKER,
                                                first_epoch + i, (BROKER,), 0, (BROKER,))
                          for p in range(10))
            wire = C.leader_and_isr_request_to_wire(
                LeaderAndIsrRequest(BROKER, CONTROLLER_EPOCH, epoch, parts, ()))
            t0 = time.perf_counter()
            answer = c.request(ApiKey.LEADER_AND_ISR, 2, wire)
            out.append(time.perf_counter() - t0)
            if answer["error_code"] != 0:
                raise RuntimeError(f"LeaderAndIsr answered {answer['error_code']}")
            time.sleep(pause)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Target:
    """One broker under test: its cluster, epoch, where LeaderAndIsr goes, its flood."""

    def __init__(self, ensemble: Ensemble, directory: Path, name: str, control_plane: bool,
                 prio: str) -> None:
        self.name = name
        self.prio = prio
        chroot = f"{ensemble.connect_string}/{directory.name}"
        self.cluster = Cluster.create(directory, 1, zookeeper=chroot,
                                      session_timeout_ms=SESSION_MS,
                                      control_plane=control_plane, die_with_parent=True,
                                      control_plane_priority=prio)
        self.cluster.up(timeout=120)
        client = KazooClient(hosts=chroot, timeout=10)
        client.start(timeout=30)
        try:
            client.sync(P.broker(BROKER))
            self.epoch = client.exists(P.broker(BROKER)).czxid
        finally:
            client.stop()
            client.close()
        b = self.cluster.brokers[BROKER]
        self.data_port = b.data_port
        self.port = b.control_port if control_plane else b.data_port
        wire = C.update_metadata_request_to_wire(cache_request(b.data_port, self.epoch))
        with WireClient(HOST, self.port, timeout=60) as c:
            assert c.request(ApiKey.UPDATE_METADATA, 5, wire)["error_code"] == 0
        self.next_epoch = 1
        self.latencies: dict[bool, list[float]] = {False: [], True: []}
        self.answers = 0
        self.flood_s = 0.0

    def probe(self, count: int, flooded: bool) -> None:
        self.latencies[flooded] += probes(self.port, self.epoch, count, self.next_epoch,
                                          self.prio)
        self.next_epoch += count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--probes", type=int, default=1000,
                    help="probes per broker and condition (spread over the rounds)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    per_phase = max(1, args.probes // args.rounds)
    print(f"# bench_control_plane_isolation  {machine()}")
    print(f"# load before: {load()}")
    print(f"# real-time priority: {priority.available() or 'permitted'}")
    with tempfile.TemporaryDirectory(prefix="kcontrol-bench-cp-") as tmp:
        ensemble = Ensemble.create(Path(tmp) / "zookeeper", 3, die_with_parent=True)
        ensemble.up(timeout=60)
        targets: list[Target] = []
        procs = []
        ctx = mp.get_context("spawn")
        quit_ = ctx.Event()
        try:
            for i, (name, control_plane, prio) in enumerate(CONFIGURATIONS):
                targets.append(Target(ensemble, Path(tmp) / f"broker-{i}", name, control_plane,
                                      prio))
            floods = []
            for t in targets:
                go, counter = ctx.Event(), ctx.Value("q", 0)
                floods.append((go, counter))
                procs += [ctx.Process(target=flood, args=(t.data_port, FLOOD_CONNS, FLOOD_DEPTH,
                                                          go, quit_, counter), daemon=True)
                          for _ in range(FLOOD_PROCS)]
            for proc in procs:
                proc.start()
            for t in targets:
                t.probe(50, False)  # warm up (connections, caches); not counted
                t.latencies[False].clear()
            # Interleaved phases -- (broker, unloaded), (broker, flooded), for each broker,
            # every round -- so that both conditions of both brokers share the machine's
            # background load over the same minutes.
            for rnd in range(args.rounds):
                for t, (go, counter) in zip(targets, floods, strict=True):
                    t.probe(per_phase, False)
                    before = counter.value
                    go.set()
                    wait_until(lambda c=counter, b=before: c.value > b + 20, 60,
                               "the flood answered", pause=0.02)
                    n0, t0 = counter.value, time.perf_counter()
                    t.probe(per_phase, True)
                    t.answers += counter.value - n0
                    t.flood_s += time.perf_counter() - t0
                    go.clear()
                    time.sleep(0.3)  # the flood's connections close; its queue drains
                print(f"# round {rnd + 1}/{args.rounds} done; {load()}")
            print("| LeaderAndIsr latency | unloaded p50 | unloaded p99 | flooded p50 | "
                  "flooded p99 | p99 flooded / unloaded | Metadata answers/s |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for t in targets:
                u, f = t.latencies[False], t.latencies[True]
                print(f"| {t.name} | {pct(u, 0.5) * 1e3:.2f} ms | {pct(u, 0.99) * 1e3:.2f} ms | "
                      f"{pct(f, 0.5) * 1e3:.2f} ms | {pct(f, 0.99) * 1e3:.2f} ms | "
                      f"{pct(f, 0.99) / pct(u, 0.99):.1f}x | "
                      f"{t.answers / max(t.flood_s, 1e-9):.0f} |")
            print(f"# {len(u)} probes per broker and condition, over {args.rounds} rounds; "
                  f"load after: {load()}")
        finally:
            quit_.set()
            for proc in procs:
                proc.join(10)
                if proc.is_alive():
                    proc.kill()
            for t in targets:
                t.cluster.down()
            ensemble.stop()


if __name__ == "__main__":
    main()
