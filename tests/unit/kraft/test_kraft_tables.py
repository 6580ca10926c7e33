"""The two KRaft tables (seed 004): the moves that matter are there, the wrong ones raise."""

from __future__ import annotations

from itertools import pairwise

import pytest

from fsm.kraft.broker_lifecycle_states import (
    KAFKA_BROKER_STATE_VALUE,
    KRAFT_BROKER_TABLE,
    KRaftBrokerState,
)
from fsm.kraft.image import BrokerRegistration, membership_of
from fsm.kraft.membership_states import MEMBERSHIP_TABLE, BrokerMembership, member_label
from fsm.kraft.records.uuid import ZERO_UUID
from fsm.transition_table import IllegalTransition

M = BrokerMembership
K = KRaftBrokerState

# ---------------------------------------------------------------- membership (controller side)


def test_membership_starts_unregistered() -> None:
    assert MEMBERSHIP_TABLE.initial is M.UNREGISTERED
    assert MEMBERSHIP_TABLE.name == "kraft-broker-membership"


@pytest.mark.parametrize(("src", "dst"), [
    (M.UNREGISTERED, M.FENCED),          # BrokerRegistration: a new registration is fenced
    (M.FENCED, M.ACTIVE),                # caught-up heartbeat with WantFence=false
    (M.ACTIVE, M.FENCED),                # lease expired / WantFence
    (M.ACTIVE, M.CONTROLLED_SHUTDOWN),   # WantShutDown while leading
    (M.CONTROLLED_SHUTDOWN, M.FENCED),   # leaderships moved: ShouldShutDown
    (M.FENCED, M.FENCED),                # re-registration: a new epoch, fenced again
    (M.FENCED, M.UNREGISTERED),          # UnregisterBroker
    (M.ACTIVE, M.UNREGISTERED),
    (M.CONTROLLED_SHUTDOWN, M.UNREGISTERED),
])
def test_membership_moves_that_matter(src: M, dst: M) -> None:
    assert MEMBERSHIP_TABLE.check(member_label(1), src, dst) is dst


@pytest.mark.parametrize(("src", "dst"), [
    (M.UNREGISTERED, M.ACTIVE),               # unfencing needs a registration first
    (M.UNREGISTERED, M.CONTROLLED_SHUTDOWN),
    (M.UNREGISTERED, M.UNREGISTERED),         # unregistering nobody writes nothing
    (M.FENCED, M.CONTROLLED_SHUTDOWN),        # a fenced broker shuts down at once, stays fenced
    (M.CONTROLLED_SHUTDOWN, M.ACTIVE),        # no way back but through FENCED
    (M.CONTROLLED_SHUTDOWN, M.CONTROLLED_SHUTDOWN),
    (M.ACTIVE, M.ACTIVE),                     # a heartbeat that changes nothing is no move
])
def test_membership_illegal_moves_raise(src: M, dst: M) -> None:
    assert not MEMBERSHIP_TABLE.is_valid(src, dst)
    with pytest.raises(IllegalTransition) as err:
        MEMBERSHIP_TABLE.check(member_label(2), src, dst)
    assert err.value.table == "kraft-broker-membership"
    assert err.value.entity == "broker 2"
    assert f"{src.value} -> {dst.value}" in str(err.value)


def test_active_and_controlled_shutdown_are_reached_only_through_fenced() -> None:
    assert MEMBERSHIP_TABLE.valid_previous(M.ACTIVE) == (M.FENCED,)
    assert MEMBERSHIP_TABLE.valid_previous(M.CONTROLLED_SHUTDOWN) == (M.ACTIVE,)
    # every registration (the only way in from UNREGISTERED) lands on FENCED
    assert MEMBERSHIP_TABLE.targets(M.UNREGISTERED) == frozenset({M.FENCED})


