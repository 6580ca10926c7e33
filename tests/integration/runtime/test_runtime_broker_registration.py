"""Broker-side ZooKeeper duties on the real ensemble: registration, re-registration after a
session expired on the server, conditional ISR updates, ISR change notifications."""

from __future__ import annotations

import threading

import pytest
from kazoo.client import KazooClient
from runtime_helpers import SESSION_MS, expire_on_server, wait_until

from adapters.zookeeper import codec
from adapters.zookeeper.broker_registration import BrokerRegistrar
from fsm import zk_paths as P
from fsm.effects import BrokerZkWrite, CreateOp, SetDataOp
from fsm.values import Endpoint, LeaderAndIsr
from fsm.znodes import BrokerRegistration, IsrChangeZnode

pytestmark = pytest.mark.integration


def test_register_reregister_and_isr_writes(zk_chroot: str, zk_client: KazooClient) -> None:
    c = KazooClient(hosts=zk_chroot, timeout=SESSION_MS / 1000)
    c.start(timeout=15)
    try:
        got = threading.Event()
        epochs: list[int] = []
        reg = BrokerRegistrar(c, 7, (Endpoint("PLAINTEXT", "h7", 9092),), rack="r1",
                              auto_reregister=True,
                              on_registered=lambda e: (epochs.append(e), got.set()))
        epoch = reg.register()
        # zk_client may sit on another server than c: sync before reading c's writes
        zk_client.sync(P.broker(7))
        data, stat = zk_client.get(P.broker(7))
        assert stat.czxid == epoch and stat.ephemeralOwner == c.client_id[0]
        value = codec.decode(P.broker(7), data)
        assert isinstance(value, BrokerRegistration) and value.rack == "r1"
        assert reg.register() == epoch  # already ours: same epoch

        expire_on_server(c, zk_chroot)
        wait_until(got.is_set, 30, "re-registration with a new session")
        assert epochs[0] > epoch
        zk_client.sync(P.broker(7))
        assert zk_client.get(P.broker(7))[1].czxid == epochs[0]

        # conditional ISR update by the leader
        path = P.partition_state("t", 0)
        zk_client.create(path, codec.encode(path, LeaderAndIsr(7, 0, (7, 8), 1)), makepath=True)
        ok, version, _ = reg.update_isr(("t", 0), LeaderAndIsr(7, 0, (7,), 1), 0)
        assert ok and version == 1
        ok, version, current = reg.update_isr(("t", 0), LeaderAndIsr(7, 0, (7, 8), 1), 0)
        assert not ok and version == 1 and current == LeaderAndIsr(7, 0, (7,), 1)

        zk_client.ensure_path(P.ISR_CHANGE_NOTIFICATION)
        seq = reg.notify_isr_change([("t", 0)])
        zk_client.sync(P.ISR_CHANGE_NOTIFICATION)
        assert seq.startswith(P.isr_change(P.ISR_CHANGE_PREFIX)) and len(seq) == len(
            P.isr_change(P.ISR_CHANGE_PREFIX)) + 10
        assert codec.decode(seq, zk_client.get(seq)[0]) == IsrChangeZnode((("t", 0),))

        # a BrokerZkWrite: one op fails on its own, the other commits
        result = reg.execute(BrokerZkWrite(5, (
            SetDataOp(path, LeaderAndIsr(7, 0, (7, 8), 1), 0),
            CreateOp(P.isr_change(P.ISR_CHANGE_PREFIX), IsrChangeZnode((("t", 0),)),
                     sequential=True),
        )))
        assert result.token == 5 and [(f.path, f.code, f.current_version)
                                      for f in result.failures] == [(path, "BadVersion", 1)]
        zk_client.sync(P.ISR_CHANGE_NOTIFICATION)
        assert len(zk_client.get_children(P.ISR_CHANGE_NOTIFICATION)) == 2
    finally:
        c.stop()
        c.close()


def test_lingering_ephemeral_of_expired_session(zk_chroot: str, zk_client: KazooClient) -> None:
    """A znode held by another live session is waited for; one of our own old sessions is
    deleted and replaced."""
    other = KazooClient(hosts=zk_chroot, timeout=SESSION_MS / 1000)
    other.start(timeout=15)
    mine = KazooClient(hosts=zk_chroot, timeout=SESSION_MS / 1000)
    mine.start(timeout=15)
    try:
        BrokerRegistrar(other, 9).register()
        reg = BrokerRegistrar(mine, 9)
        with pytest.raises(RuntimeError, match="held by session"):
            reg.register(timeout=1.0)
        # the "old incarnation" goes away: ours wins
        threading.Timer(0.5, other.stop).start()
        epoch = reg.register(timeout=20)
        zk_client.sync(P.broker(9))
        assert zk_client.get(P.broker(9))[1].ephemeralOwner == mine.client_id[0]
        # a znode left by a session of ours that is not the current one is deleted
        reg._sessions.add(12345)
        zk_client.delete(P.broker(9))
        fake = KazooClient(hosts=zk_chroot, timeout=SESSION_MS / 1000)
        fake.start(timeout=15)
        try:
            fake.create(P.broker(9), b"{}", ephemeral=True)
            reg._sessions.add(fake.client_id[0])
            assert reg.register(timeout=5) > epoch
            zk_client.sync(P.broker(9))
            assert zk_client.get(P.broker(9))[1].ephemeralOwner == mine.client_id[0]
        finally:
            fake.stop()
            fake.close()
    finally:
        for c in (other, mine):
            c.stop()
            c.close()
