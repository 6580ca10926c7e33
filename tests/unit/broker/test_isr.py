"""ISR changes by the leader: conditional on its znode version; a failure fences it."""

from __future__ import annotations

from fsm import zk_paths
from fsm.broker import ReplicaRole
from fsm.effects import BrokerZkWrite, CreateOp, SetDataOp
from fsm.events import (
    BrokerSessionExpired,
    BrokerWriteResult,
    IsrChangeWanted,
    ShutdownRequested,
    WriteFailure,
)
from fsm.values import LeaderAndIsr
from fsm.znodes import IsrChangeZnode

from .builders import TP, lai, lai_request, running, send, stop_request


def leader(broker_id: int = 1, **kw: object):
    core = running(broker_id=broker_id)
    part = lai(leader=broker_id, leader_epoch=4, isr=(1, 2, 3), zk_version=7,
               controller_epoch=3, **kw)  # type: ignore[arg-type]
    send(core, lai_request(part))
    return core


def only_write(effects: list) -> BrokerZkWrite:
    assert len(effects) == 1 and isinstance(effects[0], BrokerZkWrite), effects
    return effects[0]


def test_shrink_writes_conditionally_on_its_zk_version() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    assert write.ops == (SetDataOp(zk_paths.partition_state("t", 0),
                                   LeaderAndIsr(1, 4, (1, 2), 3), version=7),)
    # nothing adopted before the result
    assert core.replica(TP).isr == (1, 2, 3)  # type: ignore[union-attr]
    assert [w.kind for _, w in core.pending_writes] == ["isr"]


def test_success_adopts_isr_and_next_version_then_notifies() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    notify = only_write(core.handle(BrokerWriteResult(write.token)))
    view = core.replica(TP)
    assert view is not None and view.isr == (1, 2) and view.zk_version == 8
    assert notify.ops == (CreateOp("/isr_change_notification/isr_change_",
                                   IsrChangeZnode((TP,)), sequential=True),)
    assert [(t, w.kind) for t, w in core.pending_writes] == [(notify.token, "notify")]
    assert core.handle(BrokerWriteResult(notify.token)) == []
    assert core.pending_writes == ()
    # the next write is conditional on the new version
    again = only_write(core.handle(IsrChangeWanted(TP, (1, 2, 3))))
    assert again.ops[0].version == 8  # type: ignore[union-attr]


def test_bad_version_stops_it_acting_as_leader_until_told() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1,))))
    now = LeaderAndIsr(2, 5, (2, 3), 6)
    core.handle(BrokerWriteResult(write.token, (WriteFailure(
        zk_paths.partition_state("t", 0), "BadVersion", now, 8),)))
    view = core.replica(TP)
    assert view is not None and view.fenced and view.zk_seen == (now, 8)
    assert view.isr == (1, 2, 3) and view.zk_version == 7  # nothing adopted
    assert not core.believes_leader(TP) and core.can_commit_view(TP) is None
    # it does not keep trying
    assert core.handle(IsrChangeWanted(TP, (1,))) == []
    # the controller's LeaderAndIsr tells it what it is now
    send(core, lai_request(lai(leader=2, leader_epoch=5, isr=(2, 3), zk_version=8)))
    view = core.replica(TP)
    assert view is not None and not view.fenced and view.role is ReplicaRole.FOLLOWER


def test_fenced_leader_restored_by_equal_epoch_newer_version() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1,))))
    core.handle(BrokerWriteResult(write.token, (WriteFailure("p", "BadVersion"),)))
    assert not core.believes_leader(TP)
    send(core, lai_request(lai(leader=1, leader_epoch=4, isr=(1, 3), zk_version=8)))
    assert core.believes_leader(TP)


def test_any_failure_fences() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1,))))
    core.handle(BrokerWriteResult(write.token, (WriteFailure("p", "NoNode"),)))
    assert not core.believes_leader(TP)


def test_ignored_when_not_leader_or_not_serving() -> None:
    follower = running()
    send(follower, lai_request(lai(leader=2)))
    assert follower.handle(IsrChangeWanted(TP, (1, 2))) == []
    nobody = running()
    assert nobody.handle(IsrChangeWanted(TP, (1,))) == []
    stopped = leader()
    send(stopped, stop_request(TP))
    assert stopped.handle(IsrChangeWanted(TP, (1,))) == []
    expired = leader()
    expired.handle(BrokerSessionExpired())
    assert expired.handle(IsrChangeWanted(TP, (1,))) == []
    # PENDING_CONTROLLED_SHUTDOWN still serves: a leader may still shrink
    pending = leader()
    pending.handle(ShutdownRequested())
    assert pending.handle(IsrChangeWanted(TP, (1,))) != []


def test_invalid_isr_rejected() -> None:
    core = leader()
    before = core.snapshot()
    for isr in ((2, 3), (1, 4), (1, 1), (), (1, -2)):
        assert core.handle(IsrChangeWanted(TP, isr)) == []
    assert core.handle(IsrChangeWanted(("t", -1), (1,))) == []
    assert core.handle(IsrChangeWanted(TP, (1, 2, 3))) == []  # no change
    assert core.snapshot() == before


def test_one_write_in_flight_per_partition() -> None:
    core = leader()
    only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    assert core.handle(IsrChangeWanted(TP, (1,))) == []


