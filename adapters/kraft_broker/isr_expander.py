"""``IsrExpander``: what stands in for follower catch-up in a KRaft broker without logs.

kcontrol brokers hold no records, so no follower ever catches up by fetching. In Kafka the
leader adds a follower back to the ISR (AlterPartition to the active controller) once it has
fetched up to the leader's log end; here a leader counts an assigned replica as caught up as
soon as that replica's broker may join an ISR at all, in the broker's own committed image:
registered, unfenced and not in controlled shutdown -- the brokers Kafka's controller accepts
(any other is INELIGIBLE_REPLICA). The ZooKeeper mode's ``adapters.broker.isr_expander``
makes the same choice from its metadata cache.

Three parts:

* ``scan(core)`` -- pure, read-only, run on the core's event thread (``BrokerShell.call``):
  for each partition the broker leads (in RUNNING), with the core's view equal to the image
  (same leader epoch and partition epoch: an AlterPartition answer ahead of its record waits
  for it), the ISR it would ask for: ``isr + joining``, joining = the replicas of the image
  (a reassignment's adding replicas included) not in the ISR whose broker may join. Also the
  partitions with an AlterPartition in flight or a wish queued in the core (``busy``). The
  broker's rounds use ``isr_changes.IncrementalScan``: the same answer, looking again only
  at what changed since the last round (not 90,000 replicas after every metadata batch);
* ``Chooser`` -- pure, on the expander's thread, with the time passed in: which of those to
  ask for now. A busy partition is never asked (the core keeps one AlterPartition in flight
  per partition; its lost requests it resends itself). A partition asked before is asked
  again only when its (leader epoch, partition epoch, wanted ISR) changed -- the image moved
  it -- or after a backoff that doubles from ``backoff_s`` to ``max_backoff_s`` while the
  same ask keeps failing. At most ``batch`` partitions are busy at once (the new asks of a
  round are cut to ``batch`` less those already busy): the controller channel's queue, which
  the heartbeats share, stays short. Nothing happens while the broker is not RUNNING.
  Replicas an ``isr_change`` shrink took out through the admin socket (a follower said to
  have fallen behind) are held out for that partition for the time it says (``hold``). It
  also says what became of earlier asks: granted (the ISR held now has every replica asked
  for), refused (the same ask stands, nothing changed: the controller answered an error --
  FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA... -- which the core
  handles by dropping the wish and waiting for metadata), overtaken (another ISR committed,
  or the wanted ISR changed, before it was granted) or no longer led (by the time the answer
  was looked at: a new leader);
* ``IsrExpander`` -- the thread: a round when the image changed or an AlterPartition was
  answered (``wake``, called by the shell after such an event), at least every
  ``interval_s``, at most one per ``min_gap_s``; a round's chosen asks become one
  ``IsrChangesWanted`` to the core, which sends them as one AlterPartition. Each round that
  asks, and the outcomes, are one INFO line each (``kcontrol.kraft.broker``), naming at most
  ``LOG_NAMES`` partitions.

Errors are the core's to handle (``fsm.kraft.broker.alter_partition``): a partition-level
error drops the wish until the metadata says what happened; NOT_CONTROLLER, a lost request
or a request-level error re-queue it for the next heartbeat. The expander never shrinks an
ISR: the controller removes fenced and shutting-down brokers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from fsm.kraft.broker import KRaftBroker, Role
from fsm.kraft.broker.events import IsrChangesWanted, IsrChangeWanted, PartitionKey
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.image import MetadataImage
from fsm.kraft.records.values import Replicas

log = logging.getLogger("kcontrol.kraft.broker")

BATCH = 1000
"""Partitions with an AlterPartition of the broker in flight (or queued), at most. A round's
asks go as one request (Kafka's AlterPartition carries many partitions): 1,000 partition
changes are one batch of records on the controller, well under its bounds."""
BACKOFF_S = 1.0
MAX_BACKOFF_S = 8.0
INTERVAL_S = 2.0
MIN_GAP_S = 0.1
READ_TIMEOUT_S = 10.0
LOG_NAMES = 5
MAX_HELD = 10_000
"""Partitions with replicas held out of the ISR at once (the oldest hold goes first)."""


@dataclass(frozen=True, slots=True)
class Expansion:
    """Ask to grow ``key``'s ISR from ``isr`` to ``new_isr``, as its leader in
    ``leader_epoch`` holding ``partition_epoch``."""

    key: PartitionKey
    name: str
    leader_epoch: int
    partition_epoch: int
    isr: Replicas
    new_isr: Replicas

    @property
    def version(self) -> tuple[int, int, Replicas]:
        return self.leader_epoch, self.partition_epoch, self.new_isr

    def __str__(self) -> str:
        joining = [b for b in self.new_isr if b not in self.isr]
        return f"{self.name} {list(self.isr)}+{joining}"


@dataclass(frozen=True, slots=True)
class Scan:
    """One moment of the core: the expansions it would take, its busy partitions, and the ISR
    it holds of each partition it leads (``led``). ``running`` False: not RUNNING, nothing to
    do and nothing to conclude."""

    found: dict[PartitionKey, Expansion] = field(default_factory=dict)
    busy: frozenset[PartitionKey] = frozenset()
    led: dict[PartitionKey, Replicas] = field(default_factory=dict)
    running: bool = True


def eligible_brokers(image: MetadataImage) -> frozenset[int]:
    """The brokers that may join an ISR: registered, unfenced, not in controlled shutdown."""
    return frozenset(b for b, reg in image.brokers.items()
                     if not reg.fenced and not reg.in_controlled_shutdown)


def busy_partitions(core: KRaftBroker) -> frozenset[PartitionKey]:
    """The partitions with an AlterPartition in flight or a wish queued in the core."""
    return frozenset(core.alter_partition_in_flight()) | frozenset(
        k for k, _ in core.queued_isr_wishes())


def scan(core: KRaftBroker, keys: Iterable[PartitionKey] | None = None) -> Scan:
    """Read-only, on the core's event thread (see the module docstring). ``keys``: look at
    these partitions only (``found`` and ``led`` then hold only them; ``isr_changes``)."""
    if core.state is not KRaftBrokerState.RUNNING or core.broker_epoch is None:
        return Scan(running=False)
    image = core.image
    eligible = eligible_brokers(image)
    busy = busy_partitions(core)
    found = {}
    led = {}
    me, topics, leader = core.broker_id, image.topics, Role.LEADER
    replicas = core.iter_replicas() if keys is None else (
        (k, r) for k in keys if (r := core.replica(*k)) is not None)
    for key, r in replicas:  # unsorted: 90,000 replicas are not sorted each round
        if r.role is not leader:
            continue
        led[key] = isr = r.isr
        t = topics.get(key[0])
        p = None if t is None else t.partitions.get(key[1])
        if t is None or p is None or p.replicas == isr or p.leader != me \
                or p.leader_epoch != r.leader_epoch or p.partition_epoch != r.partition_epoch:
            continue  # (an ISR of every replica has none to add)
        joining = tuple(b for b in p.replicas if b not in isr and b in eligible)
        if joining:
            found[key] = Expansion(key, f"{t.name}-{key[1]}", r.leader_epoch,
                                   r.partition_epoch, r.isr, r.isr + joining)
    return Scan(dict(sorted(found.items())), busy, led)


@dataclass(slots=True)
class _Asked:
    ask: Expansion
    at: float
    backoff: float
    settled: bool = False


@dataclass(slots=True)
class Outcomes:
    granted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    overtaken: list[str] = field(default_factory=list)
    not_led: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.granted or self.refused or self.overtaken or self.not_led)

    def __str__(self) -> str:
        return "; ".join(f"{len(names)} {what}{_names(names)}" for what, names in (
            ("granted", self.granted), ("refused", self.refused),
            ("overtaken", self.overtaken), ("no longer led", self.not_led)) if names)


class Chooser:
    """Which expansions to ask for now (see the module docstring); pure, the time passed in."""

    def __init__(self, batch: int = BATCH, backoff_s: float = BACKOFF_S,
                 max_backoff_s: float = MAX_BACKOFF_S) -> None:
        if batch < 1 or backoff_s <= 0 or max_backoff_s < backoff_s:
            raise ValueError(f"batch {batch} >= 1 and 0 < backoff {backoff_s} <= max backoff "
                             f"{max_backoff_s}, please")
        self.batch = batch
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._asked: dict[PartitionKey, _Asked] = {}
        self._held: dict[PartitionKey, tuple[frozenset[int], float]] = {}

    def hold(self, key: PartitionKey, brokers: Iterable[int], until: float) -> None:
        """Keep ``brokers`` out of ``key``'s ISR until ``until`` (they fell behind: an
        ``isr_change`` shrink through the admin socket); a later hold replaces it."""
        if len(self._held) >= MAX_HELD and key not in self._held:
            self._held.pop(min(self._held, key=lambda k: self._held[k][1]))
        self._held[key] = (frozenset(brokers), until)

    def _unheld(self, e: Expansion, now: float) -> Expansion | None:
        held = self._held.get(e.key)
        if held is None:
            return e
        new_isr = tuple(b for b in e.new_isr if b in e.isr or b not in held[0])
        return None if new_isr == e.isr else replace(e, new_isr=new_isr)

    @property
    def asked(self) -> dict[PartitionKey, Expansion]:
        """What was asked last of each partition still followed."""
        return {k: a.ask for k, a in self._asked.items()}

    def choose(self, s: Scan, now: float) -> tuple[list[Expansion], Outcomes]:
        outcomes = Outcomes()
        if not s.running:
            return [], outcomes
        if self._held:
            self._held = {k: h for k, h in self._held.items() if now < h[1]}
        for key in [k for k in self._asked if k not in s.found and k not in s.busy]:
            a = self._asked.pop(key)
            if not a.settled:
                isr = s.led.get(key)
                (outcomes.not_led if isr is None else outcomes.granted
                 if all(b in isr for b in a.ask.new_isr) else outcomes.overtaken
                 ).append(str(a.ask))
        budget = self.batch - len(s.busy)
        chosen = []
        for key, found in s.found.items():
            e = self._unheld(found, now)
            if key in s.busy or e is None:
                continue
            a = self._asked.get(key)
            backoff = self.backoff_s
            if a is not None and a.ask.version == e.version:
                if not a.settled:
                    outcomes.refused.append(str(e))
                    a.settled = True
                if now < a.at + a.backoff:
                    continue
                backoff = min(a.backoff * 2, self.max_backoff_s)
            elif a is not None and not a.settled:
                outcomes.overtaken.append(str(a.ask))
                a.settled = True
            if budget <= 0:
                continue
            budget -= 1
            chosen.append(e)
            self._asked[key] = _Asked(e, now, backoff)
        return chosen, outcomes


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:LOG_NAMES])
    more = f", and {len(names) - LOG_NAMES} more" if len(names) > LOG_NAMES else ""
    return f" ({shown}{more})"


Reader = Callable[[Callable[[KRaftBroker], Scan]], Future[Scan]]


class IsrExpander:
    """The expander's thread over a broker shell: ``read`` is ``BrokerShell.call``,
    ``submit`` its ``submit``; ``wake`` after the image changed or an answer came."""

    def __init__(self, broker_id: int, read: Reader, submit: Callable[[object], bool], *,
                 chooser: Chooser | None = None,
                 scanner: Callable[[KRaftBroker], Scan] = scan, interval_s: float = INTERVAL_S,
                 min_gap_s: float = MIN_GAP_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.broker_id = broker_id
        self.read = read
        self.submit = submit
        self.chooser = chooser or Chooser()
        self.scanner = scanner
        """What a round reads on the core's thread: ``scan``, or ``isr_changes``' scan of
        only what changed."""
        self.interval_s = interval_s
        self.min_gap_s = min_gap_s
        self.clock = clock
        self.prefix = f"[broker {broker_id}]"
        self._lock = threading.Lock()  # the chooser: this thread's rounds, the admin's holds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"kcontrol-kraft-broker-{broker_id}-isr")

    def start(self) -> IsrExpander:
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def hold(self, key: PartitionKey, brokers: Iterable[int], seconds: float) -> None:
        """Keep ``brokers`` out of ``key``'s ISR for ``seconds`` (any thread)."""
        with self._lock:
            self.chooser.hold(key, brokers, self.clock() + seconds)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.ident is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.round()
            except Exception:  # noqa: BLE001 -- try again next round
                log.exception("%s ISR expansion round failed", self.prefix)
            self._stop.wait(self.min_gap_s)

    def round(self) -> list[Expansion]:
        """One round: read the core, choose, ask; what was asked."""
        try:
            s = self.read(self.scanner).result(READ_TIMEOUT_S)
        except RuntimeError:  # the shell stopped or its queue is full: next round
            return []
        except TimeoutError:
            log.warning("%s ISR expansion: the core did not answer a read in %g s",
                        self.prefix, READ_TIMEOUT_S)
            return []
        with self._lock:
            chosen, outcomes = self.chooser.choose(s, self.clock())
        if outcomes:
            log.info("%s ISR expansion outcome: %s", self.prefix, outcomes)
        asked = _submit_all(chosen, self.submit)
        if asked:
            log.info("%s ISR expansion asked for %d partition(s)%s", self.prefix, len(asked),
                     _names([str(e) for e in asked]))
        return asked


def _submit_all(chosen: Iterable[Expansion], submit: Callable[[object], bool]
                ) -> list[Expansion]:
    """The round's asks as one ``IsrChangesWanted``: one AlterPartition for all of them."""
    asks = list(chosen)
    if not asks:
        return []
    event = IsrChangesWanted(tuple(IsrChangeWanted(e.key[0], e.key[1], e.new_isr)
                                   for e in asks))
    return asks if submit(event) else []  # not submitted: the shell stopped
