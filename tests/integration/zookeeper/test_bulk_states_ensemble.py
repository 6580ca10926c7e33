"""Whole topics' state znodes in bulk (``KazooReadPort.get_states``) on the real ensemble: the
same columns as ``get_many`` of their paths, and the same failover load through the reader."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from adapters.zookeeper.codec import encode
from adapters.zookeeper.reads import KazooReadPort, ZnodeDecoder
from fsm import reads
from fsm import zk_paths as P
from fsm.reads.port import Malformed, states_by_get_many
from fsm.values import LeaderAndIsr, TopicAssignment

pytestmark = pytest.mark.integration


def populate(client: KazooClient) -> list[tuple[str, list[int]]]:
    """Topics with 0, 3 and 250 partitions (ids of one to three digits, not in order); some
    states absent, one malformed, one holding another kind's bytes."""
    layout = {"empty": [], "small": [2, 0, 1], "big": list(range(249, -1, -1)) + [1000]}
    for t, ps in layout.items():
        client.create(P.topic(t), encode(P.topic(t), TopicAssignment(
            tuple(sorted((p, (1, 2)) for p in ps)))), makepath=True)
        client.ensure_path(P.partitions(t))
        tx = client.transaction()
        for p in ps:
            if p % 7 == 3:
                continue  # a New partition: no state
            path = P.partition_state(t, p)
            data = encode(path, LeaderAndIsr(p % 3, p % 2, (1, 2), 1))
            if (t, p) == ("big", 100):
                data = b'{"version":1,"leader":'
            elif (t, p) == ("big", 102):
                data = encode(P.topic(t), TopicAssignment(((0, (1,)),)))
            tx.create(P.partition(t, p))
            tx.create(path, data)
        assert all(isinstance(r, str) for r in tx.commit())
    return [(t, ps) for t, ps in layout.items()]


def test_bulk_states_are_get_many_of_their_paths(zk_client: KazooClient) -> None:
    topics = populate(zk_client)
    asked = topics + [("missing", [0, 1]), ("small", [7])]
    for batch_paths in (None, 40, 1):
        port = KazooReadPort(zk_client, 10.0)
        port.max_batch_paths = batch_paths
        got = list(port.get_states(asked))
        want = list(states_by_get_many(KazooReadPort(zk_client, 10.0), asked))
        assert [(list(g.datas), list(g.versions)) for g in got] == \
            [(list(w.datas), list(w.versions)) for w in want], batch_paths
    big = got[2]
    assert isinstance(big.datas[big.datas.index(None) + 1], LeaderAndIsr)  # absent: None
    assert sum(isinstance(d, Malformed) for d in big.datas) == 2
    assert len(got[0].datas) == 0 and got[3].datas == [None, None]


def test_the_failover_load_through_bulk_states_is_the_per_path_one(
        zk_client: KazooClient) -> None:
    populate(zk_client)

    class PerPath(KazooReadPort):
        def get_states(self, topics):  # type: ignore[no-untyped-def]
            return states_by_get_many(self, topics)

    bulk = reads.cluster_snapshot(KazooReadPort(zk_client, 10.0, decode=ZnodeDecoder()))
    plain = reads.cluster_snapshot(PerPath(zk_client, 10.0, decode=ZnodeDecoder()))
    assert bulk == plain
    assert len(bulk.value.partition_states) == 3 + (251 - 36) - 2  # absent, malformed out
    assert any("partition big-100" in reason for reason in bulk.bad)
