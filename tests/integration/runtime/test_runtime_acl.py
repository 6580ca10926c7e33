"""``--zookeeper-auth``: with it, every znode kcontrol creates is world-readable and writable only
by kcontrol's digest identity (Kafka's ``zookeeper.set.acl``); without it, znodes stay open.

On the real 3-server ensemble: a controller service elected, brokers registered, topics created
by the admin command; an unauthenticated client (and one with the wrong password) can read
everything and change nothing, while the authenticated controller keeps working."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import OPEN_ACL_UNSAFE, Permissions, make_acl
from runtime_helpers import SESSION_MS, controller_znode, wait_until

from adapters.cli import main
from adapters.controller import ControllerService
from adapters.ensemble import Ensemble
from adapters.network.broker_channels import LoggingChannels
from adapters.zookeeper import codec
from adapters.zookeeper.broker_registration import BrokerRegistrar
from adapters.zookeeper.connect import AUTH_ENV, ZkAuth, ensure_chroot, make_client, secure_acl
from fsm import zk_paths as P
from fsm.values import Endpoint, LeaderAndIsr

pytestmark = pytest.mark.integration

AUTH = ZkAuth("kcontrol", f"pw-{uuid.uuid4().hex[:12]}")


class Cluster:
    """A controller service and brokers on one chroot, all with the same ``auth``."""

    def __init__(self, hosts: str, auth: ZkAuth | None) -> None:
        self.hosts = hosts
        self.auth = auth
        self.services: list[ControllerService] = []
        self.clients: list[KazooClient] = []

    def controller(self, broker_id: int) -> ControllerService:
        svc = ControllerService(broker_id, self.hosts, session_timeout_ms=SESSION_MS,
                                channels=LoggingChannels(), zookeeper_auth=self.auth)
        svc.start()
        self.services.append(svc)
        return svc

    def broker(self, broker_id: int) -> tuple[KazooClient, BrokerRegistrar]:
        c = make_client(self.hosts, auth=self.auth, timeout=SESSION_MS / 1000)
        c.start(timeout=15)
        self.clients.append(c)
        reg = BrokerRegistrar(c, broker_id, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + broker_id),))
        reg.register()
        return c, reg

    def admin(self, *args: str) -> tuple[int, str]:
        env = {"KCONTROL_ZOOKEEPER": self.hosts,
               AUTH_ENV: self.auth.credential if self.auth else None}
        r = CliRunner().invoke(main, list(args), env=env)
        return r.exit_code, r.output

    def close(self) -> None:
        for s in self.services:
            s.stop()
        for c in self.clients:
            c.stop()
            c.close()


@pytest.fixture
def make_cluster(zk_ensemble: Ensemble) -> Iterator[Callable[[ZkAuth | None], Cluster]]:
    made: list[Cluster] = []

    def make(auth: ZkAuth | None) -> Cluster:
        # the chroot itself is created with the ACL too (as Kafka creates its chroot):
        # otherwise anybody could delete /controller or /controller_epoch, whose parent it is
        hosts = f"{zk_ensemble.connect_string}/kcontrol-acl-{uuid.uuid4().hex}"
        ensure_chroot(hosts, 15.0, auth)
        cluster = Cluster(hosts, auth)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture
def outsider(zk_ensemble: Ensemble) -> Iterator[Callable[..., KazooClient]]:
    """Clients that are not kcontrol: unauthenticated, or with another password."""
    made: list[KazooClient] = []

    def make(hosts: str, auth: ZkAuth | None = None) -> KazooClient:
        c = make_client(hosts, auth=auth, timeout=10.0)
        c.start(timeout=15)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()
        c.close()


def state(client: KazooClient, topic: str, p: int) -> LeaderAndIsr | None:
    path = P.partition_state(topic, p)
    client.sync(path)
    if client.exists(path) is None:
        return None
    return codec.decode(path, client.get(path)[0])


def shape(acl: list) -> list[tuple[int, str, str]]:
    """An ACL list as an outsider sees it: ZooKeeper shows digest ids to those who do not own
    them as ``user:x``, without the password's hash."""
    return sorted((a.perms, a.id.scheme, a.id.id.split(":")[0]) for a in acl)


