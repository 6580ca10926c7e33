"""Admin requests whose znode is absent are no requests: no write, nothing logged.

A watch on ``/admin/preferred_replica_election`` or ``/admin/reassign_partitions`` fires when
the znode is deleted -- by the controller itself, once it has acted on it -- and the re-read
finds nothing. The event then says ``present=False``; planning a ``DeleteOp`` for it would only
fail with NoNode. A znode that exists but names nothing is still cleaned up.
"""

from __future__ import annotations

from fsm import zk_paths
from fsm.effects import DeleteOp, SetDataOp, ZkWrite
from fsm.events import PreferredElectionRequest, ReassignmentRequest
from fsm.znodes import ReassignmentZnode
from model_check.world import reads
from model_check.world.zookeeper import ZooKeeper

from .harness import active, feed, state, writes

T0 = ("t", 0)


def ops_of(out: list[object]) -> list[object]:
    return [op for w in writes(out) for op in w.ops]


def test_absent_preferred_election_znode_plans_nothing() -> None:
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(2, (1, 2))})
    before = len(ctl.state_change_log)
    out = ctl.handle(PreferredElectionRequest(frozenset(), present=False))
    assert out == [] and not any(isinstance(e, ZkWrite) for e in out)
    assert len(ctl.state_change_log) == before
    assert ctl.leader_and_isr(T0).leader == 2  # nothing elected


def test_present_but_empty_preferred_election_znode_is_deleted() -> None:
    ctl = active(topics={"t": {0: (1, 2)}}, states={T0: state(2, (1, 2))})
    out = feed(ctl, PreferredElectionRequest(frozenset()))
    assert ops_of(out) == [DeleteOp(zk_paths.PREFERRED_REPLICA_ELECTION)]
    assert ctl.leader_and_isr(T0).leader == 2


def test_absent_reassignment_znode_plans_nothing() -> None:
    ctl = active(live=(1, 2, 3), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    before = len(ctl.state_change_log)
    assert ctl.handle(ReassignmentRequest((), present=False)) == []
    assert len(ctl.state_change_log) == before and ctl.reassignments() == {}


def test_present_but_empty_reassignment_znode_is_rewritten_from_memory() -> None:
    # nothing in flight: the empty znode is deleted
    ctl = active(live=(1, 2, 3), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    assert ops_of(feed(ctl, ReassignmentRequest(()))) == [DeleteOp(zk_paths.REASSIGN_PARTITIONS)]
    # a reassignment in flight (waiting for replica 3 to join the ISR): the znode gets it back
    ctl = active(live=(1, 2, 3), topics={"t": {0: (1, 2)}}, states={T0: state(1, (1, 2))})
    feed(ctl, ReassignmentRequest(((T0, (2, 3)),)))
    assert ctl.reassignments() == {T0: (2, 3)}
    ops = ops_of(feed(ctl, ReassignmentRequest(())))
    assert ops == [SetDataOp(zk_paths.REASSIGN_PARTITIONS, ReassignmentZnode(((T0, (2, 3)),)),
                             -1)]
    assert ctl.reassignments() == {T0: (2, 3)}


def test_world_reads_say_whether_the_admin_znodes_exist() -> None:
    zk = ZooKeeper()
    assert reads.preferred_request(zk, None) == PreferredElectionRequest(frozenset(),
                                                                         present=False)
    assert reads.reassignment_request(zk, None) == ReassignmentRequest((), present=False)
