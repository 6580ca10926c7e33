"""Hypothesis strategies for broker-core events (valid and malformed)."""

from __future__ import annotations

from hypothesis import strategies as st

from fsm.errors import ErrorCode
from fsm.events import (
    BrokerCrashed,
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    BrokerWriteResult,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    RequestReceived,
    ShutdownRequested,
    TimerFired,
    TimerKind,
    WriteFailure,
)
from fsm.requests import (
    ControlledShutdownResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, LeaderAndIsr, PartitionStateZk, TopicAssignment

from .builders import EPOCH

TOPICS = ("a", "b")
brokers = st.integers(1, 3)
tps = st.tuples(st.sampled_from(TOPICS), st.integers(0, 1))
id_lists = st.lists(brokers, min_size=1, max_size=3, unique=True).map(tuple)
epochs = st.integers(0, 3)
stamps = st.sampled_from([EPOCH, EPOCH, EPOCH, EPOCH + 1])
controller_epochs = st.integers(1, 4)


@st.composite
def lai_partitions(draw: st.DrawFn) -> LeaderAndIsrPartition:
    replicas = draw(id_lists)
    isr = tuple(b for b in replicas if draw(st.booleans())) or replicas[:1]
    leader = draw(st.sampled_from(isr + (-1,)))
    t, p = draw(tps)
    return LeaderAndIsrPartition(t, p, draw(controller_epochs), leader, draw(epochs), isr,
                                 draw(epochs), replicas)


@st.composite
def um_partitions(draw: st.DrawFn) -> UpdateMetadataPartition:
    replicas = draw(id_lists)
    leader = draw(st.sampled_from(replicas + (-1, -2)))
    t, p = draw(tps)
    return UpdateMetadataPartition(t, p, 1, leader, draw(epochs), replicas, 0, replicas)


def _unique_by_tp(parts: list) -> tuple:
    return tuple({(p.topic, p.partition): p for p in parts}.values())


requests = st.one_of(
    st.builds(LeaderAndIsrRequest, st.just(0), controller_epochs, stamps,
              st.lists(lai_partitions(), max_size=3).map(_unique_by_tp), st.just(())),
    st.builds(StopReplicaRequest, st.just(0), controller_epochs, stamps, st.booleans(),
              st.lists(tps, max_size=3, unique=True).map(tuple)),
    st.builds(UpdateMetadataRequest, st.just(0), controller_epochs, stamps,
              st.lists(um_partitions(), max_size=3).map(_unique_by_tp),
              st.lists(brokers, unique=True).map(
                  lambda ids: tuple(BrokerInfo(b, 1) for b in ids))),
)


@st.composite
def metadata(draw: st.DrawFn) -> BrokerMetadataLoaded:
    topics = tuple((t, TopicAssignment(((0, draw(id_lists)), (1, draw(id_lists)))))
                   for t in TOPICS)
    states = tuple(sorted({
        tp: PartitionStateZk(LeaderAndIsr(draw(brokers), draw(epochs), (1, 2), 1), draw(epochs))
        for tp in draw(st.lists(tps, max_size=4))}.items()))
    return BrokerMetadataLoaded(topics, states)


failures = st.lists(
    st.builds(WriteFailure, st.just("p"), st.sampled_from(["BadVersion", "NoNode"])),
    max_size=1).map(tuple)

events = st.one_of(
    st.sampled_from([BrokerStarted(), BrokerCrashed(), BrokerSessionExpired(),
                     ShutdownRequested(True), ShutdownRequested(False),
                     TimerFired(TimerKind.CONTROLLED_SHUTDOWN_RETRY),
                     BrokerRegistered(EPOCH), BrokerRegistered(EPOCH + 1),
                     ControlledShutdownAnswered(ControlledShutdownResponse(ErrorCode.NONE))]),
    metadata(),
    st.builds(RequestReceived, requests, st.integers(0, 3)),
    st.builds(RequestReceived, requests, st.integers(0, 3)),
    st.builds(IsrChangeWanted, tps, id_lists),
    st.builds(BrokerWriteResult, st.integers(1, 3), failures),
)
