"""Every invariant: hand-built views that break it (and nothing else) and views that keep it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from invariant_views import (
    CE,
    LE,
    TP,
    VERSION,
    healthy,
    metadata,
    replica,
    state,
    with_broker,
    with_controller,
    with_zk,
)

import invariants as I
from invariants.partitions import committers
from invariants.view import LEADER, NO_LEADER, AppliedView, ControllerView, GlobalView

H = healthy()


def c(*specs: tuple[int, bool, int]) -> tuple[ControllerView, ...]:
    return tuple(ControllerView(b, True, active, epoch) for b, active, epoch in specs)


def two_leaders(unclean: bool = False) -> GlobalView:
    """Broker 1 (paused, ISR shrunk to itself at epoch 2) and broker 2 (elected at epoch 3
    with ISR {2,3}, broker 3 follows it): both can commit."""
    v = with_zk(H, partitions=((TP, state(leader=2, leader_epoch=3, isr=(2, 3), version=7)),))
    v = with_broker(v, 1, replicas=((TP, replica(1, isr=(1,), version=6)),))
    v = with_broker(v, 2, replicas=((TP, replica(2, leader=2, leader_epoch=3, isr=(2, 3),
                                                 version=7)),))
    v = with_broker(v, 3, replicas=((TP, replica(3, leader=2, leader_epoch=3, isr=(2, 3),
                                                 version=7)),))
    return replace(v, unclean_leader_election=unclean)


def seed_001_section_3(new_leader_isr: tuple[int, ...], c_follows: int) -> GlobalView:
    """Seed 001 §3: A=1 led {1,2,3} at epoch 2 and wakes from a GC pause still believing it
    leads; the controller elected B=2 (epoch 3, ISR {2,3}); C=3 follows ``c_follows``."""
    v = with_zk(H, partitions=((TP, state(leader=2, leader_epoch=3, isr=new_leader_isr,
                                          version=7)),))
    v = with_broker(v, 2, replicas=((TP, replica(2, leader=2, leader_epoch=3,
                                                 isr=new_leader_isr, version=7)),))
    if c_follows == 2:
        v = with_broker(v, 3, replicas=((TP, replica(3, leader=2, leader_epoch=3,
                                                     isr=(2, 3), version=6)),))
    return v


# (invariant, bad views, good views) for state and quiescent invariants
STATE_CASES: list[tuple[str, list[GlobalView], list[GlobalView]]] = [
    ("one_active_controller_per_epoch",
     [replace(H, controllers=c((1, True, CE), (2, True, CE), (3, False, 0)))],
     [H, replace(H, controllers=c((1, True, CE), (2, True, CE - 1), (3, False, 0))),
      replace(H, controllers=(ControllerView(1, True, True, CE),
                              ControllerView(2, False, True, CE))),
      replace(H, controllers=None)]),
    ("active_controller_epoch_not_ahead_of_zookeeper",
     [replace(H, controllers=c((1, True, CE), (2, True, CE + 1), (3, False, 0))),
      replace(H, controllers=c((1, True, CE - 1), (2, False, 0), (3, False, 0)))],
     [H, replace(H, controllers=c((1, False, 0), (2, True, CE - 1), (3, False, 0)))]),
    ("controller_epochs_not_ahead_of_zookeeper",
     [with_broker(H, 2, controller_epoch=CE + 1),
      with_zk(H, partitions=((TP, state(controller_epoch=CE + 1)),))],
     [H, with_broker(H, 2, controller_epoch=CE - 1)]),
    ("leader_in_isr",
     [with_zk(H, partitions=((TP, state(isr=(2, 3))),)),
      with_broker(H, 1, replicas=((TP, replica(1, isr=(2, 3))),))],
     [H, with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),)),
      with_broker(H, 1, replicas=((TP, replica(1, isr=(2, 3), fenced=True)),))]),
    ("isr_within_assigned_replicas",
     [with_zk(H, partitions=((TP, state(isr=(1, 2, 4))),)),
      with_zk(H, partitions=((TP, state(isr=(1, 2, 2))),))],
     [H, with_zk(H, assignments=((TP, (1, 2, 3, 4)),))]),
    ("isr_never_empty",
     [with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=())),))],
     [H, with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(3,))),))]),
    ("at_most_one_committer",
     [two_leaders()],
     [H, two_leaders(unclean=True),
      seed_001_section_3((2, 3), c_follows=2),  # C switched to B: only B commits
      seed_001_section_3((2, 3), c_follows=1),  # C still on A: nobody commits
      seed_001_section_3((2,), c_follows=1),  # the caveat: B shrank to {B} first
      with_broker(two_leaders(), 1, replicas=((TP, replica(1, isr=(1,), fenced=True)),)),
      with_broker(two_leaders(), 1, state="RECOVERY"),
      with_broker(two_leaders(), 1, up=False)]),
    ("no_request_applied_across_epochs",
     [with_broker(H, 2, applied=AppliedView(CE, 99, CE)),
      with_broker(H, 2, applied=AppliedView(CE - 1, 11, CE))],
     [H, with_broker(H, 2, applied=None), with_broker(H, 2, applied=AppliedView(CE, 11, CE - 1))]),
    ("controlled_shutdown_moved_leadership",
     # broker 1 stopped on its controlled-shutdown answer, ZooKeeper still names it leader
     [with_broker(H, 1, up=False, state="NOT_RUNNING", shut_down=True)],
     [H,
      # the leadership moved to 2 before it stopped
      with_zk(with_broker(H, 1, up=False, state="NOT_RUNNING", shut_down=True),
              partitions=((TP, state(leader=2, leader_epoch=LE + 1, isr=(2, 3))),)),
      # it crashed (no answer): not judged
      with_broker(H, 1, up=False, state="NOT_RUNNING"),
      # no other live ISR replica: the leadership could not move
      with_zk(with_broker(H, 1, up=False, state="NOT_RUNNING", shut_down=True),
              partitions=((TP, state(isr=(1, 3))),), brokers=((1, 10), (2, 11)))]),
]

QUIESCENT_CASES: list[tuple[str, list[GlobalView], list[GlobalView]]] = [
    ("metadata_matches_zookeeper",
     [with_broker(H, 3, metadata=metadata(leader_epoch=LE - 1)),
      with_broker(H, 3, metadata=metadata(live=((1, 10), (2, 11)))),
      with_broker(H, 3, metadata=metadata(controller=2)),
      with_broker(H, 3, metadata=metadata(live=(), controller=None))],
     [H, with_broker(H, 3, metadata=metadata(leader_epoch=LE - 1), state="RECOVERY"),
      with_broker(H, 3, metadata=metadata(leader_epoch=LE - 1), epoch=7)]),
    ("no_offline_partition_with_live_isr_replica",
     [replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),)),
              brokers=None)],
     [H, replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                         brokers=((2, 11), (3, 12))), brokers=None),
      replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                      topics_pending_deletion=("t",)), brokers=None)]),
    ("leader_is_registered_or_none",  # broker 1 leads t-0 but is no longer registered
     [replace(with_zk(H, brokers=((2, 11), (3, 12))), brokers=None)],
     [H, replace(with_zk(H, brokers=((2, 11), (3, 12)),
                         partitions=((TP, state(leader=NO_LEADER)),)), brokers=None),
      replace(with_zk(H, brokers=((2, 11), (3, 12)), topics_pending_deletion=("t",)),
              brokers=None),
      replace(with_zk(H, brokers=((2, 11), (3, 12))), brokers=None,
              controllers=c((1, False, 0), (2, False, 0), (3, False, 0)))]),
    ("finished_reassignment_has_target_replicas",
     [replace(H, reassign_targets=((TP, (2, 3)),)),
      replace(H, reassign_targets=((TP, (3, 2, 1)),))],
     [replace(H, reassign_targets=((TP, (1, 2, 3)),)),
      replace(with_zk(H, reassignments_pending=((TP, (2, 3)),)), reassign_targets=((TP, (2, 3)),)),
      replace(H, reassign_targets=((("gone", 0), (2, 3)),))]),
    ("deleted_topic_leaves_no_replica",
     [replace(with_broker(H, 2, replicas=((TP, replica(2)), (("d", 0), replica(2)))),
              deleted_topics=("d",)),
      replace(with_zk(H, topics_pending_deletion=("d",)), deleted_topics=("d",))],
     [replace(H, deleted_topics=("d",)),
      replace(with_broker(H, 2, replicas=((TP, replica(2)), (("d", 0), replica(2))), up=False),
              deleted_topics=("d",))]),
    ("no_offline_partition_with_live_replica_when_unclean",
     # the whole ISR (broker 1) is gone, replicas 2 and 3 are live: unclean would elect one
     [replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                      brokers=((2, 11), (3, 12))), brokers=None, unclean_leader_election=True)],
     [H, replace(H, unclean_leader_election=True),
      # unclean election off: waiting for the ISR is the clean choice
      replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                      brokers=((2, 11), (3, 12))), brokers=None),
      # no assigned replica is live
      replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                      brokers=((4, 13),)), brokers=None, unclean_leader_election=True),
      replace(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                      brokers=((2, 11), (3, 12)), topics_pending_deletion=("t",)),
              brokers=None, unclean_leader_election=True)]),
    ("replicas_follow_zookeeper",
     [with_broker(H, 3, replicas=((TP, replica(3, leader_epoch=LE - 1)),)),
      with_broker(H, 1, replicas=((TP, replica(1, fenced=True)),)),
      with_broker(H, 1, replicas=((TP, replica(1, version=VERSION - 1)),)),
      with_broker(H, 3, replicas=((TP, replica(3, role="stopped")),)),
      with_broker(H, 3, replicas=())],
     [H, with_broker(H, 3, replicas=(), up=False),
      with_zk(H, reassignments_pending=((TP, (2, 3)),))]),
]


def names(vs: list[I.Violation]) -> set[str]:
    return {v.invariant for v in vs}


@pytest.mark.parametrize("name,bad,good", STATE_CASES, ids=[x[0] for x in STATE_CASES])
def test_state_invariant(name: str, bad: list[GlobalView], good: list[GlobalView]) -> None:
    inv = I.by_name(name)
    assert inv.kind == "state"
    for i, v in enumerate(bad):
        got = I.check_state(v)
        assert names(got) == {name}, f"bad view #{i}: {got}"
        assert all("\n" not in x.detail for x in got)
    for i, v in enumerate(good):
        assert inv.check(v) == [], f"good view #{i}"


@pytest.mark.parametrize("name,bad,good", QUIESCENT_CASES, ids=[x[0] for x in QUIESCENT_CASES])
def test_quiescent_invariant(name: str, bad: list[GlobalView], good: list[GlobalView]) -> None:
    inv = I.by_name(name)
    assert inv.kind == "quiescent"
    for i, v in enumerate(bad):
        got = I.check_quiescent(v)
        assert names(got) == {name}, f"bad view #{i}: {got}"
        assert I.check_quiescent(replace(v, pending=True)) == []  # only when quiescent
    for i, v in enumerate(good):
        assert inv.check(v) == [], f"good view #{i}"


def step(**broker2: object) -> Callable[[GlobalView], GlobalView]:
    return lambda v: with_broker(v, 2, **broker2)


def elected(leader: int, isr: tuple[int, ...], **changes: object) -> GlobalView:
    """H after the controller (epoch CE) elected ``leader`` with ``isr``: epoch and version
    bumped; ``changes`` go to ZooKeeper's view."""
    return with_zk(H, partitions=((TP, state(leader=leader, leader_epoch=LE + 1, isr=isr,
                                             version=VERSION + 1)),), **changes)


