"""Topic creation end to end, and malformed znodes, through a ControllerService on the real
3-server ensemble."""

from __future__ import annotations

import logging

import pytest
from kazoo.client import KazooClient
from runtime_helpers import wait_until

from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.values import LeaderAndIsr, TopicAssignment

pytestmark = pytest.mark.integration


def create_topic(client: KazooClient, name: str, assignment: dict[int, list[int]]) -> None:
    path = P.topic(name)
    client.create(path, codec.encode(path, TopicAssignment.of(assignment)))


def state(client: KazooClient, topic: str, p: int) -> LeaderAndIsr | None:
    path = P.partition_state(topic, p)
    if client.exists(path) is None:
        return None
    return codec.decode(path, client.get(path)[0])


def test_topic_creation_end_to_end(make_service, make_broker, zk_client: KazooClient) -> None:
    epochs = {b: make_broker(b).epoch for b in (1, 2, 3)}
    svc = make_service(1)
    wait_until(lambda: svc.is_active, 20, "controller active")
    assert svc.wait_idle(10)
    assignment = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [2, 1, 3]}
    create_topic(zk_client, "orders", assignment)
    wait_until(lambda: all(state(zk_client, "orders", p) for p in assignment), 20,
               "partition states of 'orders'")
    for p, replicas in assignment.items():
        li = state(zk_client, "orders", p)
        assert li == LeaderAndIsr(replicas[0], 0, tuple(replicas), svc.epoch), (p, li)
    assert svc.wait_idle(10)
    lai = svc.channels.requests("LeaderAndIsr")
    assert {b for b, _ in lai} == {1, 2, 3}
    for b, req in lai:
        assert req.broker_epoch == epochs[b] and req.controller_epoch == svc.epoch


def test_malformed_topic_is_skipped(make_service, make_broker, zk_client: KazooClient,
                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    make_broker(1)
    make_broker(2)
    # one malformed topic before the controller starts (read by the failover load) ...
    zk_client.create(P.topic("broken"), b'{"version":1,"partitions":{"0":[1,', makepath=True)
    svc = make_service(1)
    wait_until(lambda: svc.is_active, 20, "controller active")
    assert svc.wait_idle(10)
    assert "broken" not in svc.controller.topic_names()
    assert any("/brokers/topics/broken" in r.getMessage() and r.levelno >= logging.ERROR
               for r in caplog.records)
    # ... and one written by hand while it runs, next to a good one
    zk_client.create(P.topic("garbage"), b"\xff\xfenot json")
    create_topic(zk_client, "good", {0: [1, 2], 1: [2, 1]})
    wait_until(lambda: state(zk_client, "good", 0) and state(zk_client, "good", 1), 20,
               "good topic's partitions")
    assert svc.wait_idle(10)
    assert svc.is_active
    assert "garbage" not in svc.controller.topic_names()
    assert zk_client.exists(P.partitions("garbage")) is None
    assert any("/brokers/topics/garbage" in r.getMessage() for r in caplog.records
               if r.levelno >= logging.ERROR)
    # a malformed partition state: skipped and reported by the next failover load
    zk_client.set(P.partition_state("good", 1), b'{"version":1,"leader":"x"}')
    snap = svc.reader.cluster_snapshot()
    assert any("/brokers/topics/good/partitions/1/state" in r for r in snap.bad_input)
    assert [tp for tp, _ in snap.partition_states] == [("good", 0)]
    # fixing the broken topic makes it a new topic (its data watch fires)
    path = P.topic("broken")
    zk_client.set(path, codec.encode(path, TopicAssignment.of({0: [2, 1]})))
    wait_until(lambda: state(zk_client, "broken", 0), 20, "repaired topic created")
    assert state(zk_client, "broken", 0).leader == 2


def test_a_topic_changed_during_the_failover_load_is_seen(
        make_service, make_broker, zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partitions added to topics (``kafka-topics --alter``) while a new controller loads:
    one as its topic watches are being set (``setWatches``), one right after the topic
    znodes were read. The first is in what the load reads, the second fires the watch set
    before the read: the controller creates both new partitions."""
    from adapters.zookeeper import reads as zk_reads

    for b in (1, 2):
        make_broker(b)
    for name, a in (("orders", {0: [1, 2], 1: [2, 1]}), ("quiet", {0: [1, 2]})):
        zk_client.create(P.topic(name), codec.encode(P.topic(name), TopicAssignment.of(a)),
                         makepath=True)  # before the controller creates the parents
    original = zk_reads.set_data_watches
    altered: list[int] = []

    def altered_first(client: KazooClient, *args: object, **kw: object) -> object:
        if not altered:  # the load's topic read: once
            path = P.topic("orders")
            altered.append(zk_client.set(path, codec.encode(path, TopicAssignment.of(
                {0: [1, 2], 1: [2, 1], 2: [1, 2]}))).version)
            client.sync("/")  # applied by the controller's server before its watches arrive
        return original(client, *args, **kw)

    decode_nodes = zk_reads.decode_nodes
    after_read: list[int] = []

    def quiet_altered_after_its_read(decode: object, paths: list[str], start: int,
                                     *args: object) -> None:
        decode_nodes(decode, paths, start, *args)  # type: ignore[arg-type]
        if not after_read and paths[start] == P.topic("orders"):  # the topics were read
            path = P.topic("quiet")
            after_read.append(zk_client.set(path, codec.encode(path, TopicAssignment.of(
                {0: [1, 2], 1: [2, 1]}))).version)

    monkeypatch.setattr(zk_reads, "set_data_watches", altered_first)
    monkeypatch.setattr(zk_reads, "decode_nodes", quiet_altered_after_its_read)
    svc = make_service(1)
    wait_until(lambda: svc.last_load_s is not None, 20, "the failover load")
    assert altered == [1], "the load's topic watches went through setWatches"
    assert after_read == [1], "'quiet' was altered after the load read it"
    for topic, p in (("orders", 2), ("quiet", 1)):
        wait_until(lambda t=topic, n=p: state(zk_client, t, n), 20, f"{topic}-{p}'s state")
    assert svc.wait_idle(10)
    assert {("orders", 2), ("quiet", 1)} <= set(svc.controller.ctx.assignment)
    assert state(zk_client, "orders", 2) == LeaderAndIsr(1, 0, (1, 2), svc.epoch)
    assert state(zk_client, "quiet", 1) == LeaderAndIsr(2, 0, (2, 1), svc.epoch)
