"""The KRaft world on the Raft log (``log = "raft"``): a leader is elected for real before the
search, its controller becomes active only once its LeaderChange record is committed,
``replicate`` commits on every voter, ``failover`` hands the controller on through a real
election and the uncommitted tail is gone everywhere, standbys hold the active controller's
committed image, crashed controllers restart from their log, and a KRaft mutant is still
found on the Raft log."""

from __future__ import annotations

from dataclasses import replace

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.events import ControllerRequest
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import TopicRecord
from fsm.raft.events import Received
from fsm.raft.messages import LeaderChange
from fsm.raft.roles import RaftRole
from model_check.kraft.mutants import patched
from model_check.kraft.raft_world import BASE_ID, KRaftRaftWorld
from model_check.kraft.scenario import KRaftScenario, TopicSpec, load_kraft
from model_check.kraft.search import bfs, replay, start
from model_check.kraft.view import view_of
from model_check.kraft.world import KAction

TOPIC = TopicSpec("t", assignment=((1, 2),))


def _scenario(controllers: int = 2, **faults: int) -> KRaftScenario:
    return KRaftScenario("raft-test", brokers=2, controllers=controllers, depth=6,
                         topics=(TOPIC,), faults=dict(faults), log="raft")


def _running(controllers: int = 2, **faults: int) -> KRaftRaftWorld:
    world = start(_scenario(controllers, **faults)).snapshot
    assert isinstance(world, KRaftRaftWorld)
    return world


def _create(w: KRaftRaftWorld, name: str) -> None:
    """An admin's CreateTopics to the active controller: one batch appended, not committed."""
    w.topic_ids += 1
    request = rq.CreateTopicsRequest((rq.CreatableTopic(name, 1, 2),), (uuid_of(w.topic_ids),))
    w._controller(w.active, ControllerRequest(("admin", 0), request))


def _records(w: KRaftRaftWorld, i: int) -> tuple:
    return w.logs[i].records(w.logs[i].start, w.logs[i].end)


def test_the_setup_elects_voter_0_and_its_controller_waits_for_its_leader_change() -> None:
    w = KRaftRaftWorld.fresh(_scenario())
    assert w.active == -1 and w.leader() is None
    w._fire_election(0)
    steps, became_active = 0, None
    while w.net:  # replicate, one message at a time
        (src, dst, message), w.net = w.net[0], w.net[1:]
        w._voter(dst, Received(BASE_ID + src, message, w.now))
        steps += 1
        raft, ctl = w.voters[0].raft, w.controllers[0]
        if ctl.active and became_active is None:
            became_active = steps
            assert raft.role is RaftRole.LEADER
            assert raft.high_watermark > 0, "active before its LeaderChange was committed"
        if raft.role is RaftRole.LEADER and raft.high_watermark == 0:
            assert not ctl.active
    assert became_active is not None and became_active > 1
    assert w.active == 0 and not w.controllers[1].active
    assert w.hw == 0 and isinstance(w.log[0], LeaderChange)
    assert w.log[0].leader_id == BASE_ID
    assert [v.raft.role for v in w.voters] == [RaftRole.LEADER, RaftRole.FOLLOWER]


def test_the_setup_leaves_a_running_cluster_on_the_raft_log() -> None:
    st = start(_scenario())
    assert st.found is None
    assert st.setup[0] == KAction("elect", 0)
    w = st.snapshot
    assert w.active == 0 and w.controller.image.topic("t") is not None
    assert all(w.brokers[b].metadata_offset == w.hw for b in w.brokers)


