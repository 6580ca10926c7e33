"""The KRaft broker's lifecycle: registration, heartbeats, controlled shutdown, and what it
does with errors, lost requests and answers that are not for it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.effects import Exit, LifecycleChange, ScheduleHeartbeat
from fsm.kraft.broker.events import ControllerUnreachable, HeartbeatDue, MetadataFetched, Start
from fsm.kraft.controller.requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from fsm.kraft.records.values import BrokerRegistrationChangeRecord, FenceBrokerRecord
from fsm.transition_table import IllegalTransition
from tests.unit.kraft.broker.walk import (
    INCARNATION,
    ME,
    S,
    answer,
    cluster_records,
    config,
    registered,
    running,
    sent,
    sigterm,
    started,
)

OK = ErrorCode.NONE


def test_the_whole_walk_from_start_to_exit() -> None:
    core = KRaftBroker(config())
    assert core.state is S.NOT_RUNNING
    effects = core.handle(Start(INCARNATION, 0))
    assert effects[0] == LifecycleChange(S.NOT_RUNNING, S.STARTING)
    reg = sent(effects)
    assert reg == BrokerRegistrationRequest(ME, "cluster-a", INCARNATION, config().listeners,
                                            (), None)

    # registered: a heartbeat at once, asking to stay fenced, reporting nothing replayed
    hb = sent(answer(core, reg, BrokerRegistrationResponse(OK, broker_epoch=7)))
    assert core.broker_epoch == 7
    assert hb == BrokerHeartbeatRequest(ME, 7, -1, want_fence=True, want_shut_down=False)

    # not caught up yet: still STARTING, the next heartbeat soon
    assert answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=False)) == [
        ScheduleHeartbeat(config().starting_heartbeat_ms)]
    assert core.state is S.STARTING
    core.handle(MetadataFetched(0, tuple(cluster_records())))
    hb = sent(core.handle(HeartbeatDue(20)))
    assert (hb.current_metadata_offset, hb.want_fence) == (11, True)

    # caught up: RECOVERY, then ask to be unfenced
    effects = answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=True))
    assert effects[0] == LifecycleChange(S.STARTING, S.RECOVERY)
    assert effects[-1] == ScheduleHeartbeat(config().starting_heartbeat_ms)
    hb = sent(core.handle(HeartbeatDue(30)))
    assert (hb.want_fence, hb.want_shut_down) == (False, False)
    # still fenced: stays in RECOVERY
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, is_fenced=True)) == [
        ScheduleHeartbeat(3000)]
    assert core.state is S.RECOVERY
    hb = sent(core.handle(HeartbeatDue(3030)))
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, is_fenced=False)) == [
        LifecycleChange(S.RECOVERY, S.RUNNING), ScheduleHeartbeat(3000)]

    # RUNNING: plain heartbeats
    hb = sent(core.handle(HeartbeatDue(6030)))
    assert (hb.want_fence, hb.want_shut_down) == (False, False)
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, False)) == [
        ScheduleHeartbeat(3000)]

    # SIGTERM: PENDING_CONTROLLED_SHUTDOWN, a heartbeat wanting to shut down at once
    effects = sigterm(core)
    assert effects[0] == LifecycleChange(S.RUNNING, S.PENDING_CONTROLLED_SHUTDOWN)
    hb = sent(effects)
    assert hb.want_shut_down is True and hb.want_fence is False
    # leaderships not moved yet: ask again soon, every time (not at the 3,000 ms interval)
    assert config().shutdown_heartbeat_ms == 50
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, False, should_shut_down=False)) \
        == [ScheduleHeartbeat(50)]
    hb = sent(core.handle(HeartbeatDue(6100)))
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, False, should_shut_down=False)) \
        == [ScheduleHeartbeat(50)]
    hb = sent(core.handle(HeartbeatDue(9100)))
    assert answer(core, hb, BrokerHeartbeatResponse(OK, True, False, should_shut_down=True)) \
        == [LifecycleChange(S.PENDING_CONTROLLED_SHUTDOWN, S.SHUTTING_DOWN), Exit()]
    assert core.state is S.SHUTTING_DOWN
    # after Exit nothing is sent any more
    assert core.handle(HeartbeatDue(9200)) == []
    assert sigterm(core) == []


@pytest.mark.parametrize("failure", ["error", "unreachable"])
def test_a_retried_registration_keeps_the_incarnation_id(failure: str) -> None:
    core, reg = started()
    if failure == "error":
        effects = answer(core, reg, BrokerRegistrationResponse(ErrorCode.NOT_CONTROLLER))
    else:
        effects = core.handle(ControllerUnreachable(reg))
    assert effects == [ScheduleHeartbeat(3000)]  # never at once after a failure
    assert core.broker_epoch is None
    retry = sent(core.handle(HeartbeatDue(3000)))
    assert retry == reg and retry.incarnation_id == INCARNATION
    # the retry is the same request: whichever attempt's answer comes, it is the awaited one
    hb = sent(answer(core, retry, BrokerRegistrationResponse(OK, 4)))
    assert hb.broker_epoch == 4
    # an answer to a request that is not in flight (a duplicate) changes nothing
    assert answer(core, retry, BrokerRegistrationResponse(OK, 9)) == []
    assert core.broker_epoch == 4


def test_a_lost_or_failed_heartbeat_is_sent_again_after_the_interval() -> None:
    core, hb = registered(3)
    assert core.handle(ControllerUnreachable(hb)) == [ScheduleHeartbeat(3000)]
    hb = sent(core.handle(HeartbeatDue(3000)))
    assert answer(core, hb, BrokerHeartbeatResponse(ErrorCode.NOT_CONTROLLER)) == [
        ScheduleHeartbeat(3000)]
    assert core.broker_epoch == 3 and core.state is S.STARTING


def test_the_timer_firing_while_a_request_is_in_flight_sends_right_after_the_answer() -> None:
    core, hb = registered(3)
    assert core.handle(HeartbeatDue(5)) == []  # one request in flight at a time
    nxt = sent(answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=False)))
    assert isinstance(nxt, BrokerHeartbeatRequest)


@pytest.mark.parametrize("error", [ErrorCode.STALE_BROKER_EPOCH,
                                   ErrorCode.BROKER_ID_NOT_REGISTERED])
def test_a_lost_registration_is_made_again_with_the_same_incarnation(error: ErrorCode) -> None:
    core, _ = running()
    hb = sent(core.handle(HeartbeatDue(6000)))
    reg = sent(answer(core, hb, BrokerHeartbeatResponse(error)))
    assert isinstance(reg, BrokerRegistrationRequest)
    assert reg.incarnation_id == INCARNATION and core.broker_epoch is None
    assert core.state is S.RUNNING  # the lifecycle does not go back
    hb = sent(answer(core, reg, BrokerRegistrationResponse(OK, 40)))
    assert hb.broker_epoch == 40 and hb.want_fence is False


def test_losing_the_registration_during_controlled_shutdown_ends_it() -> None:
    core, _ = running()
    hb = sent(sigterm(core))
    assert answer(core, hb, BrokerHeartbeatResponse(ErrorCode.STALE_BROKER_EPOCH)) == [
        LifecycleChange(S.PENDING_CONTROLLED_SHUTDOWN, S.SHUTTING_DOWN), Exit()]


@pytest.mark.parametrize("where", ["starting", "recovery"])
def test_sigterm_before_running_shuts_down_at_once(where: str) -> None:
    if where == "starting":
        core, _ = registered()
    else:
        core, hb = registered()
        answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=True))
    source = core.state
    assert sigterm(core) == [LifecycleChange(source, S.SHUTTING_DOWN), Exit()]
    assert KRaftBroker(config()).handle(Start(INCARNATION, 0)) != []
    assert sigterm(KRaftBroker(config())) == []  # nothing runs: nothing to do


def test_sigterm_while_a_heartbeat_is_in_flight_asks_right_after_its_answer() -> None:
    core, _ = running()
    hb = sent(core.handle(HeartbeatDue(6000)))
    assert sigterm(core) == [LifecycleChange(S.RUNNING, S.PENDING_CONTROLLED_SHUTDOWN)]
    nxt = sent(answer(core, hb, BrokerHeartbeatResponse(OK, True, False)))
    assert nxt.want_shut_down is True


def test_no_registration_within_the_initial_timeout_shuts_down() -> None:
    core, reg = started()
    core.handle(ControllerUnreachable(reg))
    assert sent(core.handle(HeartbeatDue(59_999))) == reg
    core.handle(ControllerUnreachable(reg))
    assert core.handle(HeartbeatDue(60_000)) == [
        LifecycleChange(S.STARTING, S.SHUTTING_DOWN), Exit()]


def test_a_second_start_and_answers_of_the_wrong_kind_are_ignored() -> None:
    core, reg = started()
    assert core.handle(Start(INCARNATION, 5)) == []
    assert answer(core, reg, BrokerHeartbeatResponse(OK)) == []
    assert core.handle(object()) == []
    assert core.state is S.STARTING and core.drain_notes()


def test_illegal_lifecycle_moves_raise() -> None:
    core = KRaftBroker(config())
    with pytest.raises(IllegalTransition):
        core._move(S.RUNNING)
    core, _ = running()
    with pytest.raises(IllegalTransition):
        core._move(S.STARTING)
    assert core.state is S.RUNNING


def test_sigterm_with_controlled_shutdown_off_exits_at_once() -> None:
    core = KRaftBroker(replace(config(), controlled_shutdown_enable=False))
    reg = sent(core.handle(Start(INCARNATION, 0)))
    hb = sent(answer(core, reg, BrokerRegistrationResponse(OK, 0)))
    answer(core, hb, BrokerHeartbeatResponse(OK, is_caught_up=True))
    hb = sent(core.handle(HeartbeatDue(20)))
    answer(core, hb, BrokerHeartbeatResponse(OK, True, is_fenced=False))
    assert core.state is S.RUNNING
    assert sigterm(core) == [LifecycleChange(S.RUNNING, S.SHUTTING_DOWN), Exit()]


def _shutdown_mark(broker_id: int, epoch: int) -> BrokerRegistrationChangeRecord:
    return BrokerRegistrationChangeRecord(broker_id, epoch, in_controlled_shutdown=1)


def test_another_brokers_controlled_shutdown_is_reported_at_once() -> None:
    """The controller fences a broker in controlled shutdown only once every active broker
    has reported an offset past the move: a broker that replays the mark heartbeats now."""
    core, _ = running()
    fetched = core.handle(MetadataFetched(12, (_shutdown_mark(2, 1),)))
    hb = sent(fetched)
    assert hb == BrokerHeartbeatRequest(ME, 0, 12, want_fence=False, want_shut_down=False)
    # a batch with no new mark: no early heartbeat
    answer(core, hb, BrokerHeartbeatResponse(OK, True, False))
    assert core.handle(MetadataFetched(13, (FenceBrokerRecord(3, 2),))) == []


def test_a_report_waits_for_the_heartbeat_in_flight() -> None:
    core, _ = running()
    hb = sent(core.handle(HeartbeatDue(100)))
    assert core.handle(MetadataFetched(12, (_shutdown_mark(3, 2),))) == []
    # answered: the next one goes at once, with the offset replayed since
    again = sent(answer(core, hb, BrokerHeartbeatResponse(OK, True, False)))
    assert again.current_metadata_offset == 12


def test_no_early_report_for_its_own_mark_other_records_or_before_running() -> None:
    core, _ = running()
    assert core.handle(MetadataFetched(12, (_shutdown_mark(ME, 0),))) == []
    assert core.handle(MetadataFetched(13, (FenceBrokerRecord(3, 2),))) == []
    starting, _ = registered()
    records = cluster_records() + [_shutdown_mark(2, 1)]
    assert starting.handle(MetadataFetched(0, tuple(records))) == []
    assert starting.state is S.STARTING
