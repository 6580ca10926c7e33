"""The KRaft broker membership table: a broker as the quorum controller sees it (seed 004).

Seed 004 ("The Three Cluster Membership States") names three states -- unregistered,
registered but fenced, registered and active -- and "Controlled Shutdown" adds the one Kafka's
controller keeps beside them (``BrokerControlState.CONTROLLED_SHUTDOWN``):

* ``UNREGISTERED`` -- no registration: the controller knows no endpoints, no epoch, no
  incarnation id. The broker is not part of the cluster.
* ``FENCED`` -- registered (endpoints, rack, broker epoch, incarnation id are kept) but not
  available: not in MetadataResponse, in no ISR, never chosen leader. A new registration is
  fenced; so is a broker whose lease ran out (a crashed broker stays here).
* ``ACTIVE`` -- registered and unfenced: in MetadataResponse, may lead and be in ISRs.
* ``CONTROLLED_SHUTDOWN`` -- active, but it asked to shut down (heartbeat ``WantShutDown``)
  while leading partitions: the controller has moved its leaderships off it (the first of the
  two steps, Kafka's ``BrokerControlState.CONTROLLED_SHUTDOWN``). It leaves by the second
  (Kafka's ``SHUTDOWN_NOW``): a later heartbeat, once it leads nothing and every other active
  broker has replayed up to the offset of that move, fences it and is answered
  ``ShouldShutDown`` -- so a broker told to stop is already fenced in the committed image.

The values are lower case, the seed's words -- unlike the other tables, whose values are their
members' names -- because they are what ``fsm.kraft.image.membership_of`` spells from a
registration's flags, so ``BrokerMembership(membership_of(reg))`` is the state
the image holds (``tests/unit/kraft`` holds the two to each other).

Moves are the controller's, one per record it writes: ``RegisterBrokerRecord`` (the controller
always writes it fenced), ``UnfenceBrokerRecord`` / ``FenceBrokerRecord`` (or the fenced field
of ``BrokerRegistrationChangeRecord``), ``UnregisterBrokerRecord``. Entering controlled
shutdown is in-memory state of the active controller in seed 004; released Kafka records it
(``BrokerRegistrationChangeRecord``'s ``InControlledShutdown``, which ``fsm.kraft.image``
replays). Each move's reason is on its line in the table below.

Not moves (the core must not call ``check`` for them; no record is written):

* a heartbeat that changes nothing: FENCED and not yet eligible (``WantFence`` or metadata
  offset behind its registration record), ACTIVE and wanting nothing, CONTROLLED_SHUTDOWN
  still waiting (leaderships to move, or an active broker behind its controlled-shutdown
  offset), and a new active controller's heartbeat putting a broker the image already has in
  CONTROLLED_SHUTDOWN back into it (its leaderships move again; the mark is not rewritten);
* **FENCED + WantShutDown**: Kafka's controller grants a fenced broker an immediate shutdown
  (``SHUTDOWN_NOW``, answered ``ShouldShutDown``) and writes nothing -- it has no leaderships
  to move and is already fenced, so it *stays* FENCED; it never enters CONTROLLED_SHUTDOWN;
* ``UnregisterBroker`` of a broker that is not registered (the seed answers NONE): no record.

Re-registration is a move even when the state stays FENCED: a ``BrokerRegistrationRequest``
of a new incarnation id once the old one has no valid session (it is fenced -- by its lease,
at its wish, or at the end of its controlled shutdown -- or its lease is gone) writes a new
``RegisterBrokerRecord`` with a new, higher broker epoch, and a registration is always
fenced. (The same incarnation resent after a lost answer gets its epoch back and writes
nothing.) So FENCED -> FENCED is declared, and ACTIVE and
CONTROLLED_SHUTDOWN fall back to FENCED on it. No state reaches ACTIVE or CONTROLLED_SHUTDOWN
without going through FENCED: unfencing needs a heartbeat caught up with the registration.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class BrokerMembership(enum.Enum):
    UNREGISTERED = "unregistered"
    FENCED = "fenced"
    ACTIVE = "active"
    CONTROLLED_SHUTDOWN = "controlled_shutdown"


_M = BrokerMembership

MEMBERSHIP_TABLE: TransitionTable[BrokerMembership] = table(
    "kraft-broker-membership",
    BrokerMembership,
    _M.UNREGISTERED,
    {
        _M.UNREGISTERED: [
            _M.FENCED,  # BrokerRegistration: RegisterBrokerRecord, new epoch, fenced
        ],
        _M.FENCED: [
            _M.FENCED,  # re-registration (a new incarnation: a fenced one has no session): new epoch
            _M.ACTIVE,  # heartbeat WantFence=false, metadata offset >= its registration record's
            _M.UNREGISTERED,  # UnregisterBroker: UnregisterBrokerRecord
        ],
        _M.ACTIVE: [
            _M.FENCED,  # lease expired, WantFence, SHUTDOWN_NOW at once (leads nothing), re-registered
            _M.CONTROLLED_SHUTDOWN,  # heartbeat WantShutDown while it leads: leaderships moved
            _M.UNREGISTERED,  # UnregisterBroker: UnregisterBrokerRecord
        ],
        _M.CONTROLLED_SHUTDOWN: [
            # SHUTDOWN_NOW (leads nothing, active brokers past its controlled-shutdown offset:
            # fenced in the heartbeat answered ShouldShutDown), lease expired, re-registered
            _M.FENCED,
            # UnregisterBroker between the two steps: Kafka's unregisterBroker does not look
            # at the broker's state (kraft-admin: unregister broker 3 during its shutdown)
            _M.UNREGISTERED,
        ],
    },
)


def member_label(broker_id: int) -> str:
    """How a broker is named in the membership table's errors: ``broker 2``."""
    return f"broker {broker_id}"
