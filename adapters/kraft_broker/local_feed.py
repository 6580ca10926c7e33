"""``LocalMetadataFeed``: the broker role's metadata in combined mode -- the node is a voter
whose ``QuorumNode`` already holds the metadata log, so the broker reads that log instead of
observing the quorum a second time (a second replica under the same node id would confuse
the leader).

One thread polls every ``poll_s``: between two events of the controller node's event thread
(``RaftNodeShell.call``, the only safe way to read its log) it reads the committed batches
past what it published, at most ``MAX_OFFSETS_PER_READ`` offsets at a time, and hands them
on as ``MetadataFetched``, as the observer's ``MetadataFeed`` does; when the log no longer
holds what it needs (a snapshot moved the log start past it) it publishes the latest
snapshot as ``MetadataSnapshotLoaded`` first. The leader the node knows goes to
``on_leader`` whenever it changes. ``publish`` may block (the broker's queue is full): it
runs on this thread, never on the controller's.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from adapters.kraft_broker.metadata_feed import MAX_RECORDS_PER_EVENT, OnLeader, Publish
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded
from fsm.raft.messages import NO_LEADER

log = logging.getLogger("kcontrol.kraft.broker")

MAX_OFFSETS_PER_READ = 10_000
READ_WAIT_S = 10.0


class LocalMetadataFeed:
    def __init__(self, node: Any, publish: Publish, on_leader: OnLeader,
                 poll_s: float = 0.02) -> None:
        """``node``: the process's ``QuorumNode`` (its ``shell`` started)."""
        self.node = node
        self.publish = publish
        self.on_leader = on_leader
        self.poll_s = poll_s
        self.published = 0
        self.leader = NO_LEADER
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="kcontrol-broker-local-metadata")

    def start(self) -> LocalMetadataFeed:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def status(self) -> Any:
        return self.node.shell.status

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.poll_s):
                self._poll()
        except Exception:  # noqa: BLE001 -- logged; the broker sees no more metadata
            log.exception("the local metadata feed failed")

    def _poll(self) -> None:
        shell = self.node.shell
        st = shell.status
        if st.leader_id != self.leader:
            self.leader = st.leader_id
            self.on_leader(st.leader_id, st.epoch)
        if st.high_watermark <= self.published:
            return
        events = shell.call(self._read).result(READ_WAIT_S)
        for event in events:
            self.publish(event)

    def _read(self) -> list[object]:
        """On the controller node's event thread: what to publish next."""
        shell = self.node.shell
        port, core = shell.port, shell.core
        out: list[object] = []
        start = shell.status.log_start_offset
        snapshot = getattr(core, "snapshot_id", None)
        if self.published < start and snapshot is not None:
            out.append(MetadataSnapshotLoaded(snapshot.offset,
                                              tuple(port.read_snapshot(snapshot))))
            self.published = snapshot.offset
        hw = min(shell.status.high_watermark, self.published + MAX_OFFSETS_PER_READ)
        if hw <= self.published:
            return out
        base, records = -1, []
        for batch in port.read_committed(self.published, hw):
            if batch.end_offset <= self.published:
                continue
            if batch.end_offset > shell.status.high_watermark:
                break
            if records and len(records) + len(batch.records) > MAX_RECORDS_PER_EVENT:
                out.append(MetadataFetched(base, tuple(records)))
                base, records = -1, []
            if base < 0:
                base = batch.base_offset
            records.extend(batch.records)
            self.published = batch.end_offset
        if records:
            out.append(MetadataFetched(base, tuple(records)))
        return out
