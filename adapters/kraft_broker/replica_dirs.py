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
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from fsm.kraft.broker.effects import BecomeFollower, BecomeLeader, DeleteReplica, UpdateIsr
from fsm.kraft.broker.events import PartitionKey
from fsm.kraft.records.uuid import Uuid, uuid_from_base64, uuid_to_base64

log = logging.getLogger("kcontrol.kraft.broker")
state_log = logging.getLogger("kcontrol.broker.state.change")

PROPERTIES = "replica.properties"
MAX_SCAN = 1_000_000

ReplicaEffect = BecomeLeader | BecomeFollower | UpdateIsr | DeleteReplica


class ReplicaDirs:
    def __init__(self, root: Path, broker_id: int, name_of: Callable[[Uuid], str | None]
                 ) -> None:
        self.root = Path(root)
        self.broker_id = broker_id
        self.name_of = name_of
        self._dirs: dict[PartitionKey, Path] = {}
        self.counts = {"leader": 0, "follower": 0, "isr": 0, "deleted": 0}

    def scan(self) -> tuple[PartitionKey, ...]:
        """The partitions whose replica directory holds a readable ``replica.properties``."""
        self.root.mkdir(parents=True, exist_ok=True)
        found: dict[PartitionKey, Path] = {}
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
        self._dirs = found
        return tuple(sorted(found))

    def apply(self, e: ReplicaEffect) -> None:
        key = (e.topic_id, e.partition_id)
        if isinstance(e, DeleteReplica):
            path = self._dirs.pop(key, None)
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
            self.counts["deleted"] += 1
            state_log.info("[broker %d] replica %s deleted", self.broker_id,
                           self._label(key, path))
            return
        path = self._dirs.get(key)
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
            old = _read(path / PROPERTIES) or {}
            epoch = e.partition_epoch if isinstance(e, UpdateIsr) else \
                int(old.get("partition.epoch", "0"))
            props |= {"role": "leader", "leader": str(self.broker_id),
                      "leader.epoch": str(e.leader_epoch), "partition.epoch": str(epoch),
                      "isr": ",".join(map(str, e.isr))}
            kind = "isr" if isinstance(e, UpdateIsr) else "leader"
            self.counts[kind] += 1
            what = (f"ISR {list(e.isr)} (partition epoch {epoch})" if kind == "isr" else
                    f"leader in leader epoch {e.leader_epoch}, ISR {list(e.isr)}")
        _write(path, props)
        state_log.info("[broker %d] replica %s: %s", self.broker_id, path.name, what)

    def local(self) -> dict[str, dict[str, str]]:
        """Directory name -> its properties (for status and tests)."""
        return {p.name: _read(p / PROPERTIES) or {} for p in sorted(self._dirs.values())}

    def _label(self, key: PartitionKey, path: Path | None) -> str:
        return path.name if path is not None else f"{uuid_to_base64(key[0])}-{key[1]}"


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


def _write(directory: Path, props: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (PROPERTIES + ".tmp")
    tmp.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    os.replace(tmp, directory / PROPERTIES)
