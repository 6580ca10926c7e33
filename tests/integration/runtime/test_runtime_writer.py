"""The fenced, batched writer on the real ensemble: size-cut batches, culprits and rolled-back
innocents, make_parents, recursive deletes, the fence, oversized ops."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from adapters.zookeeper import codec
from adapters.zookeeper.writer import ZkWriter
from fsm import zk_paths as P
from fsm.effects import CreateOp, DeleteOp, SetDataOp, ZkWrite
from fsm.values import LeaderAndIsr, TopicAssignment
from fsm.znodes import ControllerEpochZnode

pytestmark = pytest.mark.integration


def setup_epoch(client: KazooClient) -> int:
    client.create(P.CONTROLLER_EPOCH, codec.encode(P.CONTROLLER_EPOCH, ControllerEpochZnode(1)))
    return client.exists(P.CONTROLLER_EPOCH).version


def test_batches_failures_and_reruns(zk_client: KazooClient) -> None:
    fence = setup_epoch(zk_client)
    zk_client.create(P.topic("t"), codec.encode(P.topic("t"), TopicAssignment.of({})),
                     makepath=True)
    w = ZkWriter(zk_client, max_request_bytes=4096)
    li = LeaderAndIsr(1, 0, (1, 2, 3), 1)
    creates = tuple(CreateOp(P.partition_state("t", p), li, make_parents=True)
                    for p in range(100))
    r = w.execute(ZkWrite(1, creates, fence))
    assert not r.fenced and r.failures == ()
    assert w.batches_sent > 5  # cut by size
    assert all(zk_client.exists(P.partition_state("t", p)) for p in range(100))

    # two culprits (a wrong version, an existing znode) among innocents of the same batches
    li2 = LeaderAndIsr(2, 1, (2, 3), 1)
    ops = [SetDataOp(P.partition_state("t", p), li2, 0) for p in range(100)]
    ops[10] = SetDataOp(P.partition_state("t", 10), li2, 7)
    ops[50] = CreateOp(P.partition_state("t", 50), li2)
    r = w.execute(ZkWrite(2, tuple(ops), fence))
    assert not r.fenced
    assert [(f.path, f.code, f.current, f.current_version) for f in r.failures] == [
        (P.partition_state("t", 10), "BadVersion", li, 0),
        (P.partition_state("t", 50), "NodeExists", li, 0),
    ]
    for p in range(100):
        data, stat = zk_client.get(P.partition_state("t", p))
        want = (li, 0) if p in (10, 50) else (li2, 1)
        assert (codec.decode(P.partition_state("t", p), data), stat.version) == want, p

    # recursive delete of the topic, children first
    r = w.execute(ZkWrite(1, (DeleteOp(P.topic("t"), recursive=True),), fence))
    assert r == type(r)(1) and zk_client.exists(P.topic("t")) is None

    # an op larger than any request is reported, never sent
    big = TopicAssignment.of({p: [1, 2, 3] for p in range(2000)})
    r = w.execute(ZkWrite(2, (CreateOp(P.topic("big"), big),), fence))
    assert [f.code for f in r.failures] == ["RequestTooLarge"]
    assert zk_client.connected

    # the fence moved: nothing is written
    zk_client.set(P.CONTROLLER_EPOCH, codec.encode(P.CONTROLLER_EPOCH, ControllerEpochZnode(2)))
    r = w.execute(ZkWrite(1, (CreateOp(P.topic("late"), TopicAssignment.of({})),), fence))
    assert r.fenced and zk_client.exists(P.topic("late")) is None
