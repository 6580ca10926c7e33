"""What a KRaft run reached, against what there is to reach: every move of the two KRaft
tables, every request the quorum controller handles, every record type it writes for seed
004's protocol, every way it decides a new incarnation's registration. The lifecycle's
moves into NOT_RUNNING are the dying core's: the world hands it ``Crashed`` when it crashes
a broker and ``Exited`` when one exits, before a fresh core takes its place; ``kraft-crash``
crashes a broker in each live state. RUNNING -> SHUTTING_DOWN (SIGTERM with
``controlled.shutdown.enable=false``) is taken by ``kraft-stop``. Every event the
broker core handles is expected too, but a client's ``MetadataRequest`` (no client asks the
world's brokers; the live broker's tests do); ``MetadataSnapshotLoaded`` only on the Raft
log with snapshots (``kraft-snapshot``)."""

from __future__ import annotations

from fsm.kraft.broker.core import HANDLED_EVENTS
from fsm.kraft.broker.events import ControllerUnreachable
from fsm.kraft.broker_lifecycle_states import KRAFT_BROKER_TABLE
from fsm.kraft.controller.brokers import REGISTRATION_REASONS
from fsm.kraft.controller.handlers import HANDLERS
from fsm.kraft.controller.requests import AlterPartitionRequest
from fsm.kraft.membership_states import MEMBERSHIP_TABLE

REGISTRATION_DECISIONS = (*REGISTRATION_REASONS, "refused: DUPLICATE_BROKER_REGISTRATION")
"""How the controller decides a BrokerRegistration of a new incarnation: a first registration,
one replacing an incarnation whose lease ran out, one replacing a fenced incarnation whose
lease still runs (a restart right after a controlled shutdown: ``kraft-restart``), and the
refusal while the old one has a valid session. (A retry of the same incarnation writes
nothing; other refusals need a wrong cluster id or features, which no world broker sends.)"""

RECORDS = ("RegisterBrokerRecord", "UnregisterBrokerRecord", "TopicRecord", "PartitionRecord",
           "PartitionChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
           "RemoveTopicRecord", "BrokerRegistrationChangeRecord")
"""The record types the quorum controller writes (configs only with CreateTopics configs)."""


SEVERAL = ("request", "AlterPartitionRequest", "of several partitions")
"""An AlterPartition carrying more than one partition (a leader's wishes asked together:
e1f369a's batched request; ``kraft-isr-retry`` sends one when two lost wishes are asked
again at one heartbeat)."""
ALTER_LOST = ("broker-event", "ControllerUnreachable", "of an AlterPartitionRequest")
"""A leader's AlterPartition lost on its way: the wish is queued and asked again at the next
heartbeat (``alter_partition.lost`` and ``retry``; ``kraft-isr-retry``)."""


def request_items(request: object) -> list[tuple[str, ...]]:
    """What the active controller handling ``request`` reached."""
    out = [("request", type(request).__name__)]
    if isinstance(request, AlterPartitionRequest) and len(request.partitions) > 1:
        out.append(SEVERAL)
    return out


def broker_event_items(event: object) -> list[tuple[str, ...]]:
    """What a broker core handling ``event`` reached."""
    out = [("broker-event", type(event).__name__)]
    if isinstance(event, ControllerUnreachable) and \
            isinstance(event.request, AlterPartitionRequest):
        out.append(ALTER_LOST)
    return out


def expected() -> set[tuple[str, ...]]:
    out = {("kraft-broker-membership", a.value, b.value) for a, b in MEMBERSHIP_TABLE.pairs}
    out |= {("kraft-broker-lifecycle", a.value, b.value) for a, b in KRAFT_BROKER_TABLE.pairs}
    out |= {("request", t.__name__) for t in HANDLERS}
    out |= {("record", r) for r in RECORDS}
    out |= {("broker-event", e) for e in HANDLED_EVENTS if e != "MetadataRequest"}
    out |= {("kraft-registration", r) for r in REGISTRATION_DECISIONS}
    out |= {SEVERAL, ALTER_LOST}
    return out


def unreached(reached: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return sorted(expected() - reached)


def lines(reached: set[tuple[str, ...]]) -> list[str]:
    want = expected()
    got = want & reached
    out = [f"coverage: {len(got)} of {len(want)} (table moves, requests handled, records "
           f"written, broker events handled, registration decisions, AlterPartition paths)"]
    out += ["  not reached: " + " ".join(item) for item in sorted(want - reached)]
    return out