def test_replicate_commits_an_appended_batch_on_every_voter() -> None:
    w = _running(controllers=3)
    end, hw = w.logs[0].end, w.hw
    _create(w, "n")
    assert w.logs[0].end == end + 2  # TopicRecord + PartitionRecord, one batch
    assert w.hw == hw and all(log.end == end for log in w.logs[1:])
    assert w.controller.image.topic("n") is not None
    assert w.controller.committed.topic("n") is None
    assert KAction("replicate") in w.enabled_actions()
    w.apply(KAction("replicate"))
    assert not w.net
    assert w.hw == end + 1
    assert [log.end for log in w.logs] == [end + 2] * 3
    assert [v.raft.high_watermark for v in w.voters] == [end + 2] * 3
    assert _records(w, 1) == _records(w, 2) == _records(w, 0) == tuple(w.log)
    assert w.admin_answers[-1][1].topics[0].error is ErrorCode.NONE


def test_a_standby_holds_the_active_controllers_committed_image_after_replicate() -> None:
    w = _running(controllers=3)
    _create(w, "n")
    standby = w.controllers[1]
    assert standby.committed.topic("n") is None
    w.apply(KAction("replicate"))
    for c in w.controllers[1:]:
        assert not c.active
        assert c.committed_offset == w.hw
        assert c.committed == w.controller.committed
    assert standby.committed.topic("n") is not None


def test_failover_hands_the_controller_on_and_drops_the_uncommitted_tail_everywhere() -> None:
    w = _running(controllers=3, failover=1)
    old_epoch, committed_end = w.epoch, w.logs[0].end
    _create(w, "n")
    assert w.logs[0].end > committed_end
    w.net = ()  # the records' way to the followers is lost: the batch is on voter 0 only
    w.apply(KAction("failover"))
    assert w.active != 0 and w.leader() == w.active
    assert w.epoch > old_epoch and w.voters[w.active].raft.epoch == w.epoch
    assert not w.controllers[0].active
    assert w.controllers[0].image is w.controllers[0].committed  # the future state dropped
    for i in range(3):
        assert not any(isinstance(r, TopicRecord) and r.name == "n" for r in _records(w, i))
    assert w.controller.image.topic("n") is None
    token, answer = w.admin_answers[-1]
    assert token == 0 and answer.topics[0].error is ErrorCode.NOT_CONTROLLER
    assert isinstance(w.log[committed_end], LeaderChange)
    assert w.log[committed_end].leader_id == BASE_ID + w.active
    assert len({log.end for log in w.logs}) == 1
    for v in w.voters:  # every Flush answered by its own Flushed, the truncation's included
        assert v.raft.flushed_offset == v.raft.end_offset == w.logs[0].end


def test_failover_with_records_in_flight_keeps_raft_s_choice() -> None:
    """The batch reached a follower before the leader resigned: that follower's log is the
    longest, only it can win, and the records are committed in its epoch -- the old
    controller answered NOT_CONTROLLER, the new one's committed image has the topic."""
    w = _running(controllers=3, failover=1)
    _create(w, "n")
    assert w.net
    w.apply(KAction("failover"))
    assert w.active not in (-1, 0)
    assert w.controller.committed.topic("n") is not None
    assert w.admin_answers[-1][1].topics[0].error is ErrorCode.NOT_CONTROLLER
    assert view_of(w).committed == w.controller.committed


def test_a_crashed_leader_is_replaced_and_restarts_from_its_log() -> None:
    w = _running(controllers=3, controller_crash=1, controller_restart=1)
    _create(w, "n")
    w.apply(KAction("replicate"))
    w.apply(KAction("crash-controller", 0))
    assert w.active == -1 and w.voters[0] is None
    kinds = {a.kind for a in w.enabled_actions()}
    assert "deliver-request" not in kinds and "elect" in kinds
    w.apply(next(a for a in w.enabled_actions() if a.kind == "elect"))
    assert w.active in (1, 2)
    w.apply(KAction("restart-controller", 0))
    w.apply(KAction("replicate"))
    restarted = w.controllers[0]
    assert not restarted.active and w.voters[0].applied == w.hw + 1
    assert isinstance(w.log[w.hw], LeaderChange)  # the new leader's: a standby skips it
    assert view_of(w).controllers[0].committed_offset == w.hw
    assert restarted.committed == w.controller.committed
    assert restarted.committed.topic("n") is not None


