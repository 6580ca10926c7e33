"""The broker lifecycle follows the broker-session table; outside input never breaks it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.broker import BrokerCore
from fsm.broker_states import BROKER_TABLE, BrokerState
from fsm.effects import (
    CancelTimer,
    Exit,
    LoadBrokerMetadata,
    Register,
    Respond,
    SendControlledShutdown,
    StartTimer,
)
from fsm.errors import ErrorCode
from fsm.events import (
    BrokerCrashed,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    RequestReceived,
    ShutdownRequested,
    TimerFired,
    TimerKind,
)
from fsm.requests import ControlledShutdownRequest, ControlledShutdownResponse

from .builders import EPOCH, TP, config, lai, lai_request, loaded, running, send, um_request

B = BrokerState
RETRY = TimerKind.CONTROLLED_SHUTDOWN_RETRY
OK = ControlledShutdownAnswered(ControlledShutdownResponse(ErrorCode.NONE))
NOT_DONE = ControlledShutdownAnswered(ControlledShutdownResponse(ErrorCode.NONE, (TP,)))


def test_happy_path_through_the_table() -> None:
    core = BrokerCore(config(1))
    assert core.state is B.NOT_RUNNING
    assert core.handle(BrokerStarted()) == [LoadBrokerMetadata()]
    assert core.handle(loaded()) == [Register()]
    assert core.state is B.RECOVERY and core.epoch is None
    assert core.handle(BrokerRegistered(EPOCH)) == []
    assert core.state is B.RUNNING and core.epoch == EPOCH
    effects = core.handle(ShutdownRequested(controlled=True))
    assert effects == [SendControlledShutdown(ControlledShutdownRequest(1, EPOCH)),
                       StartTimer(RETRY, 5000)]
    assert core.state is B.PENDING_CONTROLLED_SHUTDOWN
    assert core.handle(OK) == [CancelTimer(RETRY), Exit()]
    assert core.state is B.SHUTTING_DOWN
    assert core.handle(BrokerCrashed()) == []  # the process is gone
    assert core.state is B.NOT_RUNNING


def test_requests_refused_unless_serving() -> None:
    core = BrokerCore(config(1))
    checks = [lambda: None, lambda: core.handle(BrokerStarted()),
              lambda: core.handle(loaded())]
    for step in checks:
        step()
        response = send(core, um_request(broker_epoch=EPOCH))
        assert response.error is ErrorCode.BROKER_NOT_AVAILABLE
        assert core.metadata_cache.controller_id is None
    core.handle(BrokerRegistered(EPOCH))
    core.handle(ShutdownRequested(controlled=True))
    assert send(core, um_request()).error is ErrorCode.NONE  # pending shutdown still serves
    core.handle(ShutdownRequested(controlled=False))
    assert core.state is B.SHUTTING_DOWN
    response = send(core, lai_request(lai()))
    assert response.error is ErrorCode.BROKER_NOT_AVAILABLE
    assert response.partition_errors == ((TP, ErrorCode.BROKER_NOT_AVAILABLE),)
    assert core.replica(TP) is None


def test_controlled_shutdown_retries_are_bounded() -> None:
    core = running(controlled_shutdown_max_retries=3, controlled_shutdown_retry_backoff_ms=10)
    sent = 0
    effects = core.handle(ShutdownRequested())
    for _ in range(10):
        sent += sum(isinstance(e, SendControlledShutdown) for e in effects)
        if core.state is not B.PENDING_CONTROLLED_SHUTDOWN:
            break
        assert core.handle(NOT_DONE) == []  # not done: wait for the timer
        effects = core.handle(TimerFired(RETRY))
    assert sent == 3
    assert core.state is B.SHUTTING_DOWN and effects == [Exit()]
    assert core.handle(TimerFired(RETRY)) == []  # a late timer is ignored


def test_failed_answer_then_success_on_retry() -> None:
    core = running()
    core.handle(ShutdownRequested())
    core.handle(ControlledShutdownAnswered(ControlledShutdownResponse(
        ErrorCode.STALE_BROKER_EPOCH)))
    assert core.state is B.PENDING_CONTROLLED_SHUTDOWN
    effects = core.handle(TimerFired(RETRY))
    assert effects[0] == SendControlledShutdown(ControlledShutdownRequest(1, EPOCH))
    assert core.shutdown_attempts == 2
    assert core.handle(OK)[-1] == Exit()


def test_uncontrolled_and_early_shutdowns() -> None:
    core = running()
    assert core.handle(ShutdownRequested(controlled=False)) == [Exit()]
    core = running(controlled_shutdown_enable=False)
    assert core.handle(ShutdownRequested(controlled=True)) == [Exit()]
    core = BrokerCore(config(1))
    core.handle(BrokerStarted())
    assert core.handle(ShutdownRequested()) == [Exit()]
    assert core.state is B.SHUTTING_DOWN


def test_session_expiry_reregisters_with_a_new_epoch() -> None:
    core = running()
    send(core, lai_request(lai(leader=1)))
    assert core.handle(BrokerSessionExpired()) == [LoadBrokerMetadata()]
    assert core.state is B.RECOVERY and core.epoch is None
    assert send(core, um_request()).error is ErrorCode.BROKER_NOT_AVAILABLE
    core.handle(loaded({"t": {0: (1, 2, 3)}}))
    core.handle(BrokerRegistered(EPOCH + 7))
    assert core.state is B.RUNNING and core.epoch == EPOCH + 7
    assert send(core, um_request(broker_epoch=EPOCH)).error is ErrorCode.STALE_BROKER_EPOCH
    assert send(core, um_request(broker_epoch=EPOCH + 7)).error is ErrorCode.NONE


def test_expiry_during_controlled_shutdown_resumes_it_with_the_new_epoch() -> None:
    core = running()
    core.handle(ShutdownRequested())
    effects = core.handle(BrokerSessionExpired())
    assert effects == [CancelTimer(RETRY), LoadBrokerMetadata()]
    core.handle(loaded())
    # an answer to the old incarnation's request is ignored
    core.handle(BrokerRegistered(EPOCH + 1))
    assert core.state is B.PENDING_CONTROLLED_SHUTDOWN
    assert core.handle(ControlledShutdownAnswered(OK.response, broker_epoch=EPOCH)) == []
    assert core.state is B.PENDING_CONTROLLED_SHUTDOWN
    assert core.handle(ControlledShutdownAnswered(OK.response, broker_epoch=EPOCH + 1))[-1] \
        == Exit()


def test_expiry_while_registering_registers_again() -> None:
    core = BrokerCore(config(1))
    core.handle(BrokerStarted())
    core.handle(loaded())
    assert core.handle(BrokerSessionExpired()) == [Register()]
    core.handle(BrokerRegistered(3))
    assert core.state is B.RUNNING


def test_crash_clears_everything() -> None:
    fresh = BrokerCore(config(1)).snapshot()
    core = running(meta=loaded({"t": {0: (1, 2)}}, {TP: (1, 1, (1, 2), 1)}))
    send(core, um_request(controller_epoch=9))
    core.handle(IsrChangeWanted(TP, (1,)))
    core.handle(ShutdownRequested())
    assert core.snapshot() != fresh
    core.handle(BrokerCrashed())
    assert core.snapshot() == fresh
    assert core.replicas() == () and core.epoch is None and core.controller_epoch == 0
    assert core.metadata_cache.partitions == () and core.pending_writes == ()
    # and it starts again from scratch, without resuming the shutdown
    core.handle(BrokerStarted())
    core.handle(loaded())
    core.handle(BrokerRegistered(EPOCH + 1))
    assert core.state is B.RUNNING


def test_illegal_lifecycle_inputs_are_ignored() -> None:
    core = BrokerCore(config(1))
    before = core.snapshot()
    for ev in (BrokerRegistered(5), loaded(), BrokerCrashed(), BrokerSessionExpired(), OK,
               TimerFired(RETRY), ShutdownRequested()):
        assert core.handle(ev) == []
        assert core.snapshot() == before
    running_core = running()
    before = running_core.snapshot()
    for ev in (BrokerStarted(), BrokerRegistered(5), loaded(), OK, TimerFired(RETRY),
               TimerFired(TimerKind.ISR_CHANGE_PROPAGATION), object()):
        assert running_core.handle(ev) == []  # type: ignore[arg-type]
        assert running_core.snapshot() == before
    assert any(r.kind == "ignored" for r in running_core.drain_log())
    assert running_core.state_change_log == []


def test_invalid_registration_epoch_rejected() -> None:
    core = BrokerCore(config(1))
    core.handle(BrokerStarted())
    core.handle(loaded())
    assert core.handle(BrokerRegistered(-4)) == []
    assert core.state is B.RECOVERY


# ---------------------------------------------------------------- random walks

LIFECYCLE_EVENTS = st.sampled_from([
    BrokerStarted(), loaded(), loaded({"t": {0: (1, 2)}}, {TP: (1, 1, (1, 2), 1)}),
    BrokerRegistered(EPOCH), BrokerRegistered(EPOCH + 1), ShutdownRequested(True),
    ShutdownRequested(False), OK, NOT_DONE, TimerFired(RETRY), BrokerSessionExpired(),
    BrokerCrashed(), IsrChangeWanted(TP, (1,)),
    RequestReceived(um_request(), 1), RequestReceived(lai_request(lai()), 2),
])


@settings(max_examples=300, deadline=None)
@given(st.lists(LIFECYCLE_EVENTS, max_size=40))
def test_random_lifecycle_sequences_follow_the_table(events: list) -> None:
    core = BrokerCore(config(1, controlled_shutdown_max_retries=2))
    for ev in events:
        before = core.state
        effects = core.handle(ev)
        after = core.state
        assert after is before or BROKER_TABLE.is_valid(before, after)
        if after is B.NOT_RUNNING:
            assert core.replicas() == () and core.epoch is None
        if after in (B.RUNNING, B.PENDING_CONTROLLED_SHUTDOWN):
            assert core.epoch is not None
        else:
            assert core.epoch is None or after is B.SHUTTING_DOWN
        assert core.shutdown_attempts <= 2
        assert core.applied_ok()
        if any(isinstance(e, Exit) for e in effects):
            assert after is B.SHUTTING_DOWN
        for e in effects:
            if isinstance(e, Respond) and after not in (B.RUNNING, B.PENDING_CONTROLLED_SHUTDOWN):
                assert e.response.error is not ErrorCode.NONE
