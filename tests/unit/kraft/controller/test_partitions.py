"""AlterPartition, reassignments (seed 004's walk-through), ElectLeaders, fencing elections."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.values import LEADER_UNCHANGED, PartitionChangeRecord
from tests.unit.kraft.controller.harness import Harness


def _alter(h: Harness, name: str, isr: tuple[int, ...], *, leader_epoch: int | None = None,
           partition_epoch: int | None = None, broker: int | None = None) -> rq.AlterPartitionResult:
    p = h.partition(name)
    t = h.ctl.image.topic(name)
    sender = p.leader if broker is None else broker
    reg = h.ctl.registration(sender)
    item = rq.AlterPartitionItem(t.topic_id, 0, p.leader_epoch if leader_epoch is None
                                 else leader_epoch, isr,
                                 p.partition_epoch if partition_epoch is None else partition_epoch)
    resp = h.ask(rq.AlterPartitionRequest(sender, reg.epoch, (item,)))
    assert resp.error == ErrorCode.NONE
    return resp.partitions[0]


def test_isr_shrink_bumps_the_partition_epoch_only() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    result = _alter(h, "t", (1, 2))
    assert result.error == ErrorCode.NONE
    assert (result.isr, result.leader_epoch, result.partition_epoch) == ((1, 2), 0, 1)
    change = h.log[-1]
    assert isinstance(change, PartitionChangeRecord) and change.leader == LEADER_UNCHANGED


def test_stale_alter_partition_is_refused() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    _alter(h, "t", (1, 2))
    assert _alter(h, "t", (1,), partition_epoch=0).error == ErrorCode.INVALID_UPDATE_VERSION
    assert _alter(h, "t", (1,), leader_epoch=7).error == ErrorCode.FENCED_LEADER_EPOCH
    assert _alter(h, "t", (2,), broker=2).error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert _alter(h, "t", (1, 2, 9)).error == ErrorCode.INELIGIBLE_REPLICA
    assert _alter(h, "t", (2,)).error == ErrorCode.INVALID_REQUEST
    t = h.ctl.image.topic("t")
    reg = h.ctl.registration(1)
    stale = h.ask(rq.AlterPartitionRequest(1, reg.epoch - 1, (rq.AlterPartitionItem(
        t.topic_id, 0, 0, (1,), 1),)))
    assert stale.error == ErrorCode.STALE_BROKER_EPOCH


def test_fenced_replica_may_not_rejoin_the_isr() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    h.heartbeat(3, want_fence=True)
    assert 3 not in h.partition("t").isr
    assert _alter(h, "t", (1, 2, 3)).error == ErrorCode.INELIGIBLE_REPLICA


def test_seed_004_reassignment_walk_through() -> None:
    """[1, 2, 3] -> [3, 4, 5]: the replicas grow to all five with 4 and 5 adding, the ISR
    catches up through the leader's AlterPartition, and the controller answers [3, 4, 5]."""
    h = Harness()
    h.start_brokers(1, 2, 3, 4, 5)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    resp = h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0,
                                                                                  (3, 4, 5)),)))
    assert resp.results[0].error == ErrorCode.NONE
    p = h.partition("t")
    assert set(p.replicas) == {1, 2, 3, 4, 5}
    assert p.adding_replicas == (4, 5) and p.removing_replicas == (1, 2)
    assert p.target_replicas() == (3, 4, 5)
    listed = h.ask(rq.ListPartitionReassignmentsRequest())
    assert [(r.topic, r.adding_replicas) for r in listed.reassignments] == [("t", (4, 5))]
    half = _alter(h, "t", (1, 2, 3, 4))
    assert half.isr == (1, 2, 3, 4) and h.partition("t").reassigning
    done = _alter(h, "t", (1, 2, 3, 4, 5))
    assert done.isr == (3, 4, 5), "the controller changed the ISR to finish the reassignment"
    assert done.leader_id == 3 and done.leader_epoch == 1
    p = h.partition("t")
    assert p.replicas == (3, 4, 5) and not p.reassigning
    assert h.ask(rq.ListPartitionReassignmentsRequest()).reassignments == ()


def test_seed_004_isr_change_completes_a_reassignment_with_another_isr() -> None:
    """Leader 1, ISR [1, 2, 3], target [1, 2, 4]: asking for [1, 2, 3, 4] gives [1, 2, 4]."""
    h = Harness()
    h.start_brokers(1, 2, 3, 4)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0, (1, 2, 4)),)))
    done = _alter(h, "t", (1, 2, 3, 4))
    assert done.isr == (1, 2, 4) and done.leader_id == 1 and done.leader_epoch == 0


def test_subset_with_isr_overlap_completes_at_once_and_cancel_reverts() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3, 4)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0, (2, 3)),)))
    p = h.partition("t")
    assert (p.replicas, p.isr, p.leader, p.reassigning) == ((2, 3), (2, 3), 2, False)
    h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0, (4, 3)),)))
    assert h.partition("t").reassigning
    h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0, None),)))
    p = h.partition("t")
    assert set(p.replicas) == {2, 3} and not p.reassigning and set(p.isr) == {2, 3}
    again = h.ask(rq.AlterPartitionReassignmentsRequest((rq.ReassignablePartition("t", 0,
                                                                                   None),)))
    assert again.results[0].error == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS


def test_preferred_and_unclean_elections() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    elect = rq.ElectLeadersRequest(rq.PREFERRED, (("t", 0),))
    assert h.ask(elect).results[0].error == ErrorCode.ELECTION_NOT_NEEDED
    h.heartbeat(1, want_fence=True)
    assert h.partition("t").leader == 2
    assert h.ask(elect).results[0].error == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    h.heartbeat(1)  # unfenced again; back in the ISR through the leader's AlterPartition
    _alter(h, "t", (2, 3, 1))
    assert h.ask(elect).results[0].error == ErrorCode.NONE
    assert h.partition("t").leader == 1
    unclean = rq.ElectLeadersRequest(rq.UNCLEAN, (("t", 0),))
    assert h.ask(unclean).results[0].error == ErrorCode.ELECTION_NOT_NEEDED


def test_unclean_election_picks_a_live_replica_outside_the_isr() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", 1, 2, ((0, (1, 2)),))
    _alter(h, "t", (1,))
    h.heartbeat(1, want_fence=True)
    p = h.partition("t")
    assert p.leader == -1 and p.isr == (1,), "last replica standing stays in the ISR"
    resp = h.ask(rq.ElectLeadersRequest(rq.UNCLEAN, (("t", 0),)))
    assert resp.results[0].error == ErrorCode.NONE
    p = h.partition("t")
    assert p.leader == 2 and p.isr == (2,)


def test_a_broker_back_from_fencing_leads_its_leaderless_partitions() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", 1, 1, ((0, (1,)),))
    h.heartbeat(1, want_fence=True)
    assert h.partition("t").leader == -1
    h.heartbeat(1)
    p = h.partition("t")
    assert p.leader == 1 and p.leader_epoch == 2
