"""Shared by the KRaft process benchmarks of issue 26 (``bench_kraft_failover``,
``bench_kraft_controlled_shutdown``, ``bench_kraft_broker_failure``): a local KRaft cluster of
real ``kcontrol node`` processes (``adapters.cluster.kraft_launcher.KRaftCluster``: 3
controllers, up to 9 brokers), populated with CreateTopics sent straight to the active
controller, and what the three read of it -- each node's admin ``status`` (no event thread
of the node is asked: a status is the value its event thread last published), the active
controller's ``brokers``, a broker's Metadata answer for the final check.

Partitions: ``topics`` x ``partitions`` with explicit assignments, replication factor 3; one
broker (a victim) is the first replica -- the leader -- of every tenth partition, so it leads
exactly a tenth of them (10,000 of 100,000): see ``Layout``.
Batches of CreateTopics are bounded (``BATCH_TOPICS`` topics, a few thousand partitions).

Timing is wall clock on one host: the benchmark's own ``time.time()`` at the signal, and
either its polls (every ``POLL_S``) or a node's log line (millisecond timestamps).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.cli.log_options import DEFAULT_LOG_ROOT, STATE_CHANGE_FILE  # noqa: E402
from adapters.cluster.kraft_launcher import KRaftCluster  # noqa: E402
from adapters.cluster.launcher import REPO_ROOT  # noqa: E402
from adapters.kraft_node.wire_client import WireClient, WireError  # noqa: E402
from adapters.network import WireClient as KafkaClient  # noqa: E402
from adapters.network.codec import CodecError  # noqa: E402
from adapters.raft_node.admin import AdminClient  # noqa: E402
from fsm.errors import ErrorCode  # noqa: E402
from fsm.kraft.controller.requests import CreatableTopic, CreateTopicsRequest  # noqa: E402

T = TypeVar("T")
HOST = "127.0.0.1"
POLL_S = 0.01
BATCH_TOPICS = 20
PACE_BATCHES = 10
QUIET_CPU = 0.5
REPLICATION = 3
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


# ---------------------------------------------------------------------- the machine

def machine() -> str:
    return (f"{platform.node()}: {os.cpu_count()} CPUs, {platform.machine()}, Linux "
            f"{platform.release()}, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def calibration() -> float:
    """``sum(i*i for i in range(10**6))`` in this process, best of 3 (seconds)."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=3))


def stats(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def ms3(values: list[float]) -> str:
    lo, med, hi = stats(values)
    return f"{lo * 1e3:.0f} / {med * 1e3:.0f} / {hi * 1e3:.0f}"


def parse_args(doc: str, runs: int = 5, **extra: Any) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--brokers", type=int, default=9)
    ap.add_argument("--dir", type=Path, default=None,
                    help="keep the clusters' directories (logs) here instead of a temporary one")
    for name, (kind, default, text) in extra.items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=kind, default=default, help=text)
    return ap.parse_args()


def wait_until(cond: Callable[[], T | None], timeout: float, what: str,
               pause: float = POLL_S) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(pause)


def log_time(line: str) -> float | None:
    """The wall-clock time of a node's log line (``2026-11-27 05:12:01,234 INFO ...``)."""
    m = STAMP.match(line)
    if m is None:
        return None
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def log_since(path: Path, offset: int) -> str:
    try:
        with path.open(errors="replace") as f:
            f.seek(offset)
            return f.read()
    except FileNotFoundError:
        return ""


def state_change_log(node_id: int) -> Path:
    """Where node ``node_id`` of a launched cluster writes its state-change lines (the
    membership moves of brokers; ``kcontrol node``'s default ``--log-dir``, under the
    repository, which every cluster started from this checkout shares: read from a position
    taken before the act)."""
    return REPO_ROOT / DEFAULT_LOG_ROOT / f"node-{node_id}" / STATE_CHANGE_FILE


# ---------------------------------------------------------------------- the cluster

SHM = Path("/dev/shm")


