"""Which ISR changes the world offers a leader: an expansion takes back only a replica whose
broker runs and follows that leader for the partition (``check deep --random --seed 442``
once found an ISR naming a broker the assignment no longer held, taken back that way)."""

from __future__ import annotations

from model_check.world import ControlledShutdownOf, CreateTopic, World, WorldConfig
from model_check.world import actions as A
from model_check.world.executor import isr_change_choices
from model_check.world.runner import Runner

TP = ("t", 0)
CONFIG = WorldConfig.with_faults(
    3, admin=(CreateTopic("t", ((0, (1, 2, 3)),)),), isr_change=3)


SHUTDOWN = WorldConfig.with_faults(
    3, admin=(CreateTopic("t", ((0, (1, 2, 3)),)), ControlledShutdownOf(3)), isr_change=3)


def running() -> tuple[World, Runner]:
    w = World(CONFIG)
    r = Runner(w, out=lambda _line: None)
    r.start_all()
    r.run()
    r.do(A.Action(A.ADMIN, 0, 0))
    r.run()
    assert w.is_quiescent() and w.active_controller() == 1
    return w, r


def expansions(w: World, leader: int) -> set[tuple[int, ...]]:
    return {a.arg[1] for a in isr_change_choices(w)
            if a.broker == leader and a.arg[0] == TP and len(a.arg[1]) == 3}


def test_a_follower_that_follows_the_leader_may_be_taken_back() -> None:
    w, r = running()
    r.do(A.Action(A.ISR_CHANGE, 1, (TP, (1, 2))))
    r.run()
    assert (TP, 1) in w.broker_facts(3).follows
    assert expansions(w, 1) == {(1, 2, 3)}


def test_a_broker_whose_replica_stopped_is_not_taken_back() -> None:
    w = World(SHUTDOWN)
    r = Runner(w, out=lambda _line: None)
    r.start_all()
    r.run()
    r.do(A.Action(A.ADMIN, 0, 0))
    r.run()
    r.do(A.Action(A.ADMIN, 0, 1))  # SIGTERM to broker 3: a controlled shutdown
    # the controller takes 3 out of the ISR and stops its replica; 3 hears that before the
    # answer that ends its process (the requests' channel is not the answers')
    r.do(A.Action(A.DELIVER, 3, next(a.arg for a in w.enabled_actions() if a.kind == A.DELIVER)))
    r.do(A.Action(A.PROCESS, 1))
    r.do(A.Action(A.COMMIT, 1))
    for _ in range(3):  # LeaderAndIsr, UpdateMetadata, StopReplica
        r.do(next(a for a in w.enabled_actions() if a.describe() == "deliver req 1->3"))
    assert w.zk.get("/brokers/topics/t/partitions/0/state").data.isr == (1, 2)
    assert w.procs[3].up
    assert (TP, 1) not in w.broker_facts(3).follows
    assert expansions(w, 1) == set()  # it does not fetch: Kafka's leader never adds it
