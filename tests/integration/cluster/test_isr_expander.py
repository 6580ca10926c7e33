"""``IsrExpander`` over a real ``BrokerCore`` (no I/O: the expander only reads the core and
submits events): a leader asks to take back exactly the live replicas missing from its ISR,
once per change, and never while its ISR write is in flight."""

from __future__ import annotations

import threading

from adapters.broker.isr_expander import IsrExpander
from fsm.broker import BrokerConfig, BrokerCore
from fsm.effects import BrokerZkWrite
from fsm.events import (
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerStarted,
    IsrChangeWanted,
    RequestReceived,
)
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint

EPOCH = 100


def info(b: int) -> BrokerInfo:
    return BrokerInfo(b, 10 + b, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + b),))


def running_core() -> BrokerCore:
    core = BrokerCore(BrokerConfig(1))
    core.handle(BrokerStarted())
    core.handle(BrokerMetadataLoaded((), ()))
    core.handle(BrokerRegistered(EPOCH))
    return core


def test_leader_asks_for_live_replicas_once() -> None:
    core = running_core()
    lock = threading.Lock()
    exp = IsrExpander(1, lambda: core, lock, lambda ev: True)
    parts = (LeaderAndIsrPartition("t", 0, 1, 1, 3, (1,), 4, (1, 2, 3)),   # leads, ISR [1]
             LeaderAndIsrPartition("t", 1, 1, 2, 3, (2,), 4, (2, 1, 3)))   # follows 2
    core.handle(RequestReceived(LeaderAndIsrRequest(0, 1, EPOCH, parts, (info(1), info(2))), 1))
    assert exp.wanted() == []  # no broker known live yet: nobody to take back
    core.handle(RequestReceived(UpdateMetadataRequest(0, 1, EPOCH, (), (info(1), info(2))), 2))
    wanted = exp.wanted()
    assert wanted == [IsrChangeWanted(("t", 0), (1, 2))]  # 3 is not live; t-1 is not ours
    effects = core.handle(wanted[0])
    assert any(isinstance(e, BrokerZkWrite) for e in effects)
    assert exp.wanted() == []  # its write is in flight
    assert exp.wanted() == []  # and nothing changed since


def test_a_broker_not_registered_is_not_taken_back() -> None:
    """The metadata cache still names broker 2 live (its UpdateMetadata has not come yet), but
    it is gone from /brokers/ids: the leader must not take it back into the ISR."""
    core = running_core()
    exp = IsrExpander(1, lambda: core, threading.Lock(), lambda evs: True)
    core.handle(RequestReceived(UpdateMetadataRequest(0, 1, EPOCH, (),
                                                      (info(1), info(2), info(3))), 1))
    parts = (LeaderAndIsrPartition("t", 0, 1, 1, 3, (1,), 4, (1, 2, 3)),)
    core.handle(RequestReceived(LeaderAndIsrRequest(0, 1, EPOCH, parts, (info(1),)), 2))
    assert exp.wanted(frozenset({1, 3})) == [IsrChangeWanted(("t", 0), (1, 3))]
    assert exp.wanted(frozenset({1})) == []  # a new registration set: scanned again, nothing
    assert exp.wanted(None) == [IsrChangeWanted(("t", 0), (1, 2, 3))]  # unchecked: the cache