@contextlib.contextmanager
def kraft_cluster(name: str, directory: Path | None, brokers: int,
                  overrides: dict[str, str], brokers_in_memory: bool = True
                  ) -> Iterator[KRaftCluster]:
    """3 controllers and ``brokers`` brokers, up (registered, unfenced); stopped at the end.

    ``brokers_in_memory``: the brokers' ``log.dirs`` (their copy of the metadata log and one
    replica directory per partition they hold: 300,000 small files for 100,000 partitions
    at replication factor 3) on ``/dev/shm`` -- on this shared machine's disk those files,
    written while the topics are created, slowed every fsync of the controllers' metadata
    log to seconds and the brokers' sessions expired. The controllers' metadata logs stay on
    the disk, fsyncs and all: the quorum's commits are what the figures time."""
    with tempfile.TemporaryDirectory(prefix=f"kcontrol-{name}-") as tmp:
        root = (directory / name) if directory is not None else Path(tmp)
        cluster = KRaftCluster(root, controllers=3, brokers=brokers, overrides=overrides)
        memory = SHM / f"kcontrol-{name}-{os.getpid()}" \
            if brokers_in_memory and SHM.is_dir() else None
        if memory is not None:
            for n in cluster.brokers.values():
                data = str(memory / n.name)
                n.props = {**n.props, "log.dirs": data, "metadata.log.dir": data}
        try:
            cluster.up(timeout=120)
            yield cluster
        finally:
            for line in cluster.stop(grace=20):
                print(f"# {line}")
            if memory is not None:
                shutil.rmtree(memory, ignore_errors=True)


def controller_client(cluster: KRaftCluster, node_id: int, timeout: float = 60.0) -> WireClient:
    host, _, port = cluster.controllers[node_id].address.rpartition(":")
    return WireClient(host, int(port), timeout=timeout)


class Layout:
    """Who holds what, replication factor 3: victims 1..V each lead exactly a tenth of the
    partitions (10,000 of 100,000) -- every tenth partition, in turn -- with two base brokers
    as followers; base brokers V+1..V+K lead the rest among themselves; idle brokers (the
    last ``idle``) hold no replica at all (a controlled shutdown or failure of a broker
    leading nothing: the baseline). A victim is in no partition but its own tenth, so the
    runs of one cluster take the victims one after another, each still leading its 10,000."""

    def __init__(self, brokers: int, victims: int = 3, idle: int = 3) -> None:
        if not 0 <= victims <= 10 or brokers - victims - idle < REPLICATION:
            raise ValueError(f"{brokers} brokers: {victims} victims and {idle} idle leave "
                             f"fewer than {REPLICATION} base brokers")
        self.brokers = brokers
        self.victims = list(range(1, victims + 1))
        self.base = list(range(victims + 1, brokers - idle + 1))
        self.idle = list(range(brokers - idle + 1, brokers + 1))

    def replicas(self, index: int) -> tuple[int, ...]:
        slot, turn = index % 10, index // 10
        k = len(self.base)
        if slot < len(self.victims):
            return (self.victims[slot], self.base[turn % k], self.base[(turn + 1) % k])
        return tuple(self.base[(index + j) % k] for j in range(REPLICATION))

    def led(self, total: int) -> dict[int, int]:
        out: dict[int, int] = {}
        for i in range(total):
            leader = self.replicas(i)[0]
            out[leader] = out.get(leader, 0) + 1
        return out


def topic_name(t: int, prefix: str = "t") -> str:
    return f"{prefix}{t:05d}"


def create_topics(client: WireClient, topics: list[CreatableTopic],
                  exists_ok: bool = False) -> float:
    """One CreateTopics; seconds to its answer. Every topic must be created (or, retrying a
    batch whose answer was lost, exist already); ``RetryableError`` for an answer that says
    ask again (REQUEST_TIMED_OUT, NOT_CONTROLLER)."""
    t0 = time.perf_counter()
    answer = client.call_value(CreateTopicsRequest(tuple(topics), ()))
    seconds = time.perf_counter() - t0
    ok = {ErrorCode.NONE} | ({ErrorCode.TOPIC_ALREADY_EXISTS} if exists_ok else set())
    bad = [r for r in answer.topics if r.error not in ok]
    if any(r.error in RETRIABLE for r in bad):
        raise RetryableError(f"CreateTopics: {bad[0].error.name}")
    if bad:
        raise RuntimeError(f"CreateTopics refused {len(bad)} topics, e.g. {bad[0]}")
    return seconds


