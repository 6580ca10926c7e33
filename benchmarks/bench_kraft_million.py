"""1,000,000 partitions in one KRaft cluster: a restarted controller loads its snapshot and
catches up (issue 26). Target: caught up in under 10 s from the process start.

Real processes: 3 controllers (``KRaftCluster``, ``kcontrol node``); no broker process. The
placement of RF 3 needs 3 registered, unfenced brokers, so this script registers brokers 1-3
over the controllers' listener (BrokerRegistration, then a BrokerHeartbeat per broker every
second from a thread here, to whichever controller is active). Real broker processes would
each replay the 1,000,000 partitions and create their replicas' logs, competing for the
machine's two cores during the restart measured; the figure is the controller's. Brokers'
sessions are 10 minutes (``broker.session.timeout.ms``) so that a controller busy writing its
snapshot never fences them (which would move a third of the leaders).

1. Populate: TOPICS x PER_TOPIC partitions, RF 3, by CreateTopics straight to the active
   controller, ``--per-request`` topics a request (under the controller's 10,000 records a
   request), ``--window`` requests in flight, progress every 10%.
2. Snapshot: the controllers snapshot every S committed records, S = the population's
   records less two requests' worth, so each writes one snapshot near the end; wait until
   all three have it and have replayed to the high watermark.
3. Each case, ``--runs`` times: stop a standby controller (SIGTERM; kill -9), create
   ``--extra-topics`` topics while it is down (so it has to catch up), read the leader's high
   watermark, restart it and time from just before the process is started to (a) its image
   loaded from the snapshot (admin ``status``: ``snapshot_loaded_at``, set when the snapshot
   is replayed) and (b) caught up (``replayed_offset`` reaching that high watermark; polled
   every 20 ms). The node's log gives the phases: start-up (interpreter, imports, log open),
   read and checked, decoded, replayed.
4. Baselines, in this process, on a copy of the checkpoint: the bytes alone (read the file,
   CRC-32C of every batch), then read + decode without building the image, then the whole
   load (read, decode, replay into a ``MetadataImage``) -- what the load costs above the
   bytes -- and the node's fast load (``snapshot_image.load_image``: the image built as the
   batches are read; the node's log then says "read, checked and decoded" for all of it,
   and the replay phase is only the controller taking the image).

Also: RSS of each controller after the population and of the restarted one, the snapshot's
size, the population's time. Calibration (``sum(i*i for i in range(10**6))``, best of 3)
and the load average before and after.

    .venv/bin/python benchmarks/bench_kraft_million.py [--partitions 1000000] [--runs 3]
        [--per-topic 100] [--dir /tmp/bench-kraft-million] [--keep]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import shutil
import statistics
import sys
import threading
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.cluster import kraft_launcher  # noqa: E402
from adapters.cluster.kraft_launcher import KRaftCluster  # noqa: E402
from adapters.cluster.kraft_nodes import subprocess_env  # noqa: E402
from adapters.host.gc_tuning import OLDER_THRESHOLDS, YOUNG_THRESHOLD  # noqa: E402
from adapters.kraft_node.wire_client import (  # noqa: E402
    WireClient,
    WireError,
    from_wire,
    to_wire,
)
from adapters.raft_log.batch_format import HEADER_BYTES, crc_matches, read_header  # noqa: E402
from adapters.raft_log.serde import BYTES  # noqa: E402
from adapters.raft_log.snapshot_image import load_image  # noqa: E402
from adapters.raft_log.snapshots import parse_snapshot_name, records_of  # noqa: E402
from adapters.raft_node.record_bytes import decoded  # noqa: E402
from fsm.errors import ErrorCode  # noqa: E402
from fsm.kraft.controller import requests as rq  # noqa: E402
from fsm.kraft.image import image_from_records  # noqa: E402
from fsm.kraft.records.values import BrokerEndpoint  # noqa: E402

TARGET_S = 10.0
BROKERS = (1, 2, 3)
MAX_RECORDS_PER_REQUEST = 10_000
POLL_S = 0.02
CLIENT_TIMEOUT_S = 300.0


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def rss_mib(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())} load {load()}] {text}", flush=True)


class Controllers:
    """Wire clients to the controllers' listeners; requests go to the active one (found by
    trying each: a standby answers NOT_CONTROLLER)."""

    def __init__(self, cluster: KRaftCluster) -> None:
        self.ports = {i: n.port for i, n in cluster.controllers.items()}
        self.clients: dict[int, WireClient] = {}
        self.active: int | None = None

    def client(self, node_id: int) -> WireClient:
        c = self.clients.get(node_id)
        if c is None:
            c = self.clients[node_id] = WireClient("127.0.0.1", self.ports[node_id],
                                                   timeout=CLIENT_TIMEOUT_S)
        return c

    def drop(self, node_id: int) -> None:
        c = self.clients.pop(node_id, None)
        if c is not None:
            c.close()

    def call(self, request: Any, ok: Callable[[Any], bool], deadline_s: float = 600.0) -> Any:
        """``request`` to the active controller, retried on the others until ``ok``."""
        deadline = time.monotonic() + deadline_s
        order = list(self.ports)
        while True:
            for node_id in ([self.active] if self.active else []) + order:
                try:
                    answer = self.client(node_id).call_value(request)
                except WireError:
                    self.drop(node_id)
                    continue
                if ok(answer):
                    self.active = node_id
                    return answer
            if time.monotonic() > deadline:
                raise RuntimeError(f"no controller accepted {type(request).__name__}")
            time.sleep(0.2)

    def close(self) -> None:
        for node_id in list(self.clients):
            self.drop(node_id)


RETRIABLE = (ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT)
NUDGE = """Once a request was timed out (a controller busy writing its snapshot, then a new
leader), every request sent after it carries one more topic of one partition: a new active
controller answers nothing until something it appends is committed (its committed offset
stays at the last record before its epoch's LeaderChange), so a CreateTopics of topics that
exist (sent again) or a heartbeat would wait for ever -- a liveness problem noticed here and
reported (issue 26)."""


class Heartbeats(threading.Thread):
    """Brokers 1-3 registered, unfenced, and kept alive (one heartbeat each per second)."""

    def __init__(self, cluster: KRaftCluster) -> None:
        super().__init__(name="heartbeats", daemon=True)
        self.controllers = Controllers(cluster)
        self.cluster_id = cluster.cluster_id
        self.epochs: dict[int, int] = {}
        self.halt = threading.Event()

    def register(self) -> None:
        for b in BROKERS:
            answer = self.controllers.call(rq.BrokerRegistrationRequest(
                b, self.cluster_id, bytes([b]) * 16,
                (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 19000 + b),)),
                lambda a: a.error is ErrorCode.NONE)
            self.epochs[b] = answer.broker_epoch
        for b in BROKERS:
            while self.beat(b).is_fenced:
                time.sleep(0.1)

    def beat(self, b: int) -> Any:
        return self.controllers.call(rq.BrokerHeartbeatRequest(b, self.epochs[b], 1 << 40,
                                                                False),
                                     lambda a: a.error is ErrorCode.NONE)

    def run(self) -> None:
        while not self.halt.wait(1.0):
            for b in BROKERS:
                try:
                    self.beat(b)
                except Exception as exc:  # noqa: BLE001 -- said, and tried again
                    say(f"heartbeat of broker {b}: {exc}")

    def stop(self) -> None:
        self.halt.set()
        self.join(10)
        self.controllers.close()


def create_topics(cluster: KRaftCluster, ctl: Controllers, names: list[str], per_topic: int,
                  per_request: int, window: int, progress: bool = True) -> None:
    """Every topic of ``names`` created (RF 3), ``window`` requests in flight, to the
    active controller (the quorum's leader, as the admin sockets say)."""
    requests = [names[i:i + per_request] for i in range(0, len(names), per_request)]
    done = nudges = 0
    next_say = 0.1
    t0 = time.monotonic()
    while requests:
        retry: list[list[str]] = []
        if ctl.active is None:
            ctl.active = cluster.wait_leader(300).leader
        node_id = ctl.active
        try:
            client = ctl.client(node_id)
            inflight = []
            for chunk in requests[:window]:
                topics = tuple(rq.CreatableTopic(n, per_topic, 3) for n in chunk)
                if nudges:  # a resent request always appends (see NUDGE)
                    topics += (rq.CreatableTopic(f"nudge-{nudges}", 1, 3),)
                    nudges += 1
                request = rq.CreateTopicsRequest(topics, ())
                api_key, version, body = to_wire(request)
                inflight.append((chunk, api_key, version, client.send(api_key, version, body)))
            for chunk, api_key, version, corr in inflight:
                answer = from_wire(api_key, version, client.receive(corr))
                bad = [t for t in answer.topics
                       if t.error not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)]
                if bad:  # a controller busy writing its snapshot, or a new one: again
                    if any(t.error not in RETRIABLE for t in bad):
                        raise RuntimeError(f"CreateTopics: {bad[0]}")
                    retry.append(chunk)
                else:
                    done += len(chunk)
        except WireError as exc:
            say(f"CreateTopics to {node_id}: {exc}; retrying")
            ctl.drop(node_id)
            retry = requests[:window]
        if retry:
            say(f"  {sum(map(len, retry))} topics to send again (a timeout or a new leader)")
            nudges = max(nudges, 1)
            ctl.active = None
            time.sleep(0.2)
        requests = retry + requests[window:]
        if progress and done >= next_say * len(names):
            say(f"  {done:,} / {len(names):,} topics ({done * per_topic:,} partitions), "
                f"{time.monotonic() - t0:.0f} s")
            next_say += 0.1


def leader_status(cluster: KRaftCluster) -> tuple[int, dict[str, Any]]:
    view = cluster.wait_leader(120)
    st = cluster.controllers[view.leader].ask("status")
    assert st is not None
    return view.leader, st


def wait_replayed(cluster: KRaftCluster, timeout: float = 600) -> int:
    """Until every running controller has replayed to the leader's high watermark."""
    def all_there() -> int | None:
        _, lead = leader_status(cluster)
        hw = lead["high_watermark"]
        for n in cluster.controllers.values():
            st = n.ask("status")
            if st is None or st.get("replayed_offset", st["high_watermark"]) < hw:
                return None
        return hw
    return cluster.wait_for("every controller replayed to the high watermark", all_there,
                            timeout)


LINE_READ = re.compile(r"snapshot .*? read: (\d+) records, read, checked and decoded in "
                       r"([\d.]+) s")
LINE_LOADED = re.compile(r"controller image loaded from snapshot .*: (\d+) topics, (\d+) "
                         r"partitions, ([\d.]+) s after the start .*; ([\d.]+) s of CPU")


def phases_from_log(text: str) -> dict[str, float]:
    """The restarted node's own timings: read + check + decode of the snapshot, the whole
    load from the shell's start (so the replay is the difference), the process's CPU."""
    out: dict[str, float] = {}
    m = LINE_READ.search(text)
    if m:
        out["read_decode"] = float(m.group(2))
    m = LINE_LOADED.search(text)
    if m:
        out["loaded_after_start"] = float(m.group(3))
        out["partitions"] = float(m.group(2))
        out["cpu"] = float(m.group(4))
    if "read_decode" in out and "loaded_after_start" in out:
        out["replay"] = out["loaded_after_start"] - out["read_decode"]
    return out


def restart(cluster: KRaftCluster, ctl: Controllers, case: str, run: int, extra: int,
            per_topic: int) -> dict[str, float]:
    leader, _ = leader_status(cluster)
    victim = next(i for i in sorted(cluster.controllers) if i != leader)
    node = cluster.controllers[victim]
    if case == "SIGTERM":
        cluster.terminate(victim)
    else:
        cluster.kill(victim)
    names = [f"extra-{case[-1]}{run}-{i:03d}" for i in range(extra)]
    create_topics(cluster, ctl, names, per_topic, len(names), 1, progress=False)
    leader, lead = leader_status(cluster)
    hw = lead["high_watermark"]
    log_at = node.log_path.stat().st_size
    t0 = time.time()
    cluster.start_node(victim)
    loaded = caught = None
    deadline = time.monotonic() + 300
    while caught is None:
        st = node.ask("status")
        now = time.time()
        if st is not None and "replayed_offset" in st:
            if loaded is None and st.get("snapshot_loaded_offset", -1) >= 0:
                loaded = st["snapshot_loaded_at"] - t0
            if st["replayed_offset"] >= hw:
                caught = now - t0
        elif st is not None:  # a node of before issue 26 (--code): its controller's image
            got = node.ask("brokers")  # ends with the extra topics' records, below hw
            if got is not None and got.get("committed_offset", -1) >= hw - 1:
                caught = time.time() - t0
        if time.monotonic() > deadline:
            raise RuntimeError(f"controller {victim} not caught up in 300 s: {st}")
        cluster.check_alive()
        time.sleep(POLL_S)
    with open(node.log_path, "rb") as f:
        f.seek(log_at)
        text = f.read().decode(errors="replace")
    ph = phases_from_log(text)
    out = {"loaded": loaded if loaded is not None else float("nan"), "caught_up": caught,
           "hw": hw, "rss": rss_mib(node.pid), **ph}
    if "loaded_after_start" in ph and loaded is not None:
        out["startup"] = loaded - ph["loaded_after_start"]
    say(f"{case} run {run}: controller {victim} loaded its snapshot after {out['loaded']:.2f} s,"
        f" caught up to {hw} after {caught:.2f} s (start-up {out.get('startup', 0):.2f}, read "
        f"and decode {ph.get('read_decode', 0):.2f}, replay {ph.get('replay', 0):.2f} s; "
        f"{ph.get('cpu', 0):.2f} s CPU to the image loaded); RSS {out['rss']:.0f} MiB")
    return out


def baselines(path: Path, runs: int) -> dict[str, float]:
    snap = parse_snapshot_name(path.name)
    assert snap is not None
    out = {"crc": float("inf"), "decode": float("inf"), "full": float("inf"),
           "fast": float("inf")}
    old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)  # as the node runs (runtime)
    try:
        for _ in range(runs):
            t0 = time.perf_counter()
            data = path.read_bytes()
            pos = batches = 0
            while pos < len(data):
                header = read_header(data, pos)
                if not crc_matches(data, pos, header):
                    raise RuntimeError(f"CRC mismatch at {pos}")
                pos += header.size
                batches += 1
            out["crc"] = min(out["crc"], time.perf_counter() - t0)
            del data
            t0 = time.perf_counter()
            records = decoded(records_of(path.read_bytes(), snap, BYTES, str(path), 16 << 20))
            out["decode"] = min(out["decode"], time.perf_counter() - t0)
            del records
            gc.collect()
            t0 = time.perf_counter()
            image = image_from_records(decoded(records_of(path.read_bytes(), snap, BYTES,
                                                          str(path), 16 << 20)))
            out["full"] = min(out["full"], time.perf_counter() - t0)
            out["partitions"] = image.partition_count()
            del image
            gc.collect()
            t0 = time.perf_counter()
            image, _ = load_image(path.read_bytes(), snap.epoch, 16 << 20)
            out["fast"] = min(out["fast"], time.perf_counter() - t0)
            del image
            gc.collect()
    finally:
        gc.set_threshold(*old)
    out["batches"] = batches
    assert HEADER_BYTES
    return out


