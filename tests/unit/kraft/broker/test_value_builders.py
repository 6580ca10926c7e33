"""The broker core's cheap builders make the values their dataclasses' constructors make:
``wanted`` (a ``LocalReplica``), ``new_become_leader`` and ``new_become_follower`` -- equal,
same hash and repr, same type, still immutable."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.kraft.broker.effects import (
    BecomeFollower,
    BecomeLeader,
    new_become_follower,
    new_become_leader,
)
from fsm.kraft.broker.replicas import LocalReplica, Role, wanted
from fsm.kraft.image.partitions import PartitionImage

INT32 = st.integers(-(2**31), 2**31 - 1)
BROKERS = st.lists(st.integers(-1, 6), max_size=4).map(tuple)
TOPIC = st.binary(min_size=16, max_size=16)


def same(built: Any, made: Any) -> None:
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert type(built) is type(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.leader_epoch = 0


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), BROKERS, BROKERS, st.integers(-1, 6), INT32, INT32)
def test_wanted_is_the_constructor(me: int, replicas: tuple[int, ...], isr: tuple[int, ...],
                                   leader: int, leader_epoch: int, partition_epoch: int
                                   ) -> None:
    p = PartitionImage(replicas, isr, leader=leader, leader_epoch=leader_epoch,
                       partition_epoch=partition_epoch)
    want = wanted(me, p)
    if me not in replicas:
        assert want is None
        return
    role = Role.LEADER if leader == me else Role.FOLLOWER
    same(want, LocalReplica(role, leader, leader_epoch, partition_epoch, isr))
    assert wanted(me, None) is None


@settings(max_examples=200, deadline=None)
@given(TOPIC, INT32, INT32, INT32, BROKERS)
def test_the_effect_builders_are_the_constructors(topic: bytes, partition: int, a: int,
                                                 b: int, isr: tuple[int, ...]) -> None:
    same(new_become_leader(topic, partition, a, isr), BecomeLeader(topic, partition, a, isr))
    same(new_become_follower(topic, partition, a, b), BecomeFollower(topic, partition, a, b))
