"""``ReplicaDirs``: the broker's local replicas as directories under ``log.dirs`` -- the
bookkeeping the core's replica effects ask for, without data replication.

One directory per partition, ``<topic>-<partition>``, in the first of ``log.dirs`` (Kafka
spreads them; one is enough here), holding ``replica.properties`` with what the broker was
last told: ``topic.id`` (22-character base64), ``role`` (leader or follower), ``leader``,
``leader.epoch`` and, for a leader, ``partition.epoch`` and ``isr``. ``BecomeLeader`` /
``BecomeFollower`` / ``UpdateIsr`` write it (a temporary file renamed over the old one: a
reader, a restart's ``scan``, finds the old file or the new, never part of one; nothing is
fsynced); ``DeleteReplica`` removes the directory. Each effect carried out has its line in
the state-change log (``kcontrol.broker.state.change`` at INFO), logged once its file is
written. The topic's name comes from the image the core
replayed (``name_of``): an effect names the topic by id.

``scan()`` lists the replicas found at start, for ``Start.local_replicas``: the core deletes
those the metadata no longer assigns to this broker when it enters RECOVERY. A directory
without a readable ``replica.properties`` is not a replica and is left alone.

What each replica was last told is also kept in memory (a leader's partition epoch is read
from there, not from its file). With ``background=True`` (the broker process) ``apply``
only decides what to write and queues it -- the files and the state-change log lines are
written, in the order applied, by a writer thread of their own, so the core's event thread
moves on as soon as the image is replayed (a controlled shutdown of a broker leading 10,000
partitions is 10,000 files on the new leaders, several seconds of a loaded machine's
filesystem calls; issue 26). The writer carries them out in rounds of up to
``_Writer.ROUND``: the round's files, with plain ``os`` calls, then its state-change lines in
one log call (``state_change_file.log_lines``: one write to the default setup's file, each
line as it would be alone, the round's time on each) -- ~15 us an effect where it was ~55.
``flush()`` waits until the queue is written; ``close()`` drains it and stops the thread. A write that fails is raised by the next ``apply`` (the
broker halts, as it did when the write was made in the effect). Without it (the default)
every ``apply`` writes before it returns.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from adapters.state_change_file import log_lines
from fsm.kraft.broker.effects import BecomeFollower, BecomeLeader, DeleteReplica, UpdateIsr
from fsm.kraft.broker.events import PartitionKey
from fsm.kraft.records.uuid import Uuid, uuid_from_base64, uuid_to_base64

log = logging.getLogger("kcontrol.kraft.broker")
state_log = logging.getLogger("kcontrol.broker.state.change")

PROPERTIES = "replica.properties"
MAX_SCAN = 1_000_000

ReplicaEffect = BecomeLeader | BecomeFollower | UpdateIsr | DeleteReplica


class ReplicaDirs:
    def __init__(self, root: Path, broker_id: int, name_of: Callable[[Uuid], str | None],
                 *, background: bool = False) -> None:
        self.root = Path(root)
        self._prefix = os.path.join(str(root), "")  # one string join per new directory
        self.broker_id = broker_id
        self.name_of = name_of
        self._dirs: dict[PartitionKey, str] = {}
        self._epochs: dict[PartitionKey, int] = {}
        """A leader's partition epoch, as last told (what its file says)."""
        self.counts = {"leader": 0, "follower": 0, "isr": 0, "deleted": 0}
        self._writer = _Writer(broker_id, self._carry_out) if background else None

    def scan(self) -> tuple[PartitionKey, ...]:
        """The partitions whose replica directory holds a readable ``replica.properties``."""
        self.root.mkdir(parents=True, exist_ok=True)
        found: dict[PartitionKey, str] = {}
        epochs: dict[PartitionKey, int] = {}
        for n, entry in enumerate(sorted(self.root.iterdir())):
            if n >= MAX_SCAN:
                raise RuntimeError(f"more than {MAX_SCAN} entries in {self.root}")
            props = _read(entry / PROPERTIES) if entry.is_dir() else None
            if props is None:
                continue
            try:
                key = (uuid_from_base64(props["topic.id"]), int(entry.name.rpartition("-")[2]))
                epoch = int(props.get("partition.epoch", "0"))
            except (KeyError, ValueError):
                log.warning("[broker %d] %s: not a replica directory (ignored)",
                            self.broker_id, entry)
                continue
            found[key] = str(entry)
            if epoch:
                epochs[key] = epoch
        self._dirs = found
        self._epochs = epochs
        return tuple(sorted(found))

    def apply(self, e: ReplicaEffect) -> None:
        """Decide what the effect leaves on disk (the directory, the partition epoch kept)
        and write it -- now, or, with the writer, queued (the rest is the writer's)."""
        key = (e.topic_id, e.partition_id)
        if isinstance(e, DeleteReplica):
            item: tuple[Any, ...] = (e, self._dirs.pop(key, None), False, 0)
            self._epochs.pop(key, None)
        else:
            path = self._dirs.get(key)
            fresh = path is None
            if path is None:
                name = self.name_of(e.topic_id) or uuid_to_base64(e.topic_id)
                path = self._dirs[key] = f"{self._prefix}{name}-{e.partition_id}"
            if isinstance(e, BecomeFollower):
                epoch = self._epochs.pop(key, 0)
            elif isinstance(e, UpdateIsr):
                epoch = self._epochs[key] = e.partition_epoch
            else:
                epoch = self._epochs.get(key, 0)
            item = (e, path, fresh, epoch)
        if self._writer is None:
            self._carry_out((item,))
        else:
            self._writer.put(item)

    def _carry_out(self, items: Sequence[tuple[Any, ...]]) -> None:
        """The files (or removals) of applied effects, in order, then their state-change
        lines, one log call for the lot (``state_change_file.log_lines``); a failed write
        raises after the lines of those done before it are logged."""
        lines: list[str] = []
        try:
            ids: dict[Uuid, str] = {}
            for e, path, fresh, epoch in items:
                lines.append(self._carry_out_one(e, path, fresh, epoch, ids))
        finally:
            log_lines(state_log, logging.INFO, lines)

    def _carry_out_one(self, e: ReplicaEffect, path: str | None, fresh: bool, epoch: int,
                       ids: dict[Uuid, str]) -> str:
        """One effect's file (or removal); its state-change line."""
        if isinstance(e, DeleteReplica):
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
            self.counts["deleted"] += 1
            label = os.path.basename(path) if path is not None else \
                f"{uuid_to_base64(e.topic_id)}-{e.partition_id}"
            return f"[broker {self.broker_id}] replica {label} deleted"
        assert path is not None
        topic_id = ids.get(e.topic_id)
        if topic_id is None:
            topic_id = ids[e.topic_id] = uuid_to_base64(e.topic_id)
        if isinstance(e, BecomeFollower):
            text = (f"topic.id={topic_id}\nrole=follower\nleader={e.leader}\n"
                    f"leader.epoch={e.leader_epoch}\n")
            what = f"follower of {e.leader} in leader epoch {e.leader_epoch}"
            self.counts["follower"] += 1
        else:
            text = (f"topic.id={topic_id}\nrole=leader\nleader={self.broker_id}\n"
                    f"leader.epoch={e.leader_epoch}\npartition.epoch={epoch}\n"
                    f"isr={','.join(map(str, e.isr))}\n")
            if isinstance(e, UpdateIsr):
                self.counts["isr"] += 1
                what = f"ISR {list(e.isr)} (partition epoch {epoch})"
            else:
                self.counts["leader"] += 1
                what = f"leader in leader epoch {e.leader_epoch}, ISR {list(e.isr)}"
        _write(path, text.encode(), fresh)
        return f"[broker {self.broker_id}] replica {os.path.basename(path)}: {what}"

    def flush(self, timeout: float | None = None) -> bool:
        """Until every applied effect is on disk (True), or ``timeout`` passed (False)."""
        return True if self._writer is None else self._writer.flush(timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Drain the writer and stop it (a later ``apply`` writes at once)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close(timeout)

    def local(self) -> dict[str, dict[str, str]]:
        """Directory name -> its properties (for status and tests)."""
        self.flush()
        return {os.path.basename(p): _read(Path(p) / PROPERTIES) or {}
                for p in sorted(self._dirs.values())}


class _Writer:
    """One thread carrying out queued items in order. It starts on a burst once the burst is
    over (no item added for ``SETTLE_S``) and yields between rounds of ``ROUND`` items, so
    the core's event thread, which queues them, keeps the interpreter while it replays."""

    SETTLE_S = 0.02
    MAX_SETTLE_S = 0.5
    ROUND = 256

    def __init__(self, broker_id: int, carry_out: Callable[[list[Any]], None]) -> None:
        self._queue: deque[Any] = deque()
        self._carry_out = carry_out
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._closing = False
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-kraft-broker-{broker_id}-replicas")
        self._thread.start()

    def put(self, item: Any) -> None:
        if self.failure is not None:
            raise self.failure  # the broker halts, as it did when the write failed in place
        self._queue.append(item)
        if not self._wake.is_set():
            self._idle.clear()
            self._wake.set()

    def flush(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue or not self._idle.is_set():
            if self.failure is not None or not self._thread.is_alive():
                return False
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._wake.set()
            self._idle.wait(0.05 if left is None else min(left, 0.05))
        return self.failure is None  # a failed round's other items are not on disk

    def close(self, timeout: float) -> None:
        self._closing = True
        self._wake.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        queue = self._queue
        while True:
            self._wake.wait()
            settle_until = time.monotonic() + self.MAX_SETTLE_S
            while not self._closing and time.monotonic() < settle_until:
                seen = len(queue)
                time.sleep(self.SETTLE_S)
                if len(queue) == seen:
                    break
            self._wake.clear()
            try:
                while queue:
                    self._carry_out([queue.popleft() for _ in range(min(self.ROUND,
                                                                         len(queue)))])
                    time.sleep(0)
            except Exception as exc:  # noqa: BLE001 -- raised by the next put
                log.critical("replica directories: %s", exc)
                self.failure = exc
                self._idle.set()
                return
            if not queue:
                self._idle.set()
                if self._closing:
                    return


def _read(path: Path) -> dict[str, str] | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and not key.startswith("#"):
            out[key.strip()] = value.strip()
    return out


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_TMP = os.sep + PROPERTIES + ".tmp"
_FINAL = os.sep + PROPERTIES


def _write(directory: str, data: bytes, fresh: bool) -> None:
    """``replica.properties`` written whole (a temporary file renamed over the old one, so a
    reader finds the old file or the new, never part of one); the directory made first if it
    is new (or was removed behind our back). Plain ``os`` calls: a buffered text file cost
    ~3x as much per file (``docs/benchmarks.md``, issue 26)."""
    tmp = directory + _TMP
    if fresh:
        os.makedirs(directory, exist_ok=True)
    try:
        fd = os.open(tmp, _CREATE, 0o666)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, _CREATE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, directory + _FINAL)
