"""BrokerRegistration, BrokerHeartbeat, UnregisterBroker and leases."""

from __future__ import annotations

from typing import Any

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.brokers import REPLACES_FENCED
from fsm.kraft.controller.events import LeadershipGained, MembershipChange
from fsm.kraft.membership_states import BrokerMembership as M
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    FENCE_CHANGE_FENCED,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
)
from tests.unit.kraft.controller.harness import CLUSTER, Harness


def test_registration_epoch_is_the_record_offset_and_rises_per_id() -> None:
    h = Harness()
    first = h.register(1)
    assert first.error == ErrorCode.NONE
    assert isinstance(h.log[first.broker_epoch], RegisterBrokerRecord)
    assert h.ctl.membership(1) is M.FENCED
    h.register(2)
    h.tick(20_000)  # broker 1's session runs out; a new incarnation may register
    second = h.register(1, incarnation=77)
    assert second.broker_epoch > first.broker_epoch
    assert h.log[second.broker_epoch].incarnation_id != h.log[first.broker_epoch].incarnation_id


def test_a_retried_registration_gets_the_same_epoch_and_appends_nothing() -> None:
    h = Harness()
    first = h.register(1)
    length = len(h.log)
    again = h.register(1)
    assert again == first
    assert len(h.log) == length


def test_another_incarnation_while_the_old_one_is_unfenced_with_its_lease_is_a_duplicate(
) -> None:
    h = Harness()
    h.start_brokers(1)
    h.tick(5_000)
    length = len(h.log)
    assert h.register(1, incarnation=2).error == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert len(h.log) == length, "a refusal writes nothing"
    assert h.ctl.membership(1) is M.ACTIVE


def test_another_incarnation_replaces_a_fenced_one_whose_lease_still_runs() -> None:
    """Kafka's ``BrokerHeartbeatManager.hasValidSession`` is false for a fenced broker: a
    registration that is still fenced (not caught up yet) has no session to defend."""
    h = Harness()
    first = h.register(1).broker_epoch
    h.tick(5_000)
    assert h.ctl.leases[1] > h.ctl.now_ms
    second = h.register(1, incarnation=2)
    assert second.error == ErrorCode.NONE and second.broker_epoch > first
    assert h.ctl.registration(1).incarnation_id == uuid_of(2)


def test_wrong_cluster_and_unsupported_features_are_refused() -> None:
    h = Harness()
    bad = h.ask(rq.BrokerRegistrationRequest(1, "other", b"\x01" * 16))
    assert bad.error == ErrorCode.INCONSISTENT_CLUSTER_ID
    h.ctl.image.apply(FeatureLevelRecord("metadata.version", 1, 3))
    h.ctl.committed.apply(FeatureLevelRecord("metadata.version", 1, 3))
    old = h.ask(rq.BrokerRegistrationRequest(1, CLUSTER, b"\x01" * 16,
                                             features=(BrokerFeature("metadata.version", 1, 2),)))
    assert old.error == ErrorCode.UNSUPPORTED_VERSION
    ok = h.ask(rq.BrokerRegistrationRequest(1, CLUSTER, b"\x01" * 16,
                                            features=(BrokerFeature("metadata.version", 1, 5),)))
    assert ok.error == ErrorCode.NONE


def test_unfenced_only_when_caught_up_and_not_wanting_fence() -> None:
    h = Harness()
    epoch = h.register(1).broker_epoch
    behind = h.heartbeat(1, offset=epoch - 1)
    assert behind.is_fenced and not behind.is_caught_up
    wants = h.heartbeat(1, want_fence=True)
    assert wants.is_fenced and wants.is_caught_up
    assert h.ctl.membership(1) is M.FENCED
    ok = h.heartbeat(1, offset=epoch)
    assert not ok.is_fenced
    assert h.ctl.membership(1) is M.ACTIVE