# t-0's whole ISR (broker 1) is gone: leader -1, ISR [1]; controller 1 holds 2 and 3 live
OFFLINE_1 = with_controller(with_zk(H, partitions=((TP, state(leader=NO_LEADER, isr=(1,))),),
                                    brokers=((2, 11), (3, 12))), 1, live=(2, 3))
UNCLEAN = replace(OFFLINE_1, unclean_leader_election=True)


def unclean(leader: int, isr: tuple[int, ...], before: GlobalView = UNCLEAN
            ) -> tuple[GlobalView, GlobalView]:
    """The step ``before`` -> t-0 led by ``leader`` with ``isr`` (an election from OFFLINE_1)."""
    return before, with_zk(before, partitions=((TP, state(leader=leader, leader_epoch=LE + 1,
                                                          isr=isr, version=VERSION + 1)),))


# A case is the state after the step (the state before it is H) or a (before, after) pair.
Step = GlobalView | tuple[GlobalView, GlobalView]

TRANSITION_CASES: list[tuple[str, list[Step], list[Step]]] = [
    ("controller_epoch_never_decreases",
     [with_zk(H, controller_epoch=CE - 1), with_zk(H, controller_epoch_version=CE - 1),
      with_broker(H, 2, controller_epoch=CE - 1)],
     [with_zk(H, controller_epoch=CE + 1, controller_epoch_version=CE + 1),
      with_broker(H, 2, controller_epoch=0, up=False),
      with_zk(H, controller_epoch=None)]),
    ("leader_epoch_never_decreases",
     [with_zk(H, partitions=((TP, state(leader_epoch=LE - 1, version=VERSION + 1)),)),
      with_broker(H, 2, replicas=((TP, replica(2, leader_epoch=LE - 1)),))],
     [with_zk(H, partitions=((TP, state(leader_epoch=LE + 1, version=VERSION + 1)),)),
      with_zk(H, partitions=((TP, state(leader_epoch=0, version=0, czxid=99)),)),
      with_broker(H, 2, replicas=((TP, replica(2, leader_epoch=0)),), up=False)]),
    ("leader_change_bumps_leader_epoch",
     [with_zk(H, partitions=((TP, state(leader=2, version=VERSION + 1)),)),
      with_broker(H, 2, replicas=((TP, replica(2, leader=3)),))],
     [with_zk(H, partitions=((TP, state(leader=2, leader_epoch=LE + 1, version=VERSION + 1)),)),
      with_zk(H, partitions=((TP, state(leader=2, leader_epoch=0, version=0, czxid=99)),)),
      with_zk(H, partitions=((TP, state(isr=(1, 2), version=VERSION + 1)),)),
      with_broker(H, 2, replicas=((TP, replica(2, leader=3, leader_epoch=LE + 1)),))]),
    ("partition_state_decided_by_current_controller",
     # a deposed controller's decision (KAFKA-6082), or its new partition
     [with_zk(H, partitions=((TP, state(leader=2, leader_epoch=LE + 1, version=VERSION + 1,
                                        controller_epoch=CE - 1)),)),
      with_zk(H, partitions=((TP, state(leader_epoch=0, version=0, czxid=99,
                                        controller_epoch=CE - 1)),))],
     [with_zk(H, partitions=((TP, state(leader=2, leader_epoch=LE + 1, version=VERSION + 1)),)),
      # a leader's own ISR change keeps the partition's (older) controller epoch
      with_zk(H, partitions=((TP, state(isr=(1, 2), version=VERSION + 1,
                                        controller_epoch=CE - 1)),))]),
    ("partition_state_version_never_decreases",
     [with_zk(H, partitions=((TP, state(version=VERSION - 1)),))],
     [with_zk(H, partitions=((TP, state(version=VERSION + 1)),)),
      with_zk(H, partitions=((TP, state(leader_epoch=0, version=0, czxid=99)),))]),
    ("newly_applied_request_is_current",
     # the broker's own bookkeeping claims nothing higher was applied before: only the
     # step-wise check sees the older controller epoch
     [with_broker(H, 2, applied=AppliedView(CE - 1, 11, CE - 1)),
      with_broker(H, 2, applied=AppliedView(CE, 99, CE), epoch=11)],
     [with_broker(H, 2, applied=AppliedView(CE + 1, 11, CE), controller_epoch=CE + 1),
      # re-registered after a session expiry: a new broker epoch, same controller epoch
      with_broker(H, 2, applied=AppliedView(CE, 20, CE), epoch=20)]),
    ("new_leader_is_live_assigned_replica",
     [elected(2, (2, 3), assignments=((TP, (1, 3)),)),  # 2 holds no replica
      # controller 1 does not hold 2 live (it died before the decision)
      (with_controller(H, 1, live=(1, 3)), elected(2, (2, 3))),
      # 2 is shutting down
      (with_controller(H, 1, shutting_down=(2,)), elected(2, (2, 3))),
      # a new partition created with a leader the controller does not hold live
      (with_controller(H, 1, live=(1, 3)),
       with_zk(H, partitions=((TP, state(leader=2, leader_epoch=0, version=0, czxid=99)),)))],
     [elected(2, (2, 3)), elected(NO_LEADER, (1, 2, 3)),
      # a leader's own ISR change: the leader does not change, whatever the controller holds
      (with_controller(H, 1, live=(2, 3)),
       with_zk(H, partitions=((TP, state(isr=(1, 2), version=VERSION + 1)),))),
      # a live audit: no controller view, only "assigned" is judged
      (replace(H, controllers=None), replace(elected(2, (2, 3)), controllers=None)),
      # the deciding controller (epoch CE + 1) is not visible
      (with_controller(H, 1, live=(1, 3)),
       with_zk(H, partitions=((TP, state(leader=2, leader_epoch=LE + 1, version=VERSION + 1,
                                         controller_epoch=CE + 1)),)))]),
    ("unclean_election_only_as_last_resort",
     [unclean(2, (2,), before=OFFLINE_1),  # unclean election disabled
      unclean(2, (2, 3)),  # the new ISR is not the new leader alone
      # 1, the ISR's only member, is live and eligible for the controller
      unclean(2, (2,), before=with_controller(UNCLEAN, 1, live=(1, 2, 3))),
      # away from a live, eligible leader (2, ISR [2]) to 3 outside the ISR
      unclean(3, (3,), before=with_zk(UNCLEAN, partitions=((TP, state(leader=2, isr=(2,))),)))],
     [unclean(2, (2,)),  # the last resort: no ISR member is live
      unclean(1, (1,), before=OFFLINE_1),  # 1 came back: a clean election
      # 1 is live but shutting down: not eligible, so the last resort
      unclean(2, (2,), before=with_controller(UNCLEAN, 1, live=(1, 2, 3),
                                              shutting_down=(1,))),
      # a live audit: no controller view, the setting and the new ISR are judged
      unclean(2, (2,), before=replace(UNCLEAN, controllers=None)),
      elected(2, (2, 3))]),  # a clean election (2 was in the ISR)
]


