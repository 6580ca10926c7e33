"""The broker's lifecycle through the broker-session table (``fsm.broker_states``).

Every state change goes through ``BROKER_TABLE.check``. Each handler decides, from the
current state, whether the event means anything; an event that does not (a second
``BrokerStarted``, a ``BrokerRegistered`` nobody asked for, a retry timer after the
shutdown finished) is ignored with a log record, so outside input never reaches ``check``
with an illegal pair.

    NOT_RUNNING -BrokerStarted-> STARTING                        (LoadBrokerMetadata)
    STARTING -BrokerMetadataLoaded-> RECOVERY: startup recovery  (Register)
    RECOVERY -BrokerRegistered(epoch)-> RUNNING
    RUNNING -ShutdownRequested(controlled)-> PENDING_CONTROLLED_SHUTDOWN
                                  (SendControlledShutdown + CONTROLLED_SHUTDOWN_RETRY timer)
    PENDING -answer NONE, nothing remaining | retries exhausted-> SHUTTING_DOWN (Exit)
    RUNNING/STARTING/RECOVERY -ShutdownRequested (uncontrolled, or not registered)->
                                  SHUTTING_DOWN (Exit)
    RUNNING/PENDING -BrokerSessionExpired-> RECOVERY: epoch and metadata cache cleared
                                  (LoadBrokerMetadata), recovery again, Register -> a new epoch
    any but NOT_RUNNING -BrokerCrashed-> NOT_RUNNING, everything forgotten

After ``Exit`` the executor reports the process gone with ``BrokerCrashed`` (the table's
SHUTTING_DOWN -> NOT_RUNNING; a clean exit and a crash leave the same nothing).

A session expiry starts a new incarnation with an empty metadata cache, as a restart does:
while the broker was unregistered the controller sent it nothing, so a topic deleted
meanwhile would stay in the old cache for good (the controller's full UpdateMetadata to a
joining broker names only the partitions that exist). Found by the checker (``deep``,
random walk seed 14; transcript ``metadata_after_session_expiry.txt``).

A SIGTERM is not forgotten by a session expiry: the broker re-registers (its new epoch must
be known to the controller) and then asks for a controlled shutdown again, with the new
epoch and a fresh retry budget. An answer stamped with another epoch is ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.broker.isr import propagate
from fsm.broker.metadata_cache import MetadataCache
from fsm.broker.recovery import recover
from fsm.broker_states import BrokerState
from fsm.effects import (
    BrokerEffect,
    CancelTimer,
    Exit,
    LoadBrokerMetadata,
    Register,
    SendControlledShutdown,
    StartTimer,
)
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerSessionExpired,
    ControlledShutdownAnswered,
    ShutdownRequested,
    TimerFired,
    TimerKind,
)
from fsm.requests import ControlledShutdownRequest, ControlledShutdownResponse

if TYPE_CHECKING:
    from fsm.broker.core import BrokerCore

B = BrokerState
RETRY = TimerKind.CONTROLLED_SHUTDOWN_RETRY


def started(core: BrokerCore) -> list[BrokerEffect]:
    if core._state is not B.NOT_RUNNING:
        return core._ignore("BrokerStarted")
    core._move(B.STARTING)
    return [LoadBrokerMetadata()]


def metadata_loaded(core: BrokerCore, ev: BrokerMetadataLoaded) -> list[BrokerEffect]:
    if core._state is B.STARTING:
        core._move(B.RECOVERY)
    elif core._state is not B.RECOVERY or core._registering:
        return core._ignore("BrokerMetadataLoaded")
    recover(core, ev)
    core._registering = True
    return [Register()]


def registered(core: BrokerCore, ev: BrokerRegistered) -> list[BrokerEffect]:
    epoch = ev.epoch
    if core._state is not B.RECOVERY or not core._registering:
        return core._ignore("BrokerRegistered")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
        core._record("rejected", "registration", f"invalid broker epoch {epoch!r}")
        return []
    core._registering = False
    core._epoch = epoch
    core._applied = None
    core._move(B.RUNNING)
    if core._shutdown_wanted:
        return _begin_controlled_shutdown(core)
    return []


def shutdown_requested(core: BrokerCore, ev: ShutdownRequested) -> list[BrokerEffect]:
    state = core._state
    if state in (B.STARTING, B.RECOVERY):
        return _exit(core, [])
    if state is B.RUNNING:
        cfg = core.config
        if ev.controlled and cfg.controlled_shutdown_enable \
                and cfg.controlled_shutdown_max_retries > 0:
            return _begin_controlled_shutdown(core)
        return _exit(core, [])
    if state is B.PENDING_CONTROLLED_SHUTDOWN and not ev.controlled:
        return _exit(core, [CancelTimer(RETRY)])
    return core._ignore("ShutdownRequested")


def controlled_shutdown_answered(core: BrokerCore,
                                 ev: ControlledShutdownAnswered) -> list[BrokerEffect]:
    if core._state is not B.PENDING_CONTROLLED_SHUTDOWN:
        return core._ignore("ControlledShutdownAnswered")
    stamped = ev.broker_epoch
    if stamped is not None and stamped != core._epoch:
        return core._ignore(f"ControlledShutdownAnswered for broker epoch {stamped}")
    response = ev.response
    if not isinstance(response, ControlledShutdownResponse):
        return core._ignore("malformed ControlledShutdown answer")
    if response.error == ErrorCode.NONE and response.remaining == ():
        return _exit(core, [CancelTimer(RETRY)])
    core._record("ignored", "controlled shutdown",
                 f"not done ({response.error!r}, remaining {response.remaining!r}); "
                 f"waiting for the retry timer")
    return []


def timer_fired(core: BrokerCore, ev: TimerFired) -> list[BrokerEffect]:
    if ev.kind is TimerKind.ISR_CHANGE_PROPAGATION:
        return propagate(core)
    if ev.kind is not RETRY or core._state is not B.PENDING_CONTROLLED_SHUTDOWN:
        return core._ignore(f"timer {getattr(ev.kind, 'value', ev.kind)}")
    if core._cs_attempts >= core.config.controlled_shutdown_max_retries:
        core._record("transition", core._label, "controlled shutdown retries exhausted")
        return _exit(core, [])
    core._cs_attempts += 1
    return _send_controlled_shutdown(core)


def session_expired(core: BrokerCore, ev: BrokerSessionExpired) -> list[BrokerEffect]:
    state = core._state
    if state in (B.RUNNING, B.PENDING_CONTROLLED_SHUTDOWN):
        effects: list[BrokerEffect] = []
        if state is B.PENDING_CONTROLLED_SHUTDOWN:
            effects.append(CancelTimer(RETRY))
        core._move(B.RECOVERY)
        core._epoch = None
        core._applied = None
        core._cache = MetadataCache()
        core._cs_attempts = 0
        core._registering = False
        effects.append(LoadBrokerMetadata())
        return effects
    if state is B.RECOVERY and core._registering:
        core._record("transition", core._label, "session expired while registering: again")
        return [Register()]
    return core._ignore("BrokerSessionExpired")


def crashed(core: BrokerCore) -> list[BrokerEffect]:
    if core._state is B.NOT_RUNNING:
        return core._ignore("BrokerCrashed")
    core._move(B.NOT_RUNNING)
    core._forget_everything()
    return []


def _begin_controlled_shutdown(core: BrokerCore) -> list[BrokerEffect]:
    core._move(B.PENDING_CONTROLLED_SHUTDOWN)
    core._shutdown_wanted = True
    core._cs_attempts = 1
    return _send_controlled_shutdown(core)


def _send_controlled_shutdown(core: BrokerCore) -> list[BrokerEffect]:
    assert core._epoch is not None  # PENDING_CONTROLLED_SHUTDOWN is only reached registered
    request = ControlledShutdownRequest(core.config.broker_id, core._epoch)
    return [SendControlledShutdown(request),
            StartTimer(RETRY, core.config.controlled_shutdown_retry_backoff_ms)]


def _exit(core: BrokerCore, effects: list[BrokerEffect]) -> list[BrokerEffect]:
    core._move(B.SHUTTING_DOWN)
    core._cs_attempts = 0
    effects.append(Exit())
    return effects