def test_heartbeat_errors() -> None:
    h = Harness()
    assert h.ask(rq.BrokerHeartbeatRequest(9, 0, 0, False)).error == \
        ErrorCode.BROKER_ID_NOT_REGISTERED
    epoch = h.register(1).broker_epoch
    assert h.ask(rq.BrokerHeartbeatRequest(1, epoch + 5, 0, False)).error == \
        ErrorCode.STALE_BROKER_EPOCH


def test_lease_expiry_fences_and_moves_leadership() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", 1, 3, ((0, (1, 2, 3)),))
    assert h.partition("t").leader == 1
    h.tick(10_000)
    for b in (2, 3):
        h.heartbeat(b)
    h.tick(18_001)  # broker 1's lease (0 + 18 s) is gone; 2 and 3 renewed at 10 s
    assert h.ctl.membership(1) is M.FENCED
    p = h.partition("t")
    assert p.leader == 2 and 1 not in p.isr
    assert h.ctl.membership(2) is M.ACTIVE


def _three_brokers_broker_1_leading() -> Harness:
    """Brokers 1-3 unfenced, broker 1 leading t-0 (replicas 1, 2, 3); nothing uncommitted."""
    h = Harness(auto_commit=False)
    for b in (1, 2, 3):
        h.send(rq.BrokerRegistrationRequest(b, CLUSTER, bytes([b]) * 16))
    h.commit()
    for b in (1, 2, 3):
        reg = h.ctl.registration(b)
        h.send(rq.BrokerHeartbeatRequest(b, reg.epoch, len(h.log) - 1, False))
    h.commit()
    token = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("t", 1, 3, ((0, (1, 2, 3)),)),),
                                          (b"\x09" * 16,)))
    h.commit()
    assert h.replies.pop(token).topics[0].error == ErrorCode.NONE
    h.replies.clear()
    return h


def _beat(h: Harness, broker: int, *, want_shut_down: bool = False,
          offset: int | None = None) -> int:
    reg = h.ctl.registration(broker)
    assert reg is not None
    return h.send(rq.BrokerHeartbeatRequest(broker, reg.epoch,
                                            len(h.log) - 1 if offset is None else offset,
                                            False, want_shut_down))


def _fenced_records(records: list[Any], broker: int) -> list[Any]:
    return [r for r in records if isinstance(r, FenceBrokerRecord) and r.id == broker
            or isinstance(r, BrokerRegistrationChangeRecord) and r.broker_id == broker
            and r.fenced == FENCE_CHANGE_FENCED]


def test_controlled_shutdown_step_one_moves_leaders_and_does_not_say_shut_down() -> None:
    h = _three_brokers_broker_1_leading()
    before = len(h.log)
    token = _beat(h, 1, want_shut_down=True)
    assert token not in h.replies, "no answer before the leadership move is committed"
    assert h.ctl.committed.topic("t").partitions[0].leader == 1
    h.commit()
    answer = h.replies.pop(token)
    assert not answer.should_shut_down and not answer.is_fenced
    p = h.ctl.committed.topic("t").partitions[0]
    assert p.leader == 2 and 1 not in p.isr
    assert h.ctl.membership(1) is M.CONTROLLED_SHUTDOWN
    assert _fenced_records(h.log[before:], 1) == [], "not fenced in the first step"
    assert h.ctl.shutdown_offsets == {1: len(h.log) - 1}


