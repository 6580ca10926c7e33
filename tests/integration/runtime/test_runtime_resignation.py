"""The reason a controller service logs when it resigns is the true one: fenced by the epoch
check (``test_runtime_election.test_zombie_controller_is_fenced``), connection lost while a write
was in flight, session expired. The core hears "fenced" for a write that could not finish; the
service knows better."""

from __future__ import annotations

import logging

import pytest
from kazoo.client import KazooClient
from runtime_helpers import expire_on_server, wait_until

from adapters.zookeeper import codec
from adapters.zookeeper.writer import DEFAULT_MAX_BATCH_OPS, DEFAULT_MAX_REQUEST_BYTES
from fsm import zk_paths as P
from fsm.values import TopicAssignment

pytestmark = pytest.mark.integration


def test_connection_lost_during_a_write(make_service, make_broker, zk_client: KazooClient,
                                        caplog: pytest.LogCaptureFixture) -> None:
    """A write the server refuses by dropping the connection: a ``multi`` longer than the
    servers' ``jute.maxbuffer`` (1 MiB). Its outcome is unknown to the client, so the write is
    reported fenced and the controller resigns -- saying the connection was lost."""
    make_broker(1)
    svc = make_service(1, max_request_bytes=16 * 1024 * 1024)
    wait_until(lambda: svc.is_active, 20, "controller active")
    assert svc.wait_idle(10)
    svc.writer.max_batch_ops = 1_000_000  # the whole topic in one ~2 MB multi
    partitions = 6000
    path = P.topic("big")
    with caplog.at_level(logging.WARNING, logger="kcontrol.controller"):
        zk_client.create(path, codec.encode(path, TopicAssignment.of(
            {p: [1] for p in range(partitions)})))
        wait_until(lambda: svc.resignations, 30, "the controller resigns")
        reason = svc.resignations[0]
        # the line is logged before the reason is recorded
        assert any(f"resigned: {reason}" in r.getMessage() for r in caplog.records)
    assert "connection to ZooKeeper lost" in reason and "outcome unknown" in reason, reason
    assert "fenced" not in reason
    assert zk_client.exists(P.partition_state("big", 0)) is None  # the server applied nothing

    # with size-cut batches again, the re-elected controller creates the topic
    svc.writer.max_request_bytes = DEFAULT_MAX_REQUEST_BYTES
    svc.writer.max_batch_ops = DEFAULT_MAX_BATCH_OPS
    wait_until(lambda: svc.is_active and zk_client.exists(P.partition_state("big", partitions - 1)),
               60, "the topic created after re-election")


def test_session_expired(make_service, zk_client: KazooClient, zk_chroot: str) -> None:
    svc = make_service(1)
    wait_until(lambda: svc.is_active, 20, "controller active")
    assert svc.wait_idle(10)
    old_session = svc.client.client_id[0]
    expire_on_server(svc.client, zk_chroot)
    wait_until(lambda: svc.resignations, 30, "the controller resigns")
    assert svc.resignations == ["ZooKeeper session expired"]
    # a new session: re-registered and re-elected
    wait_until(lambda: svc.is_active and svc.client.client_id[0] != old_session, 30,
               "re-elected with a new session")
    assert svc.epoch == 2
