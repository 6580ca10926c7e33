"""``IsrExpander``: what stands in for follower fetch progress in a broker without logs.

kcontrol brokers hold no data, so no follower ever "catches up" by fetching. In Kafka the
leader adds a follower back to the ISR once it has fetched up to the leader's log end; here a
leader counts an assigned replica as caught up as soon as that replica's broker is live in the
leader's metadata cache (registered and announced by the controller's UpdateMetadata). This is
the same choice the model checker's world offers (``isr_change_choices``: "expand it by an
assigned replica whose process runs"), so the real cluster stays inside the explored space.

Every ``interval_s`` the expander looks, under the core's lock, at the partitions the broker
believes it leads and submits ``IsrChangeWanted(tp, isr + live replicas not in it)`` for those
that would grow -- all of one scan together (``submit_many``), so the executor sends their
conditional ISR writes in one pipelined round and merges their ISR change notifications
into one znode per 1,000 partitions (``BrokerExecutor._write_many``). The core writes each
new ISR conditionally on the znode version it holds, then notifies (``fsm.broker.isr``). It never shrinks an ISR: the controller
removes failed and shutting-down brokers. The scan is skipped while nothing the answer depends
on has changed (no request applied, no write in flight or finished since the last scan that
found nothing to do).

Liveness has two sources, both required: the metadata cache (what the controller last
announced) and ``/brokers/ids`` read just before the scan (``registered``). The cache alone
lags: after a broker dies the controller's LeaderAndIsr (ISR without it) reaches the leader
before the UpdateMetadata (live brokers without it), and a scan in between would take the
dead broker straight back into the ISR it was just removed from.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from fsm.broker import BrokerCore
from fsm.broker_states import BrokerState
from fsm.events import IsrChangeWanted

log = logging.getLogger("kcontrol.broker")

ISR_BATCH = 500
"""Expansions handed to the executor per round: the core looks through its writes in flight
for each one it takes, so a round of 10,000 would cost 10,000 x 10,000 steps."""


class IsrExpander:
    def __init__(self, broker_id: int, core: Callable[[], BrokerCore], lock: threading.Lock,
                 submit_many: Callable[[list[object]], bool], interval_s: float = 0.5, *,
                 registered: Callable[[], frozenset[int] | None] | None = None,
                 batch: int = ISR_BATCH) -> None:
        self.broker_id = broker_id
        self._core = core
        self.lock = lock
        self.submit_many = submit_many
        self.interval_s = interval_s
        self.registered = registered
        self.batch = max(1, batch)
        self._stop = threading.Event()
        self._last_key: object = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-broker-{broker_id}-isr")

    def start(self) -> IsrExpander:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                registered = None
                if self.registered is not None:
                    registered = self.registered()
                    if registered is None:
                        continue  # ZooKeeper unreachable: no expansion without it
                wanted = self.wanted(registered)
                for start in range(0, len(wanted), self.batch):
                    self.submit_many(wanted[start:start + self.batch])
            except Exception:  # noqa: BLE001 -- keep expanding on the next tick
                log.exception("[broker %d] ISR expansion scan failed", self.broker_id)

    def wanted(self, registered: frozenset[int] | None = None) -> list[IsrChangeWanted]:
        """The ISR expansions to ask for now (empty when nothing changed since a scan that
        found none). ``registered``: the brokers registered in ZooKeeper now (None: not
        checked); a replica joins only if it is live in the metadata cache *and* there."""
        with self.lock:
            core = self._core()
            if core.state is not BrokerState.RUNNING:
                self._last_key = None
                return []
            applied = core.applied_log
            pending = core.pending_writes
            key = (core.epoch, applied[-1] if applied else None, tuple(t for t, _ in pending),
                   registered)
            if key == self._last_key:
                return []
            live = {b.broker_id for b in core.metadata_cache.live_brokers}
            if registered is not None:
                live &= registered
            busy = {w.tp for _, w in pending if w.kind == "isr"}
            out = []
            for tp, view in core.replicas():
                if tp in busy or not core.believes_leader(tp):
                    continue
                joining = tuple(r for r in view.replicas if r not in view.isr and r in live)
                if joining:
                    out.append(IsrChangeWanted(tp, view.isr + joining))
            self._last_key = None if out else key
        return out
