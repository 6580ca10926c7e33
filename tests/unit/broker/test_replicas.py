"""LeaderAndIsr and StopReplica at the broker (seed 001 section C)."""

from __future__ import annotations

from fsm.broker import ReplicaRole
from fsm.errors import ErrorCode

from .builders import TP, errors, lai, lai_request, running, send, stop_request


def test_become_leader_takes_isr_and_zk_version() -> None:
    core = running()
    response = send(core, lai_request(lai(leader=1, leader_epoch=4, isr=(1, 3), zk_version=7)))
    assert response.error is ErrorCode.NONE and errors(response) == {TP: ErrorCode.NONE}
    view = core.replica(TP)
    assert view is not None
    assert (view.role, view.leader, view.leader_epoch, view.isr, view.zk_version) == \
        (ReplicaRole.LEADER, 1, 4, (1, 3), 7)
    assert view.replicas == (1, 2, 3) and view.controller_epoch == 5
    assert core.believes_leader(TP)
    assert core.can_commit_view(TP) is not None


def test_become_follower_of_given_leader_stops_leading() -> None:
    core = running()
    send(core, lai_request(lai(leader=1, leader_epoch=1)))
    send(core, lai_request(lai(leader=2, leader_epoch=2, isr=(2, 3), zk_version=2)))
    view = core.replica(TP)
    assert view is not None and view.role is ReplicaRole.FOLLOWER and view.leader == 2
    assert view.leader_epoch == 2 and view.isr == (2, 3)
    assert not core.believes_leader(TP) and core.can_commit_view(TP) is None


def test_follower_of_no_leader() -> None:
    core = running()
    send(core, lai_request(lai(leader=-1, leader_epoch=3, isr=(2,))))
    view = core.replica(TP)
    assert view is not None and view.role is ReplicaRole.FOLLOWER and view.leader == -1


def test_older_leader_epoch_ignored_with_fenced_leader_epoch() -> None:
    core = running()
    send(core, lai_request(lai(leader=2, leader_epoch=5, zk_version=5)))
    before = core.replica(TP)
    response = send(core, lai_request(lai(leader=1, leader_epoch=4, zk_version=9)))
    assert response.error is ErrorCode.NONE
    assert errors(response) == {TP: ErrorCode.FENCED_LEADER_EPOCH}
    assert not core.believes_leader(TP)
    # the controller epoch is recorded (the request was applied), the replica is unchanged
    assert core.replica(TP) == before


def test_equal_leader_epoch_older_zk_version_ignored_newer_accepted() -> None:
    core = running()
    send(core, lai_request(lai(leader=1, leader_epoch=5, isr=(1, 2, 3), zk_version=5)))
    response = send(core, lai_request(lai(leader=1, leader_epoch=5, isr=(1,), zk_version=4)))
    assert errors(response) == {TP: ErrorCode.FENCED_LEADER_EPOCH}
    assert core.replica(TP).isr == (1, 2, 3)  # type: ignore[union-attr]
    response = send(core, lai_request(lai(leader=1, leader_epoch=5, isr=(1, 2), zk_version=6)))
    assert errors(response) == {TP: ErrorCode.NONE}
    assert core.replica(TP).isr == (1, 2)  # type: ignore[union-attr]


def test_exact_repeat_is_idempotent_and_conflicting_repeat_ignored() -> None:
    core = running()
    send(core, lai_request(lai(leader=2, leader_epoch=5, zk_version=5)))
    before = core.replica(TP)
    assert errors(send(core, lai_request(lai(leader=2, leader_epoch=5, zk_version=5)))) == \
        {TP: ErrorCode.NONE}
    assert core.replica(TP) == before
    response = send(core, lai_request(lai(leader=3, leader_epoch=5, zk_version=5)))
    assert errors(response) == {TP: ErrorCode.FENCED_LEADER_EPOCH}
    assert core.replica(TP) == before


def test_not_a_replica_is_unknown_partition() -> None:
    core = running(broker_id=4)
    response = send(core, lai_request(lai(leader=1, replicas=(1, 2, 3))))
    assert errors(response) == {TP: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert core.replica(TP) is None


def test_per_partition_malformed_state_is_invalid_others_applied() -> None:
    core = running()
    good = lai(("g", 0))
    bad = [
        lai(("a", 0), isr=()),  # empty ISR
        lai(("b", 0), leader=4),  # leader not a replica
        lai(("c", 0), leader=3, isr=(1, 2)),  # leader not in the ISR
        lai(("d", 0), isr=(1, 4)),  # ISR outside the replicas
        lai(("e", 0), replicas=(1, 1, 2), isr=(1,)),  # a replica named twice
        lai(("f", 0), leader_epoch=-3),
    ]
    response = send(core, lai_request(good, *bad))
    assert response.error is ErrorCode.NONE
    errs = errors(response)
    assert errs[("g", 0)] is ErrorCode.NONE
    assert all(errs[p.tp] is ErrorCode.INVALID_REQUEST for p in bad)
    assert [tp for tp, _ in core.replicas()] == [("g", 0)]


def test_duplicate_partitions_reject_the_whole_request() -> None:
    core = running()
    before = core.snapshot()
    response = send(core, lai_request(lai(leader=1), lai(leader=2, leader_epoch=2)))
    assert response.error is ErrorCode.INVALID_REQUEST
    assert core.snapshot() == before
    response = send(core, stop_request(TP, TP))
    assert response.error is ErrorCode.INVALID_REQUEST
    assert core.snapshot() == before


def test_stop_replica_without_delete_stops_fetching_and_leading() -> None:
    core = running()
    send(core, lai_request(lai(leader=1, leader_epoch=3, zk_version=3)))
    response = send(core, stop_request(TP, delete=False))
    assert errors(response) == {TP: ErrorCode.NONE}
    view = core.replica(TP)
    assert view is not None and view.role is ReplicaRole.STOPPED
    assert view.leader_epoch == 3 and view.zk_version == 3
    assert not core.believes_leader(TP)
    # an equal partition state may restart it (it is not acting)
    send(core, lai_request(lai(leader=1, leader_epoch=3, zk_version=3)))
    assert core.believes_leader(TP)


def test_stop_replica_with_delete_forgets_it() -> None:
    core = running()
    send(core, lai_request(lai(leader=2, leader_epoch=3)))
    send(core, stop_request(TP, delete=True))
    assert core.replica(TP) is None and core.replicas() == ()
    # the replica starts afresh: any epoch is newer than nothing
    send(core, lai_request(lai(leader=2, leader_epoch=0, zk_version=0)))
    assert core.replica(TP) is not None


def test_stop_replica_of_unknown_partition_answers_none() -> None:
    core = running()
    before = core.replicas()
    response = send(core, stop_request(("x", 3), delete=True))
    assert errors(response) == {("x", 3): ErrorCode.NONE}
    assert core.replicas() == before


def test_response_partition_errors_sorted() -> None:
    core = running()
    response = send(core, lai_request(lai(("z", 1)), lai(("a", 2)), lai(("m", 0))))
    assert [tp for tp, _ in response.partition_errors] == [("a", 2), ("m", 0), ("z", 1)]