def before_after(case: Step) -> tuple[GlobalView, GlobalView]:
    return case if isinstance(case, tuple) else (H, case)


@pytest.mark.parametrize("name,bad,good", TRANSITION_CASES,
                         ids=[x[0] for x in TRANSITION_CASES])
def test_transition_invariant(name: str, bad: list[Step], good: list[Step]) -> None:
    inv = I.by_name(name)
    assert inv.kind == "transition"
    for i, case in enumerate(bad):
        got = I.check_transition(*before_after(case))
        assert names(got) == {name}, f"bad step #{i}: {got}"
        assert all("\n" not in x.detail for x in got)
    for i, case in enumerate(good):
        assert inv.check(*before_after(case)) == [], f"good step #{i}"


def test_transition_invariants_hold_on_a_stutter() -> None:
    """A step that changes nothing breaks no transition invariant (``check_transition``
    skips steps whose parts are the very same objects; equal copies pass too)."""
    views = [v for _, bad, good in STATE_CASES + QUIESCENT_CASES + TRANSITION_CASES
             for case in bad + good for v in before_after(case)]
    for v in views:
        assert I.check_transition(v, v) == []
        for inv in I.CATALOGUE:
            if inv.kind == "transition":
                assert inv.check(v, replace(v)) == [], inv.name


