"""The world's lost ZooKeeper connections (``zk-disconnect``), step by step: what is enabled,
what is held, what is spent."""

from __future__ import annotations

from fsm.events import SessionStateChange, TimerKind
from fsm.zk_session_states import ZkClientState
from model_check.scenario import load
from model_check.world import CreateTopic, World, WorldConfig, fingerprint
from model_check.world import actions as A
from model_check.world import state as S
from model_check.world.runner import Runner

C, B = A.CONTROLLER_SESSION, A.BROKER_SESSION
CONFIG = WorldConfig.with_faults(
    3, admin=(CreateTopic("t", ((0, (1, 2, 3)),)),), crash=1, zk_disconnect=1,
    isr_change=2)


def running(config: WorldConfig = CONFIG) -> tuple[World, Runner]:
    w = World(config)
    r = Runner(w, out=lambda _line: None)
    r.start_all()
    r.run()
    r.do(A.Action(A.ADMIN, 0, 0))
    r.run()
    assert w.is_quiescent() and w.active_controller() == 1
    return w, r


def described(w: World) -> set[str]:
    return {a.describe() for a in w.enabled_actions()}


def test_who_may_lose_its_connection() -> None:
    w, _ = running()
    got = described(w)
    # the active controller's session, and every registered broker's
    assert {"zk-disconnect controller 1", "zk-disconnect broker 1", "zk-disconnect broker 2",
            "zk-disconnect broker 3"} <= got
    assert "zk-disconnect controller 2" not in got  # a candidate with nothing in flight


def test_controller_disconnect_pauses_holds_and_resumes() -> None:
    w, r = running()
    session = w.procs[1].controller_session
    r.do(A.Action(A.ZK_DISCONNECT, 1, C))
    assert w.procs[1].controller_disconnected and w.zk.alive(session)
    assert w.used == {A.ZK_DISCONNECT: 1}
    assert not w.is_quiescent()
    q = w.queues[1]
    assert q[0] == SessionStateChange(ZkClientState.CONNECTING)
    # kazoo called every watcher: every watched path is queued for a read, no watch is left
    kinds = {m.kind for m in q[1:]}
    assert {S.CONTROLLER, S.BROKERS, S.TOPICS, S.ISR_CHANGE} <= kinds
    assert not any(s == session for s, _ in w.zk.data_watches | w.zk.child_watches)
    assert "zk-disconnect controller 1" not in described(w)  # budget spent
    # a broker fails meanwhile: nobody tells the disconnected controller
    r.do(A.Action(A.CRASH, 3))
    assert not [a for a in w.enabled_actions() if a.kind == A.NOTIFY and a.broker == 1]
    r.do(A.Action(A.PROCESS, 1))
    assert w.controllers[1].paused
    assert not [a for a in w.enabled_actions() if a.kind == A.PROCESS and a.broker == 1]
    held = w.queues[1]
    r.do(A.Action(A.RECONNECT, 1, C))
    assert w.queues[1] == (*held, SessionStateChange(ZkClientState.CONNECTED))
    r.do(A.Action(A.PROCESS, 1))  # CONNECTED jumps the held events
    assert not w.controllers[1].paused and w.queues[1] == held
    r.run()
    assert w.is_quiescent() and w.controllers[1].is_active
    assert 3 not in w.controllers[1].live_brokers()  # the failure was read after CONNECTED


def test_marker_before_connecting_is_held_other_events_are_not() -> None:
    w, r = running()
    r.do(A.Action(A.CRASH, 3))
    r.do(A.Action(A.NOTIFY, 1, "/brokers/ids"))  # a marker queued before the loss
    r.do(A.Action(A.TIMER, 1, ("c", TimerKind.DELETION_RETRY)))
    r.do(A.Action(A.ZK_DISCONNECT, 1, C))
    q = w.queues[1]
    assert isinstance(q[0], S.Marker) and q[0].kind == S.BROKERS
    # the marker's read would fail: the timer event behind it is taken first
    lines = w.apply(A.Action(A.PROCESS, 1))
    assert "TimerFired" in lines[0] and w.queues[1][0] == q[0]
    lines = w.apply(A.Action(A.PROCESS, 1))
    assert "CONNECTING" in lines[0] and w.controllers[1].paused