def test_result_for_superseded_view_is_ignored() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    send(core, lai_request(lai(leader=1, leader_epoch=5, isr=(1, 2, 3), zk_version=9)))
    core.handle(BrokerWriteResult(write.token))
    view = core.replica(TP)
    assert view is not None and view.isr == (1, 2, 3) and view.zk_version == 9
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    send(core, stop_request(TP, delete=True))
    assert core.handle(BrokerWriteResult(write.token, (WriteFailure("p", "BadVersion"),))) == []
    assert core.replica(TP) is None
    assert core.handle(BrokerWriteResult(99)) == []  # unknown token


def test_tokens_stay_bounded() -> None:
    core = leader()
    tokens = set()
    late = None
    for i in range(20):
        isr = (1, 2) if i % 2 == 0 else (1, 2, 3)
        write = only_write(core.handle(IsrChangeWanted(TP, isr)))
        assert late is None or write.token != late.token  # never reuses one in flight
        if late is not None:
            core.handle(BrokerWriteResult(late.token))
        late = only_write(core.handle(BrokerWriteResult(write.token)))
        tokens |= {write.token, late.token}
    assert tokens == {1, 2}


def test_seed_multiple_leaders_old_leader_cannot_keep_committing() -> None:
    """Seed 001 §3: A leads {A,B,C}; the controller elects B (ISR {B,C}, epoch+1, version+1).
    A has not seen the LeaderAndIsr: it still believes it leads, but its shrink to commit
    alone fails on the version and from then on it cannot commit."""
    a = leader(broker_id=1)
    b = running(broker_id=2)
    send(b, lai_request(lai(leader=1, leader_epoch=4, isr=(1, 2, 3), zk_version=7)))
    # the controller writes the state at version 8, tells B (A is "dead" to it)
    send(b, lai_request(lai(leader=2, leader_epoch=5, isr=(2, 3), zk_version=8)))
    assert b.believes_leader(TP) and a.believes_leader(TP)
    # A's ISR view still holds B, which no longer follows A: it cannot commit without a shrink
    a_view = a.can_commit_view(TP)
    assert a_view is not None and 2 in a_view.isr
    b_replica = b.replica(TP)
    assert b_replica is not None and b_replica.role is ReplicaRole.LEADER
    write = only_write(a.handle(IsrChangeWanted(TP, (1,))))
    assert write.ops[0].version == 7  # type: ignore[union-attr]
    # the store is at version 8: the conditional write fails
    a.handle(BrokerWriteResult(write.token, (WriteFailure(
        zk_paths.partition_state("t", 0), "BadVersion", LeaderAndIsr(2, 5, (2, 3), 5), 8),)))
    assert not a.believes_leader(TP) and a.can_commit_view(TP) is None
    assert b.can_commit_view(TP) is not None


# ---------------------------------------------------------------- a lost ZooKeeper connection


def test_connection_loss_is_not_committed_the_leader_keeps_leading() -> None:
    """``ConnectionLoss``: the executor could not commit it; nobody else wrote the state, so
    the leader is not fenced (no LeaderAndIsr would ever come to unfence it): it goes on
    with ZooKeeper's ISR and version, and may try again."""
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    assert core.handle(BrokerWriteResult(write.token, (WriteFailure(
        zk_paths.partition_state("t", 0), "ConnectionLoss"),))) == []
    view = core.replica(TP)
    assert view is not None and not view.fenced and view.role is ReplicaRole.LEADER
    assert view.isr == (1, 2, 3) and view.zk_version == 7
    assert core.believes_leader(TP) and core.pending_writes == ()
    again = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    assert again.ops[0].version == 7  # type: ignore[union-attr]


def test_notification_lost_with_the_connection_is_owed_until_written() -> None:
    """The ISR change committed, its notification failed on the lost connection: the
    controller must still learn it. It is owed (one ISR_CHANGE_PROPAGATION timer for all
    owed notifications) and written again when the timer fires, until it commits."""
    from fsm.effects import StartTimer
    from fsm.events import TimerFired, TimerKind

    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    notify = only_write(core.handle(BrokerWriteResult(write.token)))
    lost = (WriteFailure(notify.ops[0].path, "ConnectionLoss"),)
    out = core.handle(BrokerWriteResult(notify.token, lost))
    assert out == [StartTimer(TimerKind.ISR_CHANGE_PROPAGATION,
                              core.config.isr_change_propagation_ms)]
    assert [w.kind for _, w in core.pending_writes] == ["notify-owed"]
    view = core.replica(TP)
    assert view is not None and view.isr == (1, 2) and view.zk_version == 8
    snap = core.snapshot()
    assert type(core).restore(snap, core.config).snapshot() == snap
    # fired while still disconnected: written again, fails again, owed again
    again = only_write(core.handle(TimerFired(TimerKind.ISR_CHANGE_PROPAGATION)))
    assert again.ops == notify.ops
    assert [w.kind for _, w in core.pending_writes] == ["notify"]
    assert core.handle(BrokerWriteResult(again.token, lost)) != []
    # reconnected: written, done
    last = only_write(core.handle(TimerFired(TimerKind.ISR_CHANGE_PROPAGATION)))
    assert core.handle(BrokerWriteResult(last.token)) == []
    assert core.pending_writes == ()
    # nothing owed: the timer means nothing
    assert core.handle(TimerFired(TimerKind.ISR_CHANGE_PROPAGATION)) == []


def test_other_notification_failures_are_still_dropped() -> None:
    core = leader()
    write = only_write(core.handle(IsrChangeWanted(TP, (1, 2))))
    notify = only_write(core.handle(BrokerWriteResult(write.token)))
    assert core.handle(BrokerWriteResult(notify.token, (WriteFailure(
        notify.ops[0].path, "NoNode"),))) == []
    assert core.pending_writes == ()