def test_controlled_shutdown_waits_for_the_active_brokers_then_fences_and_says_shut_down() -> None:
    h = _three_brokers_broker_1_leading()
    behind = len(h.log) - 1  # the offset brokers 2 and 3 have replayed before the move
    h.send(rq.BrokerHeartbeatRequest(1, h.ctl.registration(1).epoch, behind, False, True))
    h.commit()
    shutdown_offset = len(h.log) - 1
    h.replies.clear()
    # broker 2 reports the move, broker 3 has not: the shutdown waits, nothing is written
    _beat(h, 2, offset=shutdown_offset)
    _beat(h, 3, offset=behind)
    end = len(h.log)
    answer = h.replies.pop(_beat(h, 1, want_shut_down=True, offset=behind))
    assert not answer.should_shut_down and not answer.is_fenced
    assert len(h.log) == end and h.ctl.membership(1) is M.CONTROLLED_SHUTDOWN
    # broker 3 reaches it too: the next heartbeat of broker 1 fences it and says shut down
    _beat(h, 3, offset=shutdown_offset)
    h.replies.clear()
    token = _beat(h, 1, want_shut_down=True, offset=behind)
    assert len(_fenced_records(h.log[end:], 1)) == 1, "fenced in the heartbeat that says stop"
    assert token not in h.replies, "no answer before the fence is committed"
    assert not h.ctl.committed.brokers[1].fenced
    h.commit()
    answer = h.replies.pop(token)
    assert answer.should_shut_down and answer.is_fenced
    assert h.ctl.committed.brokers[1].fenced
    assert h.ctl.membership(1) is M.FENCED
    assert h.ctl.shutdown_offsets == {} and h.ctl.reported == {}


def test_a_broker_leading_nothing_is_fenced_at_once_and_told_to_shut_down() -> None:
    h = _three_brokers_broker_1_leading()
    before = len(h.log)
    token = _beat(h, 3, want_shut_down=True)  # follows t-0, leads nothing
    h.commit()
    answer = h.replies.pop(token)
    assert answer.should_shut_down and answer.is_fenced
    assert len(_fenced_records(h.log[before:], 3)) == 1
    assert 3 not in h.ctl.committed.topic("t").partitions[0].isr
    assert h.ctl.membership(3) is M.FENCED


def test_a_broker_unregistered_in_controlled_shutdown_leaves_no_shutdown_waiting() -> None:
    h = _three_brokers_broker_1_leading()
    _beat(h, 1, want_shut_down=True)
    h.commit()
    assert h.ctl.membership(1) is M.CONTROLLED_SHUTDOWN
    token = h.send(rq.UnregisterBrokerRequest(1))
    h.commit()
    assert h.replies.pop(token).error == ErrorCode.NONE
    assert h.ctl.membership(1) is M.UNREGISTERED
    assert h.ctl.shutdown_offsets == {}


def test_a_new_active_controller_starts_the_controlled_shutdown_again() -> None:
    h = _three_brokers_broker_1_leading()
    _beat(h, 1, want_shut_down=True)
    h.commit()
    h.lose_leadership()
    h.feed(LeadershipGained(epoch=h.ctl.epoch + 1, log_end_offset=len(h.log), now_ms=0))
    assert h.ctl.shutdown_offsets == {}
    # broker 1 leads nothing any more (the move is committed): fenced at once, told to stop
    token = _beat(h, 1, want_shut_down=True)
    h.commit()
    answer = h.replies.pop(token)
    assert answer.should_shut_down and answer.is_fenced


def test_fenced_broker_asking_to_shut_down_is_told_at_once() -> None:
    h = Harness()
    h.register(1)
    answer = h.heartbeat(1, want_shut_down=True)
    assert answer.should_shut_down and answer.is_fenced


def test_unregister_is_idempotent_and_hands_leadership_over() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", 1, 2, ((0, (1, 2)),))
    assert h.ask(rq.UnregisterBrokerRequest(1)).error == ErrorCode.NONE
    assert h.ctl.membership(1) is M.UNREGISTERED
    assert h.partition("t").leader == 2
    assert h.ask(rq.UnregisterBrokerRequest(1)).error == ErrorCode.NONE