class RetryableError(Exception):
    """The controller said: ask again (maybe another controller)."""


RETRIABLE = frozenset({ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_CONTROLLER})


def populate(cluster: KRaftCluster, topics: int, partitions: int, layout: Layout) -> float:
    """``topics`` x ``partitions`` created on the active controller in batches of
    ``BATCH_TOPICS`` topics (a batch whose answer is lost or timed out is sent again, to
    whichever controller leads then); then waited for in every broker's image, replicas
    placed by ``layout``. Seconds taken."""
    t0 = time.perf_counter()
    retries = 0
    client: WireClient | None = None
    try:
        for start in range(0, topics, BATCH_TOPICS):
            batch = []
            for t in range(start, min(topics, start + BATCH_TOPICS)):
                assignments = tuple((p, layout.replicas(t * partitions + p))
                                    for p in range(partitions))
                batch.append(CreatableTopic(topic_name(t), assignments=assignments))
            for attempt in range(20):
                try:
                    if client is None:
                        client = controller_client(cluster, cluster.wait_leader(60).leader)
                    create_topics(client, batch, exists_ok=attempt > 0)
                    break
                except (WireError, RetryableError) as exc:
                    retries += 1
                    print(f"# populate: topics from {topic_name(start)}: {exc}; again",
                          flush=True)
                    if client is not None:
                        client.close()
                    client = None
                    time.sleep(0.5)
            else:
                raise RuntimeError(f"populate: topics from {topic_name(start)} not created")
            if (start // BATCH_TOPICS) % PACE_BATCHES == PACE_BATCHES - 1:
                wait_caught_up(cluster, timeout=900)  # the brokers' backlog stays bounded
    finally:
        if client is not None:
            client.close()
    wait_caught_up(cluster, timeout=900)
    return time.perf_counter() - t0


def cluster_cpu(cluster: KRaftCluster, nodes: list[Any] | None = None) -> float:
    """CPU seconds the cluster's running processes (or those of ``nodes``) have used
    (``/proc/<pid>/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for n in cluster.nodes() if nodes is None else nodes:
        if n.running and n.pid is not None:
            try:
                fields = Path(f"/proc/{n.pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def wait_quiet(cluster: KRaftCluster, cpu_per_s: float = QUIET_CPU, window: float = 2.0,
               timeout: float = 180.0) -> float:
    """Until the cluster's processes use less than ``cpu_per_s`` CPU seconds a second over
    ``window`` seconds (the brokers' replica directories written, the last batches
    replayed), at most ``timeout`` seconds; the rate last seen. A run started while the
    brokers still write 300,000 files after the topics' creation times that, not itself."""
    deadline = time.monotonic() + timeout
    rate = float("inf")
    while time.monotonic() < deadline:
        before = cluster_cpu(cluster)
        time.sleep(window)
        rate = (cluster_cpu(cluster) - before) / window
        if rate < cpu_per_s:
            break
    return rate


def check_layout(cluster: KRaftCluster, layout: Layout, total: int,
                 timeout: float = 120.0) -> dict[int, int]:
    """Until every broker is unfenced and leads what ``layout`` gave it, in its own image;
    the counts. A broker fenced while the topics were created (its session expired on a
    machine loaded past its means) has lost its leaderships for good: that fails here,
    saying so, rather than timing a different cluster."""
    want = layout.led(total)
    ids = sorted(cluster.brokers)
    got: dict[int, int] = {}

    def right() -> bool:
        nonlocal got
        got = leaders(cluster, ids)
        return all(got[b] == want.get(b, 0) for b in ids)

    try:
        wait_until(right, timeout, "the layout's leaders", pause=0.5)
    except TimeoutError:
        fenced = {b: r["fenced"] for b, r in (cluster.registered_brokers() or {}).items()}
        raise RuntimeError(f"the layout did not hold: leaders {got}, wanted {want}; fenced "
                           f"{fenced} (sessions expired while the topics were created?)") \
            from None
    return got


def committed_offset(cluster: KRaftCluster) -> int:
    got = wait_until(lambda: _brokers_view(cluster), 60, "the active controller's brokers")
    return int(got["committed_offset"])


def _brokers_view(cluster: KRaftCluster) -> dict[str, Any] | None:
    v = cluster.quorum()
    if v is None:
        return None
    got = cluster.controllers[v.leader].ask("brokers")
    return got if got is not None and got.get("active") else None


def broker_status(cluster: KRaftCluster, broker: int) -> dict[str, Any] | None:
    return cluster.brokers[broker].ask("status")


def wait_caught_up(cluster: KRaftCluster, timeout: float = 120.0,
                   brokers: list[int] | None = None) -> int:
    """Until every (running) broker's image is at the active controller's committed offset;
    that offset."""
    ids = brokers if brokers is not None else [b for b, n in cluster.brokers.items()
                                               if n.running]
    want = committed_offset(cluster)

    def there() -> bool:
        for b in ids:
            st = broker_status(cluster, b)
            if st is None or st.get("metadata_offset", -1) < want:
                return False
        return True

    wait_until(there, timeout, f"brokers {ids} at offset {want}", pause=0.2)
    return want


def leaders(cluster: KRaftCluster, brokers: list[int]) -> dict[int, int]:
    """Each broker's own count of the partitions it leads in its image."""
    out = {}
    for b in brokers:
        st = broker_status(cluster, b)
        out[b] = -1 if st is None else int(st.get("leaders", -1))
    return out


def led_by(cluster: KRaftCluster, broker: int, leader: int) -> int:
    """How many partitions ``broker``'s Metadata answer (its image) says ``leader`` leads,
    counting leaderless ones too (the final check after a move)."""
    host, _, port = cluster.brokers[broker].address.rpartition(":")
    try:
        with KafkaClient(host, int(port), timeout=60) as c:
            md = c.metadata(version=8)
    except (OSError, CodecError) as exc:
        raise RuntimeError(f"broker {broker} did not answer Metadata: {exc}") from None
    return sum(1 for t in md["topics"] for p in t["partitions"]
               if p["leader_id"] in (leader, -1))


@dataclass
class Move:
    """What ``watch_move`` saw, in seconds from the act."""

    decided: float
    """The active controller's line (its log's timestamp)."""
    offset: int
    """The offset the line names: the last record of the batch that moved the partitions."""
    done: float
    """Every live broker's image at ``offset`` (the last of ``per_broker``)."""
    per_broker: dict[int, float]


def watch_move(cluster: KRaftCluster, act: Callable[[], None], line: re.Pattern[str],
               live: list[int], timeout: float) -> Move:
    """``act()`` (a signal to a broker), then: the active controller's state-change log
    (``state_change_log``, read every ``POLL_S``) until a line matches ``line`` (group 1:
    the offset X of the batch's last record); then every broker of ``live`` is asked at once
    (admin ``wait_offset``, one thread each) to answer when its published metadata offset
    is at least X -- its image has replayed the batch -- with the wall-clock time it saw it.
    Nothing polls the brokers meanwhile: a poll is a thread of the broker taking the
    interpreter from the one replaying."""
    active = cluster.wait_leader(30).leader
    path = state_change_log(active)
    pos = path.stat().st_size if path.exists() else 0
    t0 = time.time()
    act()
    deadline = time.monotonic() + timeout
    decided: float | None = None
    offset = -1
    while decided is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no line {line.pattern!r} within {timeout:g} s")
        for row in log_since(path, pos).splitlines(keepends=True):
            m = line.search(row)
            if m is not None and row.endswith("\n"):
                stamp = log_time(row)
                decided = (stamp if stamp is not None else time.time()) - t0
                offset = int(m.group(1))
                break
        else:
            time.sleep(POLL_S)
    wait_s = min(max(deadline - time.monotonic(), 1.0), 60.0)

    def wait(b: int) -> float:
        with AdminClient(HOST, cluster.brokers[b].admin_port, timeout=wait_s + 5) as c:
            return float(c.request("wait_offset", offset=offset, timeout=wait_s)["at"])

    with ThreadPoolExecutor(len(live)) as pool:
        per = {b: at - t0 for b, at in zip(live, pool.map(wait, live), strict=True)}
    return Move(decided, offset, max(per.values()), per)


def print_header(name: str, settings: dict[str, str]) -> float:
    print(f"# {name}  {machine()}")
    print(f"# {load()}")
    print("# settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    cal = calibration()
    print(f"# calibration sum(i*i for i in range(10**6)), best of 3: {cal:.3f} s")
    return cal


def print_calibration_after(before: float) -> None:
    print(f"# calibration after: {calibration():.3f} s (before {before:.3f} s); {load()}")


# ---------------------------------------------------------------------- a broker leaving

def populate_quiet(cluster: KRaftCluster, topics: int, partitions: int, layout: Layout) -> None:
    """``populate``, the layout's leaders checked (``check_layout``), then ``wait_quiet``;
    a line for each."""
    total = topics * partitions
    seconds = populate(cluster, topics, partitions, layout)
    print(f"# setup: {total:,} partitions created and in every broker's image in "
          f"{seconds:.0f} s; leaders {check_layout(cluster, layout, total)}; {load()}",
          flush=True)
    t_quiet = time.perf_counter()
    rate = wait_quiet(cluster)
    print(f"# quiet after {time.perf_counter() - t_quiet:.0f} s more (cluster CPU "
          f"{rate:.2f} s/s); {load()}", flush=True)


@dataclass
class Leaving:
    """One run's broker, about to leave (``leaving_brokers``)."""

    run: int
    """1, 2, ...: the run it belongs to."""
    kind: str
    """``victim`` (leads its 10,000) or ``idle`` (leads nothing: the baseline)."""
    broker: int
    live: list[int]
    """The running brokers but this one."""
    led: int
    """How many partitions it leads in its own image."""


def leaving_brokers(cluster: KRaftCluster, layout: Layout, runs: int) -> Iterator[Leaving]:
    """For each run (at most ``runs``, and as many as the layout has victims and idle brokers)
    a victim, then an idle broker, each once the cluster is quiet again (``wait_quiet``). The
    caller stops it; it stays down, so the next run's victim still leads its own 10,000."""
    for run in range(min(runs, len(layout.victims), len(layout.idle))):
        for kind, broker in (("victim", layout.victims[run]), ("idle", layout.idle[run])):
            wait_quiet(cluster, timeout=60)
            live = [b for b, n in cluster.brokers.items() if n.running and b != broker]
            yield Leaving(run + 1, kind, broker, live, leaders(cluster, [broker])[broker])


def per_broker_ms(move: Move) -> str:
    """When each live broker's image had the move, in ms from the act: ``4: 812, 5: 790``."""
    return ", ".join(f"{b}: {t * 1e3:.0f}" for b, t in move.per_broker.items())


def moved_off(cluster: KRaftCluster, gone: Leaving, total: int) -> str:
    """The check after a move: the live brokers' own leader counts add up to every partition,
    and the last live broker's Metadata names no partition led by the gone one or by nobody
    (as a phrase for the run's line)."""
    counts = leaders(cluster, gone.live)
    stray = led_by(cluster, gone.live[-1], gone.broker)
    return (f"live brokers lead {sum(counts.values()):,} of {total:,}; broker "
            f"{gone.live[-1]}'s Metadata: {stray} led by {gone.broker} or nobody")


__all__ = ["BATCH_TOPICS", "POLL_S", "Layout", "Leaving", "Move", "RetryableError", "WireError",
           "broker_status", "calibration", "check_layout", "cluster_cpu", "committed_offset", "controller_client",
           "create_topics", "kraft_cluster", "leaders", "leaving_brokers", "led_by", "load",
           "log_since", "log_time", "machine", "moved_off", "ms3", "parse_args", "per_broker_ms",
           "populate", "populate_quiet", "print_calibration_after", "print_header",
           "state_change_log", "stats", "topic_name", "wait_caught_up", "wait_quiet",
           "wait_until", "watch_move"]
