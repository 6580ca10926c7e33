"""``ReplicaDirs``: the broker's local replicas as directories under ``log.dirs`` -- the
bookkeeping the core's replica effects ask for, without data replication.

One directory per partition, ``<topic>-<partition>``, in the first of ``log.dirs`` (Kafka
spreads them; one is enough here), holding ``replica.properties`` with what the broker was
last told: ``topic.id`` (22-character base64), ``role`` (leader or follower), ``leader``,
``leader.epoch`` and, for a leader, ``partition.epoch`` and ``isr``. ``BecomeLeader`` /
``BecomeFollower`` / ``UpdateIsr`` write it (a temporary file renamed over the old one);
``DeleteReplica`` removes the directory. The topic's name comes from the image the core
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
filesystem calls; issue 26). ``flush()`` waits until the queue is written; ``close()``
drains it and stops the thread. A write that fails is raised by the next ``apply`` (the
broker halts, as it did when the write was made in the effect). Without it (the default)
every ``apply`` writes before it returns.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
        self.broker_id = broker_id
        self.name_of = name_of
        self._dirs: dict[PartitionKey, Path] = {}
        self._told: dict[PartitionKey, dict[str, str]] = {}
        self.counts = {"leader": 0, "follower": 0, "isr": 0, "deleted": 0}
        self._writer = _Writer(broker_id) if background else None

    def scan(self) -> tuple[PartitionKey, ...]:
        """The partitions whose replica directory holds a readable ``replica.properties``."""
        self.root.mkdir(parents=True, exist_ok=True)
        found: dict[PartitionKey, Path] = {}
        told: dict[PartitionKey, dict[str, str]] = {}
        for n, entry in enumerate(sorted(self.root.iterdir())):
            if n >= MAX_SCAN:
                raise RuntimeError(f"more than {MAX_SCAN} entries in {self.root}")
            props = _read(entry / PROPERTIES) if entry.is_dir() else None
            if props is None:
                continue
            try:
                key = (uuid_from_base64(props["topic.id"]), int(entry.name.rpartition("-")[2]))
            except (KeyError, ValueError):
                log.warning("[broker %d] %s: not a replica directory (ignored)",
                            self.broker_id, entry)
                continue
            found[key] = entry
            told[key] = props
        self._dirs = found
        self._told = told
        return tuple(sorted(found))

    def apply(self, e: ReplicaEffect) -> None:
        if self._writer is not None:
            self._writer.check()
        key = (e.topic_id, e.partition_id)
        if isinstance(e, DeleteReplica):
            path = self._dirs.pop(key, None)
            self._told.pop(key, None)
            self.counts["deleted"] += 1
            self._do(_delete, path, "[broker %d] replica %s deleted", self.broker_id,
                     self._label(key, path))
            return
        path = self._dirs.get(key)
        fresh = path is None
        if path is None:
            name = self.name_of(e.topic_id) or uuid_to_base64(e.topic_id)
            path = self._dirs[key] = self.root / f"{name}-{e.partition_id}"
        props = {"topic.id": uuid_to_base64(e.topic_id)}
        if isinstance(e, BecomeFollower):
            props |= {"role": "follower", "leader": str(e.leader),
                      "leader.epoch": str(e.leader_epoch)}
            what = f"follower of {e.leader} in leader epoch {e.leader_epoch}"
            self.counts["follower"] += 1
        else:
            old = self._told.get(key, {})
            epoch = e.partition_epoch if isinstance(e, UpdateIsr) else \
                int(old.get("partition.epoch", "0"))
            props |= {"role": "leader", "leader": str(self.broker_id),
                      "leader.epoch": str(e.leader_epoch), "partition.epoch": str(epoch),
                      "isr": ",".join(map(str, e.isr))}
            kind = "isr" if isinstance(e, UpdateIsr) else "leader"
            self.counts[kind] += 1
            what = (f"ISR {list(e.isr)} (partition epoch {epoch})" if kind == "isr" else
                    f"leader in leader epoch {e.leader_epoch}, ISR {list(e.isr)}")
        self._told[key] = props
        self._do(_write, (path, props, fresh), "[broker %d] replica %s: %s", self.broker_id,
                 path.name, what)

    def _do(self, write: Callable[[Any], None], arg: Any, *line: Any) -> None:
        if self._writer is None:
            write(arg)
            state_log.info(*line)
        else:
            self._writer.put(write, arg, line)

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
        return {p.name: _read(p / PROPERTIES) or {} for p in sorted(self._dirs.values())}

    def _label(self, key: PartitionKey, path: Path | None) -> str:
        return path.name if path is not None else f"{uuid_to_base64(key[0])}-{key[1]}"


class _Writer:
    """One thread writing queued replica files and their state-change lines, in order."""

    def __init__(self, broker_id: int) -> None:
        self._queue: deque[tuple[Callable[[Any], None], Any, tuple[Any, ...]]] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._closing = False
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-kraft-broker-{broker_id}-replicas")
        self._thread.start()

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure

    def put(self, write: Callable[[Any], None], arg: Any, line: tuple[Any, ...]) -> None:
        with self._cond:
            self._queue.append((write, arg, line))
            self._cond.notify_all()

    def flush(self, timeout: float | None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy
                                       or self.failure is not None or
                                       not self._thread.is_alive(), timeout)

    def close(self, timeout: float) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                items = list(self._queue)
                self._queue.clear()
                self._busy = True
            try:
                for write, arg, line in items:
                    write(arg)
                    state_log.info(*line)
            except Exception as exc:  # noqa: BLE001 -- raised by the next apply
                log.critical("replica directories: %s", exc)
                with self._cond:
                    self.failure = exc
                    self._busy = False
                    self._cond.notify_all()
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


def _write(what: tuple[Path, dict[str, str], bool]) -> None:
    """``replica.properties`` written whole (a temporary file renamed over the old one); the
    directory made first if it is new (or was removed behind our back)."""
    directory, props, fresh = what
    text = "".join(f"{k}={v}\n" for k, v in props.items())
    tmp = os.path.join(directory, PROPERTIES + ".tmp")
    if fresh:
        os.makedirs(directory, exist_ok=True)
    try:
        f = open(tmp, "w")  # noqa: SIM115 -- closed below, retried after a makedirs
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        f = open(tmp, "w")  # noqa: SIM115
    with f:
        f.write(text)
    os.replace(tmp, os.path.join(directory, PROPERTIES))


def _delete(path: Path | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
