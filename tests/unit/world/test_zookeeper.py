"""The in-memory ZooKeeper: versions, zxids, ephemerals, one-shot watches, multi, sequentials."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp
from fsm.znodes import ControllerEpochZnode, ControllerZnode
from model_check.world.zookeeper import (
    BAD_VERSION,
    CHANGED,
    CHILDREN,
    CREATED,
    DELETED,
    NO_NODE,
    NODE_EXISTS,
    NOT_EMPTY,
    OK,
    ROLLED_BACK,
    SESSION_EXPIRED,
    Notification,
    ZooKeeper,
)


def test_create_assigns_zxids_and_versions() -> None:
    zk = ZooKeeper()
    assert zk.create("/a", 1).code == OK
    assert zk.create("/x/y", 1).code == NO_NODE
    assert zk.create("/a/b", 2).code == OK
    a, b = zk.get("/a"), zk.get("/a/b")
    assert (a.czxid, b.czxid) == (1, 2)
    assert a.children == ("b",) and a.cversion == 1
    assert zk.set_data("/a/b", 3, version=0) == OK
    b = zk.get("/a/b")
    assert (b.data, b.version, b.czxid, b.mzxid) == (3, 1, 2, 3)
    assert zk.set_data("/a/b", 4, version=0) == BAD_VERSION
    assert zk.set_data("/nope", 4) == NO_NODE
    assert zk.create("/a", 1).code == NODE_EXISTS


def test_create_makes_missing_parents() -> None:
    zk = ZooKeeper()
    assert zk.create("/brokers/topics/t/partitions/0/state", "s").code == NO_NODE
    assert zk.create("/brokers/topics/t/partitions/0/state", "s", make_parents=True).code == OK
    assert zk.children("/brokers/topics/t/partitions") == ("0",)
    assert zk.get("/brokers/topics/t/partitions/0/state").data == "s"


def test_delete_not_empty_and_recursive() -> None:
    zk = ZooKeeper()
    zk.create("/t/p/0/state", 1, make_parents=True)
    assert zk.delete("/t") == NOT_EMPTY
    assert zk.delete("/t", recursive=True) == OK
    assert zk.paths() == ["/"]


def test_multi_is_all_or_nothing() -> None:
    zk = ZooKeeper()
    zk.create("/controller_epoch", ControllerEpochZnode(0))
    s = zk.open_session()
    r = zk.multi((CreateOp("/controller", ControllerZnode(1), ephemeral=True),
                  SetDataOp("/controller_epoch", ControllerEpochZnode(1), version=5)), s)
    assert not r.ok
    assert [x.code for x in r.results] == [ROLLED_BACK, BAD_VERSION]
    assert zk.get("/controller") is None and zk.zxid == 1
    r = zk.multi((CreateOp("/controller", ControllerZnode(1), ephemeral=True),
                  SetDataOp("/controller_epoch", ControllerEpochZnode(1), version=0)), s)
    assert r.ok and r.zxid == 2
    assert zk.get("/controller").owner == s and zk.get("/controller").czxid == 2
    assert zk.get("/controller_epoch").version == 1
    r = zk.multi((CheckOp("/controller_epoch", 0), DeleteOp("/controller")), s)
    assert not r.ok and r.first_error().code == BAD_VERSION


def test_failed_multi_fires_no_watch() -> None:
    zk = ZooKeeper()
    s = zk.open_session()
    zk.create("/x", 0)
    zk.get("/x", watch=s)
    r = zk.multi((SetDataOp("/x", 1, -1), CheckOp("/y", 0)))
    assert not r.ok and zk.pending == [] and zk.get("/x").data == 0
    assert (s, "/x") in zk.data_watches


def test_ephemerals_go_with_their_session_and_fire_watches() -> None:
    zk = ZooKeeper()
    zk.create("/brokers/ids", None, make_parents=True)
    broker, ctl = zk.open_session(), zk.open_session()
    assert zk.children("/brokers/ids", watch=ctl) == ()
    r = zk.create("/brokers/ids/1", "b1", session=broker, ephemeral=True)
    assert r.code == OK
    epoch = zk.get("/brokers/ids/1").czxid
    assert zk.pending == [Notification(ctl, "/brokers/ids", CHILDREN)]
    zk.pop_notification(ctl)
    zk.children("/brokers/ids", watch=ctl)
    zk.get("/brokers/ids/1", watch=ctl)
    assert zk.expire_session(broker) == ["/brokers/ids/1"]
    assert zk.pending == [Notification(ctl, "/brokers/ids/1", DELETED),
                          Notification(ctl, "/brokers/ids", CHILDREN)]
    assert not zk.alive(broker)
    # re-registration on a new session: a new czxid, the new broker epoch
    b2 = zk.open_session()
    zk.create("/brokers/ids/1", "b1", session=b2, ephemeral=True)
    assert zk.get("/brokers/ids/1").czxid > epoch
    # a dead session writes nothing
    r = zk.multi((SetDataOp("/brokers/ids/1", "x", -1),), broker)
    assert not r.ok and r.results[0].code == SESSION_EXPIRED


def test_watches_are_one_shot_and_exists_watch_fires_on_create() -> None:
    zk = ZooKeeper()
    s = zk.open_session()
    assert zk.get("/controller", watch=s) is None
    zk.create("/controller", 1, session=s, ephemeral=True)
    assert zk.pending == [Notification(s, "/controller", CREATED)]
    zk.delete("/controller")
    assert len(zk.pending) == 1  # not re-registered: one shot
    zk.get("/controller", watch=s)
    zk.create("/controller", 2, session=s, ephemeral=True)
    zk.get("/controller", watch=s)
    zk.set_data("/controller", 3)
    assert [n.kind for n in zk.pending] == [CREATED, CREATED, CHANGED]
    assert zk.next_notification(s).kind == CREATED
    zk.pop_notification(s)
    zk.pop_notification(s)
    assert zk.sessions_with_notifications() == [s]


def test_sequential_names_come_from_parent_cversion() -> None:
    zk = ZooKeeper()
    zk.create("/isr_change_notification", None)
    zk.create("/isr_change_notification/other", None)
    r1 = zk.create("/isr_change_notification/isr_change_", 1, sequential=True)
    r2 = zk.create("/isr_change_notification/isr_change_", 2, sequential=True)
    assert r1.path == "/isr_change_notification/isr_change_0000000001"
    assert r2.path == "/isr_change_notification/isr_change_0000000002"
    zk.delete(r1.path)
    r3 = zk.create("/isr_change_notification/isr_change_", 3, sequential=True)
    assert r3.path.endswith("0000000004")  # cversion counts deletions too


def test_drop_watches_keeps_listed_paths() -> None:
    zk = ZooKeeper()
    s = zk.open_session()
    zk.create("/brokers/ids", None, make_parents=True)
    zk.get("/controller", watch=s)
    zk.children("/brokers/ids", watch=s)
    zk.drop_watches(s, keep=("/controller",))
    assert zk.data_watches == {(s, "/controller")} and zk.child_watches == set()


def test_snapshot_restore_roundtrip_is_independent() -> None:
    zk = ZooKeeper()
    s = zk.open_session()
    zk.create("/a/b", 1, session=0, make_parents=True)
    zk.get("/a/b", watch=s)
    snap = zk.snapshot()
    other = ZooKeeper.restore(snap)
    other.set_data("/a/b", 2)
    assert zk.get("/a/b").data == 1 and zk.pending == []
    assert other.pending == [Notification(s, "/a/b", CHANGED)]
    assert ZooKeeper.restore(snap).snapshot() == snap


@given(st.permutations(["/a", "/b", "/c", "/d"]))
def test_snapshot_is_independent_of_insertion_order(order: list[str]) -> None:
    def build(paths: list[str]) -> tuple:
        zk = ZooKeeper()
        for p in paths:
            zk.nodes[p] = zk.nodes["/"]._replace(children=())
            zk.touched(p)
        s = zk.open_session()
        for p in paths:
            zk.get(p, watch=s)
        return zk.snapshot()

    assert build(order) == build(sorted(order))
