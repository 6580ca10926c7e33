"""Admin requests whose znode is absent are no requests: no write, nothing logged.

A watch on ``/admin/preferred_replica_election`` or ``/admin/reassign_partitions`` fires when
the znode is deleted -- by the controller itself, once it has acted on it -- and the re-read
finds nothing: the reader (``fsm.reads``) then hands no event. An event that says
``present=False`` anyway plans nothing (a ``DeleteOp`` would only fail with NoNode). A znode that
exists but names nothing is still cleaned up.
"""

from __future__ import annotations

from fsm import zk_paths
from fsm.effects import DeleteOp, SetDataOp, ZkWrite
from fsm.events import PreferredElectionRequest, ReassignmentRequest
from fsm.reads import Marker, materialize
from fsm.reads.markers import PREFERRED, REASSIGN
from fsm.znodes import PreferredElectionZnode, ReassignmentZnode
from model_check.world.reads import WorldReadPort
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


def test_the_reader_hands_no_event_for_an_absent_admin_znode() -> None:
    """``fsm.reads.materialize`` (live and world): an absent znode is no event at all, as
    Kafka's handlers react to creation only; a present, empty one is an event (cleaned up)."""
    zk = ZooKeeper()
    for kind in (REASSIGN, PREFERRED):
        assert materialize(WorldReadPort(zk), Marker(kind), active=True).value is None
    zk.ensure_path("/admin")
    zk.create(zk_paths.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(()))
    zk.create(zk_paths.REASSIGN_PARTITIONS, ReassignmentZnode(()))
    assert materialize(WorldReadPort(zk), Marker(PREFERRED), active=True).value == \
        PreferredElectionRequest(frozenset())
    assert materialize(WorldReadPort(zk), Marker(REASSIGN), active=True).value == \
        ReassignmentRequest(())