def test_commit_while_disconnected_is_fenced_applied_or_not() -> None:
    for applied in (False, True):
        w, r = running()
        r.do(A.Action(A.CRASH, 3))
        r.do(A.Action(A.NOTIFY, 1, "/brokers/ids"))
        r.do(A.Action(A.PROCESS, 1))
        assert 1 in w.writes
        version = w.zk.get("/brokers/topics/t/partitions/0/state").version
        r.do(A.Action(A.ZK_DISCONNECT, 1, C))
        assert {"commit 1", "commit 1 (applied, answer lost)"} <= described(w)
        r.do(A.Action(A.COMMIT, 1, A.APPLIED if applied else None))
        assert not w.controllers[1].is_active  # fenced: resigned
        now = w.zk.get("/brokers/topics/t/partitions/0/state").version
        assert now == version + (1 if applied else 0)
        # its session still holds /controller: given up only once CONNECTED
        assert w.zk.get("/controller").owner == w.procs[1].controller_session
        r.do(A.Action(A.RECONNECT, 1, C))
        r.run()
        assert w.is_quiescent() and w.active_controller() is not None
        assert w.controllers[w.active_controller()].is_active


def test_expiry_of_a_lost_connection_is_free_and_closes() -> None:
    config = WorldConfig.with_faults(3, admin=(CreateTopic("t", ((0, (1, 2, 3)),)),),
                                     zk_disconnect=1)
    w, r = running(config)
    r.do(A.Action(A.ZK_DISCONNECT, 1, C))
    assert "expire-controller 1" in described(w)  # no expiry budget, yet enabled
    r.do(A.Action(A.EXPIRE_CONTROLLER, 1))
    assert w.used == {A.ZK_DISCONNECT: 1}  # the expiry spent nothing
    assert not w.procs[1].controller_disconnected
    assert w.queues[1][0] == SessionStateChange(ZkClientState.CLOSED)
    r.run()
    assert w.is_quiescent() and w.active_controller() in (1, 2, 3)
    assert w.controllers[1].session_state is ZkClientState.CONNECTED  # a new client


def test_broker_writes_fail_with_connection_loss_while_disconnected() -> None:
    w, r = running()
    r.do(A.Action(A.ZK_DISCONNECT, 1, B))
    assert w.procs[1].broker_disconnected and not w.is_quiescent()
    assert "zk-reconnect broker 1" in described(w) and "expire-broker 1" in described(w)
    before = w.zk.get("/brokers/topics/t/partitions/0/state")
    lines = w.apply(A.Action(A.ISR_CHANGE, 1, (("t", 0), (1, 2))))
    assert any("FAILED ConnectionLoss" in x for x in lines)
    assert w.zk.get("/brokers/topics/t/partitions/0/state") == before
    assert w.brokers[1].believes_leader(("t", 0))  # not fenced: nothing was written
    r.do(A.Action(A.RECONNECT, 1, B))
    assert not w.procs[1].broker_disconnected
    r.run()
    assert w.is_quiescent()
    # connected again: the next ISR change commits
    lines = w.apply(A.Action(A.ISR_CHANGE, 1, (("t", 0), (1, 2))))
    assert not any("FAILED" in x for x in lines)
    assert w.zk.get("/brokers/topics/t/partitions/0/state").data.isr == (1, 2)


def test_broker_expiry_while_disconnected_is_free() -> None:
    config = WorldConfig.with_faults(3, admin=(CreateTopic("t", ((0, (1, 2, 3)),)),),
                                     zk_disconnect=1)
    w, r = running(config)
    r.do(A.Action(A.ZK_DISCONNECT, 2, B))
    r.do(A.Action(A.EXPIRE_BROKER, 2))
    assert w.used == {A.ZK_DISCONNECT: 1}
    assert w.procs[2].session_lost and not w.procs[2].broker_disconnected
    r.run()
    assert w.is_quiescent() and w.brokers[2].epoch is not None


def test_disconnect_changes_the_fingerprint_and_restores() -> None:
    w, r = running()
    snap = w.snapshot()
    r.do(A.Action(A.ZK_DISCONNECT, 1, C))
    after = w.snapshot()
    assert fingerprint(after) != fingerprint(snap)
    copy = World.restore(after, CONFIG)
    assert copy.snapshot() == after and copy.procs[1].controller_disconnected
    assert described(copy) == described(w)


def test_the_shipped_scenario_budgets_the_disconnect() -> None:
    sc = load("zookeeper-disconnect")
    assert sc.world_config().budget(A.ZK_DISCONNECT) == 1