def test_the_image_spells_exactly_the_tables_states() -> None:
    """``membership_of`` (the image's flags) names a ``BrokerMembership`` value, every one."""
    reg = BrokerRegistration(1, 10, ZERO_UUID)
    spelled = [
        (membership_of(None), M.UNREGISTERED),
        (membership_of(reg), M.FENCED),
        (membership_of(reg.unfence()), M.ACTIVE),
        (membership_of(reg.unfence().enter_controlled_shutdown()), M.CONTROLLED_SHUTDOWN),
        (membership_of(reg.unfence().enter_controlled_shutdown().fence()), M.FENCED),
    ]
    for value, state in spelled:
        assert BrokerMembership(value) is state, value
    assert {state for _, state in spelled} == set(M)


def test_every_registered_state_can_be_fenced_and_unregistered() -> None:
    for s in (M.FENCED, M.ACTIVE, M.CONTROLLED_SHUTDOWN):
        assert MEMBERSHIP_TABLE.is_valid(s, M.FENCED), s
        assert MEMBERSHIP_TABLE.is_valid(s, M.UNREGISTERED), s


# ---------------------------------------------------------------- lifecycle (broker side)


def test_lifecycle_starts_not_running_and_carries_kafkas_numbers() -> None:
    assert KRAFT_BROKER_TABLE.initial is K.NOT_RUNNING
    assert KRAFT_BROKER_TABLE.name == "kraft-broker-lifecycle"
    assert {s.value: KAFKA_BROKER_STATE_VALUE[s] for s in K} == {
        "NOT_RUNNING": 0, "STARTING": 1, "RECOVERY": 2, "RUNNING": 3,
        "PENDING_CONTROLLED_SHUTDOWN": 6, "SHUTTING_DOWN": 7}


def test_the_happy_path_is_a_cycle() -> None:
    path = [K.NOT_RUNNING, K.STARTING, K.RECOVERY, K.RUNNING,
            K.PENDING_CONTROLLED_SHUTDOWN, K.SHUTTING_DOWN, K.NOT_RUNNING]
    for a, b in pairwise(path):
        assert KRAFT_BROKER_TABLE.check("broker 1", a, b) is b


@pytest.mark.parametrize(("src", "dst"), [
    (K.STARTING, K.SHUTTING_DOWN),        # registration timed out, or SIGTERM
    (K.RECOVERY, K.SHUTTING_DOWN),        # SIGTERM before unfenced: no controlled shutdown
    (K.RUNNING, K.SHUTTING_DOWN),         # controlled shutdown off, or fatal error
    (K.STARTING, K.NOT_RUNNING),          # crashes
    (K.RECOVERY, K.NOT_RUNNING),
    (K.RUNNING, K.NOT_RUNNING),
    (K.PENDING_CONTROLLED_SHUTDOWN, K.NOT_RUNNING),
])
def test_lifecycle_failure_moves(src: K, dst: K) -> None:
    assert KRAFT_BROKER_TABLE.check("broker 1", src, dst) is dst


@pytest.mark.parametrize(("src", "dst"), [
    (K.RUNNING, K.STARTING),                      # no restart without the process exiting
    (K.RUNNING, K.RECOVERY),                      # no session to lose in KRaft (ZK mode has it)
    (K.NOT_RUNNING, K.RUNNING),
    (K.NOT_RUNNING, K.SHUTTING_DOWN),
    (K.STARTING, K.RUNNING),                      # RECOVERY is always passed through
    (K.STARTING, K.PENDING_CONTROLLED_SHUTDOWN),  # controlled shutdown only from RUNNING
    (K.RECOVERY, K.PENDING_CONTROLLED_SHUTDOWN),
    (K.PENDING_CONTROLLED_SHUTDOWN, K.RUNNING),   # SIGTERM is not taken back
    (K.SHUTTING_DOWN, K.STARTING),
    (K.RUNNING, K.RUNNING),
])
def test_lifecycle_illegal_moves_raise(src: K, dst: K) -> None:
    with pytest.raises(IllegalTransition) as err:
        KRAFT_BROKER_TABLE.check("broker 3", src, dst)
    assert err.value.table == "kraft-broker-lifecycle"
    assert err.value.current is src and err.value.target is dst