def summary(values: list[float]) -> str:
    v = [x for x in values if x == x]
    if not v:
        return "-"
    return f"{min(v):6.2f} {statistics.median(v):6.2f} {max(v):6.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1_000_000, help="in all")
    ap.add_argument("--per-topic", type=int, default=100)
    ap.add_argument("--per-request", type=int, default=50, help="topics per CreateTopics")
    ap.add_argument("--window", type=int, default=4, help="CreateTopics in flight")
    ap.add_argument("--extra-topics", type=int, default=10,
                    help="created while the controller is down")
    ap.add_argument("--runs", type=int, default=3, help="restarts per case")
    ap.add_argument("--dir", default="/tmp/bench-kraft-million")
    ap.add_argument("--keep", action="store_true", help="leave the cluster's directory")
    ap.add_argument("--code", type=Path, default=None,
                    help="run the nodes from this checkout (e.g. `git archive` of the commit "
                         "before the speed work) instead of this one: 'before' figures; "
                         "caught up is then read from the admin 'brokers' committed offset")
    args = ap.parse_args(argv)
    topics = args.partitions // args.per_topic
    if (args.per_topic + 1) * args.per_request > MAX_RECORDS_PER_REQUEST:
        ap.error(f"--per-request {args.per_request}: over {MAX_RECORDS_PER_REQUEST} records")
    population_records = topics * (args.per_topic + 1)
    snapshot_every = max(population_records - 2 * args.per_request * (args.per_topic + 1), 1)

    cal0, load0 = calibration(), load()
    print(f"# bench_kraft_million  {platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; load {load0}")
    print(f"# {topics:,} topics x {args.per_topic} = {topics * args.per_topic:,} partitions, "
          f"RF 3 over brokers {BROKERS} (registered over the wire); 3 controllers, a snapshot "
          f"every {snapshot_every:,} records", flush=True)

    if args.code is not None:  # the nodes' imports and working directory
        kraft_launcher.REPO_ROOT = args.code.resolve()
    cluster = KRaftCluster(args.dir, controllers=3, brokers=0,
                           snapshot_every_records=snapshot_every,
                           overrides={"broker.session.timeout.ms": "600000"})
    if args.code is not None:
        cluster.env = subprocess_env(args.code.resolve())
        print(f"# nodes run from {args.code}")
    heartbeats = None
    results: dict[str, list[dict[str, float]]] = {"SIGTERM": [], "kill -9": []}
    try:
        view = cluster.up(120, progress=say)
        heartbeats = Heartbeats(cluster)
        heartbeats.register()
        heartbeats.start()
        say(f"brokers {BROKERS} registered and unfenced; controller {view.leader} active")
        ctl = Controllers(cluster)
        t0 = time.monotonic()
        create_topics(cluster, ctl, [f"topic-{t:06d}" for t in range(topics)], args.per_topic,
                      args.per_request, args.window)
        populate_s = time.monotonic() - t0
        say(f"populated in {populate_s:.1f} s; waiting for the snapshots")
        cluster.wait_for("a snapshot on every controller",
                         lambda: all(n.snapshots() for n in cluster.controllers.values()),
                         600)
        hw = wait_replayed(cluster)
        rss = {i: rss_mib(n.pid) for i, n in cluster.controllers.items()}
        snaps = {i: n.snapshots()[-1] for i, n in cluster.controllers.items()}
        snap_bytes = max(p.stat().st_size for p in snaps.values())
        say(f"high watermark {hw:,}; snapshots {[p.name for p in snaps.values()]}, "
            f"{snap_bytes / 2**20:.1f} MiB; RSS {', '.join(f'{r:.0f}' for r in rss.values())}"
            " MiB")
        copy = Path(args.dir) / "baseline" / next(iter(snaps.values())).name
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(next(iter(snaps.values())), copy)
        for run in range(args.runs):
            for case in results:
                results[case].append(restart(cluster, ctl, case, run, args.extra_topics,
                                             args.per_topic))
        ctl.close()
        base = baselines(copy, args.runs)
        say(f"baselines: CRC only {base['crc']:.2f} s, read+decode {base['decode']:.2f} s, "
            f"read+decode+replay {base['full']:.2f} s, the node's fast load {base['fast']:.2f} s"
            " (in this process)")
    finally:
        if heartbeats is not None:
            heartbeats.stop()
        cluster.stop()
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    cal1, load1 = calibration(), load()
    every = results["SIGTERM"] + results["kill -9"]
    caught = [r["caught_up"] for r in every]
    print()
    print(f"| {topics * args.per_topic:,} partitions, 3 controllers | min | median | max |")
    print("|---|---|---|---|")

    def row(label: str, values: list[float]) -> None:
        cells = summary(values).split() if summary(values) != "-" else ["-"] * 3
        print(f"| {label} | " + " | ".join(cells) + " |")

    for case, rs in results.items():
        row(f"{case}: (a) snapshot loaded, s from process start", [r["loaded"] for r in rs])
        row(f"{case}: (b) caught up, s from process start", [r["caught_up"] for r in rs])
    for phase, label in (("startup", "start-up (interpreter, imports, log open)"),
                         ("read_decode", "read, check, decode the snapshot (fast load: "
                                         "and build the image)"),
                         ("replay", "replay into the image (fast load: the controller "
                                    "takes the image)"),
                         ("cpu", "CPU seconds, process start to image loaded")):
        row(f"phase: {label}, s", [r.get(phase, float("nan")) for r in every])
    row("restarted controller RSS, MiB", [r["rss"] for r in every])
    print(f"| population: {-(-topics // args.per_request):,} CreateTopics of "
          f"{args.per_request} topics, s | {populate_s:.1f} | | |")
    print(f"| controllers' RSS after population, MiB | {min(rss.values()):.0f} | "
          f"{statistics.median(rss.values()):.0f} | {max(rss.values()):.0f} |")
    print(f"| snapshot file | {snap_bytes / 2**20:.1f} MiB | {base['batches']:,} batches | |")
    print(f"| baseline: read + CRC-32C only (this process), s | {base['crc']:.2f} | | |")
    print(f"| baseline: read + decode, no image (this process), s | {base['decode']:.2f} | | |")
    print(f"| read + decode + replay (this process), s | {base['full']:.2f} | | |")
    print(f"| the node's fast load, collector on (this process), s | {base['fast']:.2f} | | |")
    med = statistics.median(caught)
    print(f"\n# caught up: median {med:.2f} s = {med / base['crc']:.1f}x the bytes' read and "
          f"CRC ({base['crc']:.2f} s); target < {TARGET_S:g} s: "
          f"{'met' if max(caught) < TARGET_S else 'NOT met'} (max {max(caught):.2f} s)")
    print(f"# calibration before {cal0:.3f} s, after {cal1:.3f} s; load before {load0}, "
          f"after {load1}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