def test_a_world_copy_is_independent() -> None:
    w = _running(controllers=3)
    key = w.key()
    twin = w.snapshot()
    _create(twin, "n")
    twin.apply(KAction("replicate"))
    assert twin.key() != key and w.key() == key
    assert w.controller.image.topic("n") is None and w.net == ()
    assert KRaftRaftWorld.restore(w).key() == key


def test_the_in_memory_world_stays_the_default() -> None:
    sc = load_kraft("kraft-smoke")
    assert sc.log == "memory"
    assert not isinstance(start(sc).snapshot, KRaftRaftWorld)


def test_uncommitted_visible_is_found_on_the_raft_log() -> None:
    """kraft-smoke's mutant on kraft-smoke's faults on the Raft log, at the same depth: a
    restarted broker's registration answered before ``replicate`` committed it."""
    scenario = replace(load_kraft("kraft-smoke"), log="raft")
    with patched("kraft-uncommitted-visible"):
        result = bfs(scenario, depth=6)
        assert result.violation is not None
        assert result.violation.invariant == "nothing_uncommitted_is_visible"
        assert len(result.violation.path) == 6
        trace = [a.kind for a, _ in replay(scenario, result.violation.path)]
        assert "replicate" not in trace
    assert bfs(scenario, depth=6).violation is None


def test_each_flush_is_answered_by_its_own_flushed() -> None:
    """The resigned leader, truncated and fetching from the new one, asks for two flushes in
    one event (one made stale by the truncation) and hears two ``Flushed``: with one, it
    waits for the other forever and never fetches again, and a later leader that needs its
    vote of confidence cannot commit its LeaderChange (found by kraft-failover, depth 6)."""
    w = _running(controllers=3, ticks=2, failover=2, controller_crash=1)
    for a in (KAction("tick"), KAction("tick"), KAction("failover")):
        w.apply(a)
    for v in w.voters:
        assert v.raft.flushed_offset == v.raft.end_offset
    w.apply(KAction("crash-controller", w.leader()))
    assert w.active == -1
    w.apply(next(a for a in w.enabled_actions() if a.kind == "elect"))
    assert w.active >= 0
    w.apply(KAction("failover"))
    assert w.active >= 0


def test_a_restarted_controller_behind_the_log_start_installs_the_leaders_snapshot() -> None:
    scenario = replace(_scenario(3, controller_crash=1, controller_restart=1),
                       snapshot_every=2)
    w = start(scenario).snapshot
    w.apply(KAction("crash-controller", 2))
    for name in ("n1", "n2", "n3"):
        _create(w, name)
        w.apply(KAction("replicate"))
    lead = w.leader()
    assert w.logs[lead].start > w.logs[2].end  # voter 2's next offset is deleted
    w.apply(KAction("restart-controller", 2))
    w.apply(KAction("replicate"))
    assert w.logs[2].snapshot_id is not None and w.logs[2].start == w.logs[2].snapshot_id.offset
    assert w.logs[2].end == w.logs[lead].end
    assert w.controllers[2].committed == w.controller.committed
    assert w.controllers[2].committed.topic("n3") is not None
    assert view_of(w).controllers[2].committed_offset == w.hw


def test_a_world_travels_by_pickle_and_behaves_the_same() -> None:
    """The Spark engine ships worlds between processes by pickle."""
    import pickle

    w = _running(controllers=3, failover=1)
    _create(w, "n")
    twin = pickle.loads(pickle.dumps(w, protocol=5))
    assert twin.key() == w.key()
    assert all(twin.controllers[i] is twin.voters[i].controller for i in range(3))
    for world in (w, twin):
        world.apply(KAction("failover"))
    assert twin.key() == w.key() and twin.active == w.active != 0