def created_paths(topic: str) -> list[str]:
    return ["/", P.CONTROLLER, P.CONTROLLER_EPOCH, *P.PERSISTENT_PATHS, P.broker(1), P.broker(2),
            P.topic(topic), P.partitions(topic), P.partition(topic, 0),
            P.partition_state(topic, 0), P.partition_state(topic, 1)]


def refused_changes(c: KazooClient, topic: str) -> dict[str, Callable[[], object]]:
    """Every kind of change an outsider might try on kcontrol's znodes."""
    probe = b'{"version":1,"partitions":[{"topic":"' + topic.encode() + b'","partition":0}]}'
    return {
        "set /controller": lambda: c.set(P.CONTROLLER, b'{"version":1,"brokerid":9,'
                                                      b'"timestamp":"1"}'),
        "delete /controller": lambda: c.delete(P.CONTROLLER),
        "set /controller_epoch": lambda: c.set(P.CONTROLLER_EPOCH, b"99"),
        "delete /controller_epoch": lambda: c.delete(P.CONTROLLER_EPOCH),
        "create under /controller": lambda: c.create(P.CONTROLLER + "/x"),
        "set /brokers/ids/1": lambda: c.set(P.broker(1), b"{}"),
        "delete /brokers/ids/1": lambda: c.delete(P.broker(1)),
        "create /brokers/ids/9": lambda: c.create(P.broker(9), b"{}", ephemeral=True),
        "create /brokers/topics/evil": lambda: c.create(P.topic("evil"), b"{}"),
        "set the topic": lambda: c.set(P.topic(topic), b"{}"),
        "set a partition state": lambda: c.set(P.partition_state(topic, 0), b"{}"),
        "delete a partition state": lambda: c.delete(P.partition_state(topic, 0)),
        "create /admin/reassign_partitions": lambda: c.create(P.REASSIGN_PARTITIONS, probe),
        "create /admin/preferred_replica_election":
            lambda: c.create(P.PREFERRED_REPLICA_ELECTION, probe),
        "create /admin/delete_topics/<topic>": lambda: c.create(P.delete_topic(topic)),
        "create an ISR change notification":
            lambda: c.create(P.isr_change(P.ISR_CHANGE_PREFIX), probe, sequence=True),
        "open the ACL of /controller_epoch":
            lambda: c.set_acls(P.CONTROLLER_EPOCH, list(OPEN_ACL_UNSAFE)),
        "create /cluster": lambda: c.create("/cluster"),
    }