def test_every_invariant_has_cases() -> None:
    covered = {x[0] for x in STATE_CASES + QUIESCENT_CASES + TRANSITION_CASES}
    assert covered == {inv.name for inv in I.CATALOGUE}


def test_healthy_cluster_passes_everything() -> None:
    assert I.check_state(H) == []
    assert I.check_quiescent(H) == []
    assert I.check_transition(H, H) == []


def test_unknown_parts_are_skipped() -> None:
    empty = GlobalView()
    assert I.check_state(empty) == [] and I.check_transition(empty, empty) == []
    assert I.check_quiescent(empty) == []
    assert I.check_state(replace(two_leaders(), zk=None, controllers=None)) != []


def test_committer_needs_followers_at_its_leader_epoch() -> None:
    assert committers(H, TP) == [1]
    stale = with_broker(H, 3, replicas=((TP, replica(3, leader_epoch=LE - 1)),))
    assert committers(stale, TP) == []
    down = with_broker(H, 3, up=False)
    assert committers(down, TP) == []
    unknown = replace(H, brokers=tuple(b for b in H.brokers or () if b.broker_id != 3))
    assert committers(unknown, TP) == []
    stopped = with_broker(H, 2, replicas=((TP, replica(2, role="stopped")),))
    assert committers(stopped, TP) == []
    assert committers(H, ("other", 0)) == []
    assert replica(1).role == LEADER


def test_api() -> None:
    assert len({i.name for i in I.CATALOGUE}) == len(I.CATALOGUE)
    for inv in I.CATALOGUE:
        assert inv.kind in ("state", "transition", "quiescent")
        assert inv.source and inv.doc and inv.check.__name__ == inv.name
        assert I.by_name(inv.name) is inv
    with pytest.raises(KeyError):
        I.by_name("no_such_invariant")
    v = I.Violation("x", "y")
    assert str(v) == "x: y" and hash(v) == hash(I.Violation("x", "y"))
    with pytest.raises(AttributeError):
        v.detail = "z"  # type: ignore[misc]
