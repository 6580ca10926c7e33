"""The quorum controller of seed 004: one handler per request, its records appended to the
metadata log, its answers held until those records are committed.

Two images (seed 004's "Persistence and Visibility"):

* ``committed`` -- the last committed state. A standby's only image; what ``List...``
  requests read; what every answer reflects once it is sent.
* ``image`` -- the active controller's "future state": ``committed`` plus the records it has
  appended and not yet seen committed. Handlers decide from it, so two requests in a row see
  each other's effect. Losing leadership drops it (``image = committed``): the uncommitted
  records are gone with the log's tail.

Nothing uncommitted is visible: an answer waits until every record appended before it is
committed (``_waiting``), even an answer that appended nothing, because it was decided on
the future state. Leases (when each broker last made contact) are the active controller's
soft state, never logged; a new active controller starts every registered broker's lease
afresh, as Kafka does. So are the controlled shutdowns waiting (``shutdown_offsets``) and the
metadata offsets brokers reported (``reported``): a new active controller starts without
them, as Kafka's new ``BrokerHeartbeatManager`` does.

Every change of a broker's membership (unregistered, fenced, active, controlled shutdown) is
checked against ``MEMBERSHIP_TABLE`` where the record is applied (``_apply``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from fsm.kraft.controller.brokers import expire_leases
from fsm.kraft.controller.config import QuorumControllerConfig
from fsm.kraft.controller.events import (
    AppendRecords,
    Committed,
    ControllerRequest,
    LeadershipGained,
    LeadershipLost,
    MembershipChange,
    Replayed,
    Reply,
    SnapshotLoaded,
    Tick,
)
from fsm.kraft.controller.handlers import HANDLERS
from fsm.kraft.controller.not_controller import not_controller, not_controller_for
from fsm.kraft.image import MetadataImage, image_from_records, membership_of
from fsm.kraft.image.brokers import BrokerRegistration
from fsm.kraft.membership_states import MEMBERSHIP_TABLE, BrokerMembership
from fsm.kraft.records.values import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

_BROKER_RECORDS = (RegisterBrokerRecord, UnregisterBrokerRecord, FenceBrokerRecord,
                   UnfenceBrokerRecord, BrokerRegistrationChangeRecord)


def _membership(reg: BrokerRegistration | None) -> BrokerMembership:
    return BrokerMembership(membership_of(reg))


def _broker_of(record: Any) -> int:
    return record.id if isinstance(record, FenceBrokerRecord | UnfenceBrokerRecord) \
        else record.broker_id


class QuorumController:
    def __init__(self, config: QuorumControllerConfig) -> None:
        self.config = config
        self.committed = MetadataImage()
        self.image = self.committed
        self.active = False
        self.epoch = -1
        self.next_offset = 0
        """The offset the next record takes (the log end offset)."""
        self.committed_offset = -1
        self.now_ms = 0
        self.leases: dict[int, int] = {}
        """Broker id -> the time its lease runs out (the active controller's soft state)."""
        self.shutdown_offsets: dict[int, int] = {}
        """Broker id -> its controlled-shutdown offset, while its controlled shutdown waits for
        the other active brokers to reach it (soft state, as Kafka's
        ``BrokerHeartbeatManager``; ``fsm.kraft.controller.brokers``)."""
        self.reported: dict[int, int] = {}
        """Broker id -> the metadata offset an active broker last reported, kept only while a
        controlled shutdown waiting may count on it (soft state)."""
        self._uncommitted: deque[tuple[int, tuple[Any, ...]]] = deque()
        self._waiting: deque[tuple[int, Reply]] = deque()
        self._out: list[Any] = []

    # -- the one entry point ------------------------------------------------------------------
    def handle(self, event: Any) -> list[Any]:
        self._out = []
        _EVENTS[type(event)](self, event)
        out, self._out = self._out, []
        return out

    # -- reading, for handlers --------------------------------------------------------------
    def usable(self, broker_id: int) -> bool:
        """Registered, unfenced, not in controlled shutdown: may lead, may join an ISR."""
        reg = self.image.brokers.get(broker_id)
        return reg is not None and not reg.fenced and not reg.in_controlled_shutdown

    def has_live_session(self, broker_id: int) -> bool:
        """Registered, unfenced (in the future image) and its lease still running: Kafka's
        valid session (``BrokerHeartbeatManager.hasValidSession``: false for a fenced broker,
        else the last contact within the session timeout). A fenced broker -- one that
        finished its controlled shutdown, or was fenced by its lease or at its wish -- has
        none, however long its lease would still run."""
        reg = self.image.brokers.get(broker_id)
        if reg is None or reg.fenced:
            return False
        deadline = self.leases.get(broker_id)
        return deadline is not None and self.now_ms < deadline

    def touch(self, broker_id: int) -> None:
        self.leases[broker_id] = self.now_ms + self.config.session_timeout_ms

    # -- writing, for handlers --------------------------------------------------------------
    def append(self, records: list[Any], reason: str) -> None:
        """Apply ``records`` to the future image and append them as one batch."""
        if not records:
            return
        base = self.next_offset
        for i, r in enumerate(records):
            self._apply(self.image, r, base + i, reason)
        self.next_offset = base + len(records)
        batch = tuple(records)
        self._uncommitted.append((self.next_offset - 1, batch))
        self._out.append(AppendRecords(self.epoch, base, batch))

    def reply(self, token: Hashable, response: Any) -> None:
        """Answer once everything appended so far is committed."""
        last = self.next_offset - 1
        if last <= self.committed_offset:
            self._out.append(Reply(token, response))
        else:
            self._waiting.append((last, Reply(token, response)))

    def respond_now(self, token: Hashable, response: Any) -> None:
        """Answer at once: for reads of the committed image, which show nothing uncommitted."""
        self._out.append(Reply(token, response))

    def _apply(self, image: MetadataImage, record: Any, offset: int, reason: str) -> None:
        if not isinstance(record, _BROKER_RECORDS):
            image.apply(record)
            return
        broker = _broker_of(record)
        before = _membership(image.brokers.get(broker))
        image.apply(record)
        after = _membership(image.brokers.get(broker))
        if before is not after or isinstance(record, RegisterBrokerRecord):
            MEMBERSHIP_TABLE.check(f"broker {broker}", before, after)
            if image is self.image and self.active:
                self._out.append(MembershipChange(broker, before.value, after.value, offset,
                                                  reason))

    # -- the log's events -------------------------------------------------------------------
    def _on_gained(self, e: LeadershipGained) -> None:
        self.active, self.epoch, self.now_ms = True, e.epoch, e.now_ms
        self.next_offset = e.log_end_offset
        # Everything before the log end is committed (the event's contract), the new epoch's
        # LeaderChange control record included, which no one replays here: an answer that
        # appends nothing must not wait for it to commit again.
        self.committed_offset = max(self.committed_offset, e.log_end_offset - 1)
        self.image = self.committed.copy()
        self.leases, self.shutdown_offsets, self.reported = {}, {}, {}
        for b in self.committed.brokers:
            self.touch(b)

    def _on_lost(self, e: LeadershipLost) -> None:
        """Back to the last committed state; answers still waiting were decided on records
        that are lost, so they fail with NOT_CONTROLLER (the client retries elsewhere)."""
        self.active, self.epoch = False, max(self.epoch, e.epoch)
        self.image = self.committed
        self._uncommitted.clear()
        self.next_offset = self.committed_offset + 1
        self.leases, self.shutdown_offsets, self.reported = {}, {}, {}
        waiting, self._waiting = self._waiting, deque()
        for _, r in waiting:
            self._out.append(Reply(r.token, not_controller(r.response)))

    def _on_committed(self, e: Committed) -> None:
        if e.offset <= self.committed_offset:
            return
        self.committed_offset = e.offset
        while self._uncommitted and self._uncommitted[0][0] <= e.offset:
            last, batch = self._uncommitted.popleft()
            base = last - len(batch) + 1
            for i, r in enumerate(batch):
                self._apply(self.committed, r, base + i, "committed")
        while self._waiting and self._waiting[0][0] <= e.offset:
            self._out.append(self._waiting.popleft()[1])

    def _on_replayed(self, e: Replayed) -> None:
        """A standby replays committed records (the active one learns of its own commits by
        ``Committed``)."""
        if self.active:
            raise ValueError("the active controller replays its own records, not the log's")
        for i, r in enumerate(e.records):
            self._apply(self.committed, r, e.base_offset + i, "replayed")
        self.committed_offset = e.base_offset + len(e.records) - 1
        self.next_offset = self.committed_offset + 1

    def _on_snapshot(self, e: SnapshotLoaded) -> None:
        """A standby whose log was replaced by the leader's snapshot starts over from it."""
        if self.active:
            raise ValueError("the active controller never loads a snapshot over its image")
        self.committed = e.image if e.image is not None else image_from_records(e.records)
        self.image = self.committed
        self.committed_offset = e.end_offset - 1
        self.next_offset = e.end_offset

    def _on_tick(self, e: Tick) -> None:
        self.now_ms = max(self.now_ms, e.now_ms)
        if self.active:
            expire_leases(self)

    def _on_request(self, e: ControllerRequest) -> None:
        if not self.active:
            self._out.append(Reply(e.token, not_controller_for(e.request)))
            return
        HANDLERS[type(e.request)](self, e.token, e.request)

    # -- for the checker and the tests --------------------------------------------------------
    @property
    def waiting_answers(self) -> int:
        """How many answers wait for the records before them to commit."""
        return len(self._waiting)

    def answers_waiting_below(self, offset: int) -> int:
        """How many answers wait for a record before ``offset`` (a live audit passes the
        log's high watermark: such an answer waits for what is already committed)."""
        return sum(1 for last, _ in self._waiting if last < offset)

    def copy(self) -> QuorumController:
        """An independent controller in the same state (for a checker that branches worlds):
        the images are copied (a standby's one image stays one), records and answers are
        immutable and shared."""
        other = QuorumController.__new__(QuorumController)
        other.__dict__.update(self.__dict__)
        other.committed = self.committed.copy()
        other.image = other.committed if self.image is self.committed else self.image.copy()
        other.leases = dict(self.leases)
        other.shutdown_offsets = dict(self.shutdown_offsets)
        other.reported = dict(self.reported)
        other._uncommitted = deque(self._uncommitted)
        other._waiting = deque(self._waiting)
        other._out = []
        return other

    def membership(self, broker_id: int) -> BrokerMembership:
        return _membership(self.image.brokers.get(broker_id))

    def registration(self, broker_id: int) -> BrokerRegistration | None:
        return self.image.brokers.get(broker_id)

    def next_deadline(self) -> int | None:
        """The earliest lease that can still run out on a broker that is not fenced."""
        live = [d for b, d in self.leases.items()
                if (reg := self.image.brokers.get(b)) is not None and not reg.fenced]
        return min(live, default=None)


_EVENTS: dict[type, Callable[[QuorumController, Any], None]] = {
    ControllerRequest: QuorumController._on_request,
    Tick: QuorumController._on_tick,
    LeadershipGained: QuorumController._on_gained,
    LeadershipLost: QuorumController._on_lost,
    Committed: QuorumController._on_committed,
    Replayed: QuorumController._on_replayed,
    SnapshotLoaded: QuorumController._on_snapshot,
}
"""Event class -> handler: the controller's one dispatch."""
