"""The live audit's broker check (``kcontrol audit --brokers``) against a real data plane:
a ``SocketServer`` in this process serving Metadata from a real ``BrokerCore``, compared with
hand-made ZooKeeper states that agree with it or not."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from adapters.broker.metadata_audit import NAME, broker_metadata_check
from adapters.network import BrokerRequestHandler, SocketServer, parse_listener_config
from adapters.zookeeper.audit import ZkState
from fsm.broker import BrokerConfig, BrokerCore
from fsm.events import BrokerMetadataLoaded, BrokerRegistered, BrokerStarted, RequestReceived
from fsm.requests import UpdateMetadataPartition, UpdateMetadataRequest
from fsm.values import BrokerInfo, Endpoint, LeaderAndIsr, PartitionStateZk, TopicAssignment
from fsm.znodes import ControllerZnode

HOST = "127.0.0.1"
EPOCH = 100


@pytest.fixture
def broker_port() -> Iterator[int]:
    """Broker 7's data plane; its cache: controller 7, topic t (partitions 0 and 1 on 7,
    leader epochs 0 and 2)."""
    core = BrokerCore(BrokerConfig(7))
    core.handle(BrokerStarted())
    core.handle(BrokerMetadataLoaded((), ()))
    core.handle(BrokerRegistered(EPOCH))
    server = SocketServer(parse_listener_config(f"PLAINTEXT://{HOST}:0"),
                          BrokerRequestHandler(core)).start()
    try:
        port = server.port("PLAINTEXT")
        me = BrokerInfo(7, EPOCH, (Endpoint("PLAINTEXT", HOST, port),))
        parts = tuple(UpdateMetadataPartition("t", p, 1, 7, 2 * p, (7,), 0, (7,)) for p in (0, 1))
        core.handle(RequestReceived(UpdateMetadataRequest(7, 1, EPOCH, parts, (me,)), 1))
        yield port
    finally:
        server.stop()


def state(port: int, *, controller: int = 7, epoch_of_1: int = 2) -> ZkState:
    me = BrokerInfo(7, EPOCH, (Endpoint("PLAINTEXT", HOST, port),))
    return ZkState(
        controller=ControllerZnode(controller), broker_ids=(7,), brokers={7: me},
        broker_epochs={7: EPOCH}, topic_names=("t",),
        topics={"t": TopicAssignment(((0, (7,)), (1, (7,))))},
        partition_states={("t", 0): PartitionStateZk(LeaderAndIsr(7, 0, (7,), 1), 0),
                          ("t", 1): PartitionStateZk(LeaderAndIsr(7, epoch_of_1, (7,), 1), 0)})


def test_agreeing_broker_passes(broker_port: int) -> None:
    assert broker_metadata_check()(state(broker_port)) == []


def test_a_partition_that_differs_is_named(broker_port: int) -> None:
    found = broker_metadata_check()(state(broker_port, epoch_of_1=3))
    assert [v.invariant for v in found] == [NAME]
    assert found[0].detail.startswith("broker 7: 1 partition(s) differ from ZooKeeper: t-1")
    assert "epoch 2" in found[0].detail and "epoch 3" in found[0].detail


def test_another_controller_is_named(broker_port: int) -> None:
    found = broker_metadata_check()(state(broker_port, controller=8))
    assert len(found) == 1 and "metadata names controller 7, /controller names 8" in \
        found[0].detail


def test_a_silent_broker_is_a_violation() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    found = broker_metadata_check(timeout=2.0)(state(port))
    assert len(found) == 1 and "broker 7: no Metadata answer" in found[0].detail