def test_re_registration_of_an_active_broker_fences_its_old_incarnation() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", 1, 2, ((0, (1, 2)),))
    h.tick(19_000)  # both leases ran out, but no tick fenced yet... the tick fences both
    assert h.ctl.membership(1) is M.FENCED
    h2 = Harness()
    h2.start_brokers(1, 2)
    h2.create("t", 1, 2, ((0, (1, 2)),))
    h2.ctl.leases[1] = 0  # broker 1's session is over, not yet noticed by a tick
    h2.ctl.now_ms = 1
    assert h2.register(1, incarnation=5).error == ErrorCode.NONE
    assert h2.ctl.membership(1) is M.FENCED
    assert h2.partition("t").leader == 2


def _shut_down_cleanly(h: Harness, broker: int) -> None:
    """``broker``'s two-step controlled shutdown to its end: told to shut down, fenced."""
    _beat(h, broker, want_shut_down=True)
    h.commit()
    for b in h.ctl.image.brokers:
        if b != broker:
            _beat(h, b)
    h.commit()
    token = _beat(h, broker, want_shut_down=True)
    h.commit()
    assert h.replies.pop(token).should_shut_down
    h.replies.clear()


def test_a_broker_restarted_right_after_its_controlled_shutdown_registers_at_once() -> None:
    h = _three_brokers_broker_1_leading()
    token = h.send(rq.CreateTopicsRequest((rq.CreatableTopic("solo", 1, 1, ((0, (1,)),)),),
                                          (b"\x0a" * 16,)))
    h.commit()
    assert h.replies.pop(token).topics[0].error == ErrorCode.NONE
    old = h.ctl.registration(1)
    _shut_down_cleanly(h, 1)
    assert h.ctl.committed.brokers[1].fenced
    assert h.ctl.leases[1] > h.ctl.now_ms, "its lease still runs"
    solo = h.ctl.committed.topic("solo").partitions[0]
    assert (solo.leader, solo.isr) == (-1, (1,)), "the last replica standing, leaderless"
    before = len(h.log)
    h.effects.clear()
    token = h.send(rq.BrokerRegistrationRequest(1, CLUSTER, b"\x77" * 16))
    h.commit()
    answer = h.replies.pop(token)
    assert answer.error == ErrorCode.NONE
    assert answer.broker_epoch > old.epoch
    # the old incarnation handed its partitions over when it was fenced: only the
    # registration is written, and nothing it no longer has is taken from it again
    assert h.log[before:] == [h.log[answer.broker_epoch]]
    assert isinstance(h.log[answer.broker_epoch], RegisterBrokerRecord)
    assert [(e.source, e.target, e.reason) for e in h.effects
            if isinstance(e, MembershipChange)] == [("fenced", "fenced", REPLACES_FENCED)]
    t = h.ctl.committed.topic("t").partitions[0]
    assert t.leader in (2, 3) and 1 not in t.isr
    assert h.ctl.membership(1) is M.FENCED
    # the old incarnation's epoch is stale; the new one is unfenced once caught up and
    # leads again where it is the last replica standing
    stale = h.ask(rq.BrokerHeartbeatRequest(1, old.epoch, len(h.log) - 1, False))
    assert stale.error == ErrorCode.STALE_BROKER_EPOCH
    token = _beat(h, 1)
    h.commit()
    assert not h.replies.pop(token).is_fenced
    assert h.ctl.membership(1) is M.ACTIVE
    assert h.ctl.committed.topic("solo").partitions[0].leader == 1
    assert any(isinstance(r, PartitionChangeRecord) for r in h.log[answer.broker_epoch + 1:])


def test_a_broker_between_the_two_steps_of_its_shutdown_still_has_a_session() -> None:
    h = _three_brokers_broker_1_leading()
    _beat(h, 1, want_shut_down=True)
    h.commit()
    assert h.ctl.membership(1) is M.CONTROLLED_SHUTDOWN
    length = len(h.log)
    token = h.send(rq.BrokerRegistrationRequest(1, CLUSTER, b"\x77" * 16))
    assert h.replies.pop(token).error == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert len(h.log) == length
