"""The end of a KRaft broker's process: ``Crashed`` (kill -9) from every live state and
``Exited`` after SHUTTING_DOWN take the lifecycle table's moves into NOT_RUNNING, and leave a
core that knows nothing, so a ``Start`` is a new process's; anything else is ignored."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.effects import LifecycleChange
from fsm.kraft.broker.events import Crashed, Exited, IsrChangesWanted, IsrChangeWanted, Start
from fsm.kraft.controller.requests import (
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
)
from fsm.kraft.records.uuid import uuid_of
from tests.unit.kraft.broker.walk import (
    T1,
    S,
    answer,
    config,
    registered,
    running,
    sent,
    sigterm,
)


def _starting() -> KRaftBroker:
    return registered(epoch=4)[0]


def _recovery() -> KRaftBroker:
    core, hb = registered(epoch=4)
    answer(core, hb, BrokerHeartbeatResponse(ErrorCode.NONE, is_caught_up=True))
    return core


def _running() -> KRaftBroker:
    core, _ = running()
    core.handle(IsrChangesWanted((IsrChangeWanted(T1, 0, (1, 2)),)))
    assert core.alter_partition_in_flight() == ((T1, 0),)
    return core


def _pending() -> KRaftBroker:
    core = _running()
    sigterm(core)
    return core


def _shutting_down() -> KRaftBroker:
    core = _starting()
    sigterm(core)
    return core


LIVE: dict[S, Callable[[], KRaftBroker]] = {
    S.STARTING: _starting, S.RECOVERY: _recovery, S.RUNNING: _running,
    S.PENDING_CONTROLLED_SHUTDOWN: _pending, S.SHUTTING_DOWN: _shutting_down,
}


def _knows_nothing(core: KRaftBroker) -> None:
    assert core.state is S.NOT_RUNNING
    assert (core.incarnation_id, core.broker_epoch, core.metadata_offset) == (None, None, -1)
    assert core.replicas() == () and core.alter_partition_in_flight() == ()
    assert core.queued_isr_wishes() == ()
    assert not core.image.brokers and not core.image.topics


@pytest.mark.parametrize("state", list(LIVE), ids=lambda s: s.value)
def test_a_crash_in_any_live_state_moves_to_not_running_and_forgets(state: S) -> None:
    core = LIVE[state]()
    assert core.state is state
    assert core.handle(Crashed()) == [LifecycleChange(state, S.NOT_RUNNING)]
    _knows_nothing(core)
    # the next process registers afresh: its own incarnation, no epoch of the last one
    reg = sent(core.handle(Start(uuid_of(2002), 50)))
    assert isinstance(reg, BrokerRegistrationRequest) and reg.incarnation_id == uuid_of(2002)
    assert core.state is S.STARTING


def test_the_exit_after_shutting_down_moves_to_not_running_and_forgets() -> None:
    core = _shutting_down()
    assert core.handle(Exited()) == [LifecycleChange(S.SHUTTING_DOWN, S.NOT_RUNNING)]
    _knows_nothing(core)
    assert not core.drain_notes()


@pytest.mark.parametrize("state", [s for s in LIVE if s is not S.SHUTTING_DOWN],
                         ids=lambda s: s.value)
def test_an_exit_before_shutting_down_is_ignored(state: S) -> None:
    """Only a process that shut down exits; an ``Exited`` elsewhere (a shell stopped without
    one) changes nothing and is noted."""
    core = LIVE[state]()
    epoch = core.broker_epoch
    assert core.handle(Exited()) == []
    assert core.state is state and core.broker_epoch == epoch
    assert core.drain_notes() == [f"ignored Exited in {state.value}"]


def test_nothing_ends_a_process_that_is_not_running() -> None:
    core = KRaftBroker(config())
    assert core.handle(Crashed()) == [] and core.handle(Exited()) == []
    assert core.drain_notes() == ["ignored Crashed in NOT_RUNNING",
                                  "ignored Exited in NOT_RUNNING"]
    core = _shutting_down()
    core.handle(Exited())
    assert core.handle(Crashed()) == [] and core.state is S.NOT_RUNNING
