"""A registered broker as the image holds it (``RegisterBrokerRecord`` and the fencing and
controlled-shutdown changes after it)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import BrokerEndpoint, BrokerFeature, RegisterBrokerRecord


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    epoch: int
    incarnation_id: Uuid
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False

    @staticmethod
    def of(record: RegisterBrokerRecord) -> BrokerRegistration:
        return BrokerRegistration(record.broker_id, record.broker_epoch, record.incarnation_id,
                                  record.end_points, record.features, record.rack,
                                  record.fenced, record.in_controlled_shutdown and not record.fenced)

    def record(self) -> RegisterBrokerRecord:
        return RegisterBrokerRecord(self.broker_id, self.incarnation_id, self.epoch,
                                    self.end_points, self.features, self.rack, self.fenced,
                                    self.in_controlled_shutdown)

    def fence(self) -> BrokerRegistration:
        """Fenced; a fence ends a controlled shutdown (the broker is gone either way)."""
        return replace(self, fenced=True, in_controlled_shutdown=False)

    def unfence(self) -> BrokerRegistration:
        return replace(self, fenced=False)

    def enter_controlled_shutdown(self) -> BrokerRegistration:
        """In controlled shutdown, unless fenced: a fenced broker is never in controlled
        shutdown (as after ``fence``, and as ``of`` reads a registration), so the image
        holds no state that its snapshot would not rebuild."""
        return self if self.fenced else replace(self, in_controlled_shutdown=True)


def membership_of(registration: BrokerRegistration | None) -> str:
    """The membership state the flags spell, by the names of ``BrokerMembership``'s values:
    unregistered, fenced, controlled_shutdown or active (fenced wins over controlled
    shutdown)."""
    if registration is None:
        return "unregistered"
    if registration.fenced:
        return "fenced"
    if registration.in_controlled_shutdown:
        return "controlled_shutdown"
    return "active"