def test_with_auth_znodes_are_world_readable_and_writable_only_by_kcontrol(
        make_cluster, outsider) -> None:
    cluster = make_cluster(AUTH)
    svc = cluster.controller(1)
    cluster.broker(1)
    _, reg2 = cluster.broker(2)
    wait_until(lambda: svc.is_active, 30, "the controller elected")
    code, out = cluster.admin("topics", "create", "--topic", "secured", "--partitions", "2",
                              "--replication-factor", "2")
    assert code == 0, out
    anon = outsider(cluster.hosts)
    wait_until(lambda: state(anon, "secured", 0) and state(anon, "secured", 1), 30,
               "leaders for 'secured'")
    reg2.notify_isr_change([("secured", 0)])  # a broker's sequential create, through the writer

    # everything kcontrol created: readable by anyone, changeable by kcontrol alone
    expected = secure_acl(AUTH)
    own = cluster.clients[0]
    for path in created_paths("secured"):
        assert shape(anon.get_acls(path)[0]) == shape(expected), path
        assert sorted(own.get_acls(path)[0], key=str) == sorted(expected, key=str), path
        anon.get(path)
    assert anon.get_children(P.ISR_CHANGE_NOTIFICATION) is not None
    assert controller_znode(anon)[0] == 1

    wrong = outsider(cluster.hosts, ZkAuth(AUTH.user, AUTH.password + "x"))
    for c in (anon, wrong):
        for what, change in refused_changes(c, "secured").items():
            with pytest.raises(NoAuthError):
                change()
                pytest.fail(f"an outsider could {what}")
    # the admin command without the identity is refused with a clear message
    r = CliRunner().invoke(main, ["topics", "create", "--topic", "nope", "--partitions", "1",
                                  "--replication-factor", "1"],
                           env={"KCONTROL_ZOOKEEPER": cluster.hosts, AUTH_ENV: None})
    assert r.exit_code == 1 and "NoAuth" in r.output and "--zookeeper-auth" in r.output, r.output

    # the authenticated controller keeps working: a new topic gets leaders, a broker failure
    # is handled, the admin command deletes a topic
    code, out = cluster.admin("topics", "create", "--topic", "later", "--replica-assignment",
                              "2:1")
    assert code == 0, out
    wait_until(lambda: (s := state(anon, "later", 0)) and s.leader == 2, 30, "later-0 led by 2")
    code, out = cluster.admin("topics", "delete", "--topic", "secured")
    assert code == 0, out
    channels = svc.channels
    assert isinstance(channels, LoggingChannels)
    wait_until(lambda: any(getattr(r, "delete_partitions", False)
                           for _, r in channels.requests("StopReplica")), 30,
               "the deletion of 'secured' started by the controller")
    if anon.exists(P.delete_topic("secured")) is not None:  # pending: no broker answers here
        assert sorted(own.get_acls(P.delete_topic("secured"))[0], key=str) \
            == sorted(expected, key=str)
    cluster.clients[1].stop()  # broker 2's session ends
    wait_until(lambda: (s := state(anon, "later", 0)) and s.leader == 1 and s.isr == (1,), 30,
               "broker 2's failure handled: later-0 moves to broker 1")
    assert svc.is_active and svc.resignations == []


def test_without_auth_znodes_stay_open(make_cluster, outsider) -> None:
    cluster = make_cluster(None)
    svc = cluster.controller(1)
    cluster.broker(1)
    cluster.broker(2)
    wait_until(lambda: svc.is_active, 30, "the controller elected")
    code, out = cluster.admin("topics", "create", "--topic", "open", "--partitions", "2",
                              "--replication-factor", "2")
    assert code == 0, out
    anon = outsider(cluster.hosts)
    wait_until(lambda: state(anon, "open", 0) and state(anon, "open", 1), 30, "leaders")
    for path in created_paths("open"):
        assert anon.get_acls(path)[0] == OPEN_ACL_UNSAFE, path
    # anyone may write (harmlessly here: a znode of its own under /admin)
    anon.create("/admin/acl-probe", b"x")
    anon.set("/admin/acl-probe", b"y")
    anon.delete("/admin/acl-probe")


def test_a_client_with_auth_reads_and_writes_open_znodes_too(make_cluster, outsider) -> None:
    """Authentication adds an identity; it takes nothing away on open znodes (a cluster
    started without auth can be administered by a command given one)."""
    cluster = make_cluster(None)
    svc = cluster.controller(1)
    cluster.broker(1)
    wait_until(lambda: svc.is_active, 30, "the controller elected")
    authed = outsider(cluster.hosts, AUTH)
    authed.create("/admin/acl-probe", b"x")  # created by an authenticated client: secured
    assert sorted(authed.get_acls("/admin/acl-probe")[0], key=str) == sorted(secure_acl(AUTH),
                                                                              key=str)
    anon = outsider(cluster.hosts)
    with pytest.raises(NoAuthError):
        anon.set("/admin/acl-probe", b"y")
    assert anon.get("/admin/acl-probe")[0] == b"x"
    authed.delete("/admin/acl-probe")
    assert make_acl("world", "anyone", read=True) == secure_acl(AUTH)[0]
    assert secure_acl(AUTH)[1].perms == Permissions.ALL
