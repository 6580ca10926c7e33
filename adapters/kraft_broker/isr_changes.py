"""The ISR expander's scan without a pass over every replica per metadata batch (issue 26).

``isr_expander.scan`` looks at every replica the broker holds -- 90,000 on a base broker of
100,000 partitions -- and a round runs after each batch the broker replays: after a broker
leading 10,000 partitions shut down, that pass cost as much as replaying the batch's records
on some brokers. Two parts, both on the core's event thread:

* ``ChangeLog`` -- the shell notes each item it processed: the partitions a
  ``MetadataFetched`` named (``PartitionRecord``, ``PartitionChangeRecord``); a snapshot
  loaded, or more than ``MAX_CHANGED`` partitions, is "everything";
* ``IncrementalScan`` -- a round's scan. Only the partitions that changed since the last
  scan, the ones it found and the busy ones are looked at again, unless the last scan said
  not running, the change log says everything, or a broker became eligible to join an ISR
  (registered, unfenced, out of controlled shutdown: any partition may take it) -- then every
  replica, as ``scan``. Why that is the same answer: a partition that was not found has
  nothing to add; what it has to add changes only when its replica (the core's view: changed
  by replay of a record naming it, by an AlterPartition answer to a busy one, or at
  RECOVERY, before which the scan said not running) or its image (a record naming it, or a
  snapshot) changes, or when the eligible brokers grow. ``led`` then holds only the
  partitions looked at: the chooser reads it for the partitions it asked, which were found or
  busy at the last scan (``tests/unit/kraft_broker/test_isr_changes.py`` holds the two scans
  equal over random replays).
"""

from __future__ import annotations

from collections.abc import Callable

from adapters.kraft_broker.isr_expander import Scan, busy_partitions, eligible_brokers, scan
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded, PartitionKey
from fsm.kraft.records.values import PartitionChangeRecord, PartitionRecord

MAX_CHANGED = 100_000
"""Partitions noted at most before a change log says "everything" (a bound: nobody may be
taking them, with the expander off)."""

Changed = set[PartitionKey] | None
"""The partitions changed, or None: everything."""


class ChangeLog:
    """What changed since the last ``take`` (event thread only)."""

    __slots__ = ("_keys",)

    def __init__(self) -> None:
        self._keys: Changed = None  # nothing taken yet: everything

    def note(self, item: object) -> None:
        keys = self._keys
        if keys is None:
            return
        if type(item) is MetadataFetched:
            for r in item.records:
                kind = type(r)
                if kind is PartitionChangeRecord or kind is PartitionRecord:
                    keys.add((r.topic_id, r.partition_id))
            if len(keys) > MAX_CHANGED:
                self._keys = None
        elif type(item) is MetadataSnapshotLoaded:
            self._keys = None

    def take(self) -> Changed:
        keys, self._keys = self._keys, set()
        return keys


class IncrementalScan:
    """``scan`` of what ``changes()`` (a ``ChangeLog.take``) says changed (see above)."""

    def __init__(self, changes: Callable[[], Changed]) -> None:
        self.changes = changes
        self._last = Scan(running=False)
        self._eligible: frozenset[int] = frozenset()
        self.full = 0
        """Scans of every replica so far (the rest looked at what changed)."""

    def __call__(self, core: KRaftBroker) -> Scan:
        changed = self.changes()
        last, eligible = self._last, eligible_brokers(core.image)
        keys = None if changed is None or not last.running or not eligible <= self._eligible \
            else changed | last.found.keys() | last.busy | busy_partitions(core)
        if keys is None or len(keys) >= core.replica_count:  # (or fewer replicas than keys)
            s = scan(core)
            self.full += 1
        else:
            s = scan(core, keys)
        self._last, self._eligible = s, eligible
        return s
