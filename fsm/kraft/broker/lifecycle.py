"""The KRaft broker's lifecycle (seed 004, "The Broker State Machine"; Kafka's
``BrokerLifecycleManager``), every move through ``KRaftBroker._move``:

    NOT_RUNNING -Start-> STARTING: BrokerRegistration (incarnation id of this process)
    STARTING: heartbeats with want_fence=True; an answer is_caught_up -> RECOVERY
    RECOVERY: local replicas the metadata no longer assigns are deleted, the assigned ones
        start (``replay.recover``); heartbeats with want_fence=False; an answer
        is_fenced=False -> RUNNING
    RUNNING -SigTerm-> PENDING_CONTROLLED_SHUTDOWN: heartbeats with want_shut_down=True,
        every ``shutdown_heartbeat_ms``; an answer should_shut_down -> SHUTTING_DOWN (Exit)
    STARTING, RECOVERY -SigTerm-> SHUTTING_DOWN (Exit): nothing to hand over
    RUNNING -SigTerm, controlled_shutdown_enable off-> SHUTTING_DOWN (Exit)
    STARTING, RECOVERY -no registration initial_registration_timeout_ms after Start->
        SHUTTING_DOWN (Exit), as Kafka's RegistrationTimeoutEvent
    SHUTTING_DOWN -Exited-> NOT_RUNNING: the process ended (the shell's last event)
    any but NOT_RUNNING -Crashed-> NOT_RUNNING: kill -9 (the checker's world sends it)

In NOT_RUNNING the core holds what a fresh one does (``KRaftBroker._forget``): no process,
no memory, so a ``Start`` is a new process's. Kafka's KRaft broker never reports NOT_RUNNING
at the end: its ``BrokerLifecycleManager`` stays SHUTTING_DOWN after ``close()`` (only the
server's status becomes SHUTDOWN); ZooKeeper mode's ``KafkaServer.shutdown`` ends with
``BrokerState.NOT_RUNNING``. We follow the seed's table, SHUTTING_DOWN -> NOT_RUNNING, and
ZooKeeper mode's last step.

Communication, as Kafka's: one registration or heartbeat in flight at a time. The answer
arms the timer (``ScheduleHeartbeat``); ``HeartbeatDue`` sends a heartbeat when registered,
else the registration again. A failed or lost request is retried after
``heartbeat_interval_ms``, never at once. A registration is always sent with this process's
incarnation id, so a retry after a lost answer is the same registration and gets the same
epoch (the controller's idempotence). A successful registration is followed by a heartbeat
at once.

STALE_BROKER_EPOCH or BROKER_ID_NOT_REGISTERED on a heartbeat: our registration is gone
(unregistered) or superseded. Kafka's ``BrokerLifecycleManager`` only logs heartbeat errors
and heartbeats again with the same epoch, forever; it re-registers only when told to
(``resendBrokerRegistration``, used for the JBOD directory change). We re-register at once
instead, with the same incarnation id: a broker that is alive and wants to serve should get
back into the cluster. The lifecycle does not move: the new registration is fenced, and
the controller unfences it once this broker has caught up with the new epoch's record and
heartbeats want_fence=False (in RUNNING it does, as after a lease expiry). In
PENDING_CONTROLLED_SHUTDOWN the same errors end the shutdown (SHUTTING_DOWN): a broker the
controller no longer counts leads nothing, and re-registering only to leave is pointless.
Other heartbeat errors (NOT_CONTROLLER...) are retried after the interval, as Kafka does.

Another broker's controlled shutdown waits, after its leaderships moved, until every active
broker has reported (in a heartbeat) a metadata offset at or past that move. So a broker
that replays a batch putting another broker into controlled shutdown heartbeats at once
(``metadata_fetched``) instead of at its next interval: its report is what that shutdown
waits for. Kafka's brokers report only at their interval; the request is the same.

Answers that do not belong to the request in flight (late, duplicated, or after a lost
request was given up) are ignored, and so is everything after SHUTTING_DOWN but the end of
the process (``Exited``, ``Crashed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.kraft.broker import alter_partition, replay
from fsm.kraft.broker.effects import Exit, KRaftBrokerEffect, ScheduleHeartbeat, SendToController
from fsm.kraft.broker.events import (
    Crashed,
    Exited,
    HeartbeatDue,
    MetadataFetched,
    SigTerm,
    Start,
)
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller.requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)

if TYPE_CHECKING:
    from fsm.kraft.broker.core import KRaftBroker

S = KRaftBrokerState
ALIVE = frozenset({S.STARTING, S.RECOVERY, S.RUNNING, S.PENDING_CONTROLLED_SHUTDOWN})
_REPORTING = frozenset({S.RECOVERY, S.RUNNING})  # may count as active for another's shutdown
"""The states of a process that talks to the controller."""

REGISTRATION_LOST = frozenset({ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED})


def start(core: KRaftBroker, ev: Start) -> list[KRaftBrokerEffect]:
    if core._state is not S.NOT_RUNNING:
        return core._ignore("Start")
    core._incarnation = ev.incarnation_id
    core._start_ms = ev.now_ms
    core._local = frozenset(ev.local_replicas)
    effects: list[KRaftBrokerEffect] = [core._move(S.STARTING)]
    return effects + communicate(core)


def registration_answered(core: KRaftBroker, request: BrokerRegistrationRequest,
                          response: BrokerRegistrationResponse) -> list[KRaftBrokerEffect]:
    if core._state not in ALIVE or request != core._inflight:
        return core._ignore("BrokerRegistration answer")
    core._inflight = None
    if response.error != ErrorCode.NONE:
        return _next(core, core.config.heartbeat_interval_ms, failed=True)
    core._epoch = response.broker_epoch
    core._registered_once = True
    return communicate(core)


def heartbeat_answered(core: KRaftBroker, request: BrokerHeartbeatRequest,
                       response: BrokerHeartbeatResponse) -> list[KRaftBrokerEffect]:
    state = core._state
    if state not in ALIVE or request != core._inflight:
        return core._ignore("BrokerHeartbeat answer")
    core._inflight = None
    cfg = core.config
    if response.error in REGISTRATION_LOST:
        core._epoch = None
        if state is S.PENDING_CONTROLLED_SHUTDOWN:
            return shut_down(core)
        return communicate(core)
    if response.error != ErrorCode.NONE:
        return _next(core, cfg.heartbeat_interval_ms, failed=True)
    effects: list[KRaftBrokerEffect] = []
    if state is S.STARTING:
        if response.is_caught_up:
            effects.append(core._move(S.RECOVERY))
            effects += replay.recover(core)
        return effects + _next(core, cfg.starting_heartbeat_ms)
    if state is S.RECOVERY and not response.is_fenced:
        effects.append(core._move(S.RUNNING))
    elif state is S.PENDING_CONTROLLED_SHUTDOWN:
        if response.should_shut_down:
            return shut_down(core)
        return _next(core, cfg.shutdown_heartbeat_ms)
    return effects + _next(core, cfg.heartbeat_interval_ms)


def metadata_fetched(core: KRaftBroker, ev: MetadataFetched) -> list[KRaftBrokerEffect]:
    """Replay the batch (``replay.fetched``); report at once when it put another broker into
    controlled shutdown (see the module's docstring)."""
    before = _in_controlled_shutdown(core)
    effects = replay.fetched(core, ev)
    if core._state in _REPORTING and core._epoch is not None and \
            _in_controlled_shutdown(core) - before:
        effects += report_now(core)
    return effects


def report_now(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    """The next heartbeat at once, or as soon as the one in flight is answered."""
    if core._inflight is not None:
        core._due = True
        return []
    return communicate(core)


def _in_controlled_shutdown(core: KRaftBroker) -> frozenset[int]:
    """The other brokers the image has in controlled shutdown."""
    me = core.config.broker_id
    return frozenset(b for b, reg in core._image.brokers.items()
                     if reg.in_controlled_shutdown and b != me)


def communication_lost(core: KRaftBroker, request: object) -> list[KRaftBrokerEffect]:
    if core._state not in ALIVE or request != core._inflight:
        return core._ignore(f"lost {type(request).__name__}")
    core._inflight = None
    return _next(core, core.config.heartbeat_interval_ms, failed=True)


def heartbeat_due(core: KRaftBroker, ev: HeartbeatDue) -> list[KRaftBrokerEffect]:
    if core._state not in ALIVE:
        return core._ignore("HeartbeatDue")
    if not core._registered_once and \
            ev.now_ms - core._start_ms >= core.config.initial_registration_timeout_ms:
        return shut_down(core)
    effects = alter_partition.retry(core)
    if core._inflight is not None:
        core._due = True
        return effects
    return effects + communicate(core)


def sig_term(core: KRaftBroker, ev: SigTerm) -> list[KRaftBrokerEffect]:
    state = core._state
    if state in (S.STARTING, S.RECOVERY) or \
            (state is S.RUNNING and not core.config.controlled_shutdown_enable):
        return shut_down(core)
    if state is not S.RUNNING:
        return core._ignore("SigTerm")
    effects: list[KRaftBrokerEffect] = [core._move(S.PENDING_CONTROLLED_SHUTDOWN)]
    if core._inflight is not None:  # ask as soon as the answer is in
        core._due = True
        return effects
    return effects + communicate(core)


def crashed(core: KRaftBroker, ev: Crashed) -> list[KRaftBrokerEffect]:
    if core._state is S.NOT_RUNNING:
        return core._ignore("Crashed")
    return _gone(core)


def exited(core: KRaftBroker, ev: Exited) -> list[KRaftBrokerEffect]:
    if core._state is not S.SHUTTING_DOWN:
        return core._ignore("Exited")
    return _gone(core)


def _gone(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    """The process is gone: NOT_RUNNING, and nothing it knew is kept."""
    change = core._move(S.NOT_RUNNING)
    core._forget()
    return [change]


def communicate(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    """Send the registration (not registered) or a heartbeat: the one request in flight."""
    cfg = core.config
    assert core._incarnation is not None  # only alive brokers communicate
    request: BrokerRegistrationRequest | BrokerHeartbeatRequest
    if core._epoch is None:
        request = BrokerRegistrationRequest(cfg.broker_id, cfg.cluster_id, core._incarnation,
                                            cfg.listeners, cfg.supported_features, cfg.rack)
    else:
        state = core._state
        request = BrokerHeartbeatRequest(cfg.broker_id, core._epoch, core._offset,
                                         want_fence=state is S.STARTING,
                                         want_shut_down=state is S.PENDING_CONTROLLED_SHUTDOWN)
    core._inflight = request
    core._due = False
    return [SendToController(request)]


def shut_down(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    effects: list[KRaftBrokerEffect] = [core._move(S.SHUTTING_DOWN), Exit()]
    core._inflight = None
    core._due = False
    return effects


def _next(core: KRaftBroker, delay_ms: int, *, failed: bool = False) -> list[KRaftBrokerEffect]:
    """After an answer: the next communication in ``delay_ms``, or at once when the timer
    already fired meanwhile (never at once after a failure, as Kafka)."""
    due, core._due = core._due, False
    if due and not failed:
        return communicate(core)
    return [ScheduleHeartbeat(delay_ms)]
