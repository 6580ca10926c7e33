"""The KRaft broker's ISR expander without processes: what ``scan`` finds in a broker core's
image (eligible replicas only, a reassignment's adding ones too, nothing busy or ahead of the
image), how ``Chooser`` debounces (never while busy, again only when the image moved the
partition or after a doubling backoff, at most a batch busy), and rounds against the real
quorum controller completing a reassignment and regrowing an ISR after a broker's return."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from adapters.kraft_broker.isr_expander import (
    Chooser,
    Expansion,
    IsrExpander,
    Outcomes,
    Scan,
    _submit_all,
    scan,
)
from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker
from fsm.kraft.broker.events import (
    ControllerResponse,
    HeartbeatDue,
    IsrChangesWanted,
    IsrChangeWanted,
    MetadataFetched,
    SigTerm,
)
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    UnfenceBrokerRecord,
)
from tests.unit.kraft.broker.test_with_controller import World
from tests.unit.kraft.broker.walk import ME, T1, T2, cluster_records, register, running, sent

# ---------------------------------------------------------------- scan


def _replay(core: KRaftBroker, *records: Any) -> None:
    core.handle(MetadataFetched(core.metadata_offset + 1, records))


def _shrunk() -> KRaftBroker:
    """Broker 1 RUNNING, leading t1-0 [1, 2, 3] with ISR [1] (partition epoch 1)."""
    core, _ = running()
    _replay(core, PartitionChangeRecord(0, T1, isr=(1,)))
    return core


def test_scan_asks_for_the_eligible_replicas_of_the_partitions_led() -> None:
    core = _shrunk()
    _replay(core, PartitionChangeRecord(0, T2, isr=(3,)))  # led by 3: not this broker's
    assert scan(core) == Scan({(T1, 0): Expansion((T1, 0), "t1-0", 0, 1, (1,), (1, 2, 3))},
                              led={(T1, 0): (1,)})
    # fenced, or in controlled shutdown: the controller would answer INELIGIBLE_REPLICA
    _replay(core, FenceBrokerRecord(3, 2),
            BrokerRegistrationChangeRecord(2, 1, in_controlled_shutdown=1))
    assert scan(core).found == {}
    _replay(core, UnfenceBrokerRecord(3, 2))
    assert scan(core).found[(T1, 0)].new_isr == (1, 3)


def test_scan_takes_a_reassignments_adding_replica_and_skips_unregistered_ones() -> None:
    core, _ = running([*cluster_records(), register(4, 3, fenced=True)])
    # t1-0 [1, 2, 3] -> [1, 2, 4]: 4 added (registered, fenced), 3 removed, ISR [1, 2, 3]
    _replay(core, PartitionChangeRecord(0, T1, replicas=(1, 2, 4, 3), adding_replicas=(4,),
                                        removing_replicas=(3,)))
    assert scan(core).found == {}
    _replay(core, UnfenceBrokerRecord(4, 3))
    assert scan(core).found[(T1, 0)].new_isr == (1, 2, 3, 4)
    # a replica on a broker the image does not know never joins
    _replay(core, PartitionChangeRecord(0, T1, replicas=(1, 2, 9, 3), adding_replicas=(9,)))
    assert scan(core).found == {}


def test_scan_names_busy_partitions_and_waits_for_an_answer_ahead_of_the_image() -> None:
    core = _shrunk()
    request = sent(core.handle(IsrChangesWanted((IsrChangeWanted(T1, 0, (1, 2)),))))
    s = scan(core)
    assert s.busy == {(T1, 0)} and (T1, 0) in s.found  # the chooser skips it
    core.handle(IsrChangesWanted((IsrChangeWanted(T1, 0, (1, 2, 3)),)))  # queued behind the one in flight
    # the controller's answer comes before its record: the core's view is ahead of the image

    core.handle(ControllerResponse(request, rq.AlterPartitionResponse(ErrorCode.NONE, (
        rq.AlterPartitionResult(T1, 0, ErrorCode.NONE, ME, 0, (1, 2), 2),))))
    s = scan(core)
    assert s.busy == {(T1, 0)}  # the queued wish went out
    assert (T1, 0) not in s.found  # view at partition epoch 2, image at 1: wait for it


def test_scan_finds_nothing_unless_running() -> None:
    core = _shrunk()
    core.handle(SigTerm())
    assert scan(core) == Scan(running=False)
    # a round then concludes nothing of the asks out (they are not granted)
    c = Chooser()
    c.choose(_scan(_e()), 0.0)
    assert c.choose(Scan(running=False), 1.0) == ([], Outcomes())
    assert c.asked == {(T1, 0): _e()}


# ---------------------------------------------------------------- the chooser


def _e(partition: int = 0, partition_epoch: int = 1, new_isr: tuple[int, ...] = (1, 2)
       ) -> Expansion:
    return Expansion((T1, partition), f"t1-{partition}", 0, partition_epoch, (1,), new_isr)


def _scan(*es: Expansion, busy: tuple[Expansion, ...] = (),
          led: dict[Any, tuple[int, ...]] | None = None) -> Scan:
    return Scan({e.key: e for e in es}, frozenset(e.key for e in busy), led or {})


def test_the_chooser_asks_once_and_not_while_busy_and_reports_a_grant() -> None:
    c = Chooser(batch=10, backoff_s=1.0, max_backoff_s=4.0)
    e = _e()
    assert c.choose(_scan(e), 0.0)[0] == [e]
    assert c.choose(_scan(e, busy=(e,)), 0.1)[0] == []  # in flight
    assert c.choose(_scan(e, busy=(e,)), 9.0)[0] == []  # still: never a second one
    chosen, outcomes = c.choose(_scan(led={e.key: (1, 2)}), 9.1)  # answered, expanded
    assert chosen == [] and outcomes.granted == ["t1-0 [1]+[2]"] and c.asked == {}
    # asked again; then another ISR came (overtaken), or another leader (no longer led)
    c.choose(_scan(e), 10.0)
    _, outcomes = c.choose(_scan(led={e.key: (1, 3)}), 10.1)
    assert outcomes.overtaken == ["t1-0 [1]+[2]"] and outcomes.granted == []
    c.choose(_scan(e), 11.0)
    _, outcomes = c.choose(_scan(), 11.1)
    assert outcomes.not_led == ["t1-0 [1]+[2]"] and str(outcomes) == \
        "1 no longer led (t1-0 [1]+[2])"


def test_a_refused_ask_waits_a_doubling_backoff_unless_the_image_moves_the_partition() -> None:
    c = Chooser(batch=10, backoff_s=1.0, max_backoff_s=4.0)
    e = _e()
    asked_at = [t for t in (0.0, 0.5, 0.9, 1.0, 2.0, 2.9, 3.0, 6.0, 6.9, 7.0, 10.9, 11.0)
                if c.choose(_scan(e), t)[0]]
    assert asked_at == [0.0, 1.0, 3.0, 7.0, 11.0]  # +1, +2, +4, +4 (capped)
    _, outcomes = c.choose(_scan(e), 11.1)
    assert outcomes.refused == ["t1-0 [1]+[2]"]  # reported once per ask
    assert not c.choose(_scan(e), 11.2)[1]
    # the image moved the partition (a new partition epoch): asked at once, backoff reset
    moved = _e(partition_epoch=2)
    chosen, outcomes = c.choose(_scan(moved), 11.3)
    assert chosen == [moved] and not outcomes  # the refusal was reported already
    assert c.choose(_scan(moved), 12.3)[0] == [moved]
    # another broker became eligible (the wanted ISR changed) while an ask was out: overtaken
    wider = _e(partition_epoch=2, new_isr=(1, 2, 3))
    chosen, outcomes = c.choose(_scan(wider), 12.4)
    assert chosen == [wider] and outcomes.overtaken == ["t1-0 [1]+[2]"]


def test_at_most_a_batch_of_partitions_is_busy() -> None:
    c = Chooser(batch=3)
    es = [_e(p) for p in range(5)]
    assert [e.key[1] for e in c.choose(_scan(*es), 0.0)[0]] == [0, 1, 2]
    granted = {e.key: (1, 2) for e in es}
    # 2 granted, 0 and 1 still in flight: one more
    chosen, outcomes = c.choose(_scan(es[0], es[1], es[3], es[4], busy=tuple(es[:2]),
                                      led=granted), 0.1)
    assert [e.key[1] for e in chosen] == [3] and outcomes.granted == ["t1-2 [1]+[2]"]
    # all answered, 0, 1 and 3 granted: 4 now
    chosen, outcomes = c.choose(_scan(es[4], led=granted), 0.2)
    assert chosen == [es[4]] and len(outcomes.granted) == 3


def test_replicas_held_out_stay_out_until_the_hold_ends() -> None:
    c = Chooser(batch=10)
    both = _e(new_isr=(1, 2, 3))
    c.hold((T1, 0), (2,), until=5.0)  # an isr_change shrink said 2 fell behind
    assert c.choose(_scan(both), 0.0)[0] == [_e(new_isr=(1, 3))]
    c.hold((T1, 0), (2, 3), until=5.0)  # a later hold replaces it
    assert c.choose(_scan(both), 1.0)[0] == []  # nothing left to ask for
    assert c.choose(_scan(both), 4.9)[0] == []
    assert c.choose(_scan(both), 5.0)[0] == [both]  # the hold is over: asked at once


def test_the_chooser_refuses_bad_bounds() -> None:
    for kw in ({"batch": 0}, {"backoff_s": 0}, {"backoff_s": 2.0, "max_backoff_s": 1.0}):
        with pytest.raises(ValueError):
            Chooser(**kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------- rounds, real controller


def _expander(w: World, b: int) -> tuple[IsrExpander, list[Any], list[float]]:
    asked: list[Any] = []
    now = [0.0]

    def read(fn: Any) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(fn(w.brokers[b]))
        return f

    def submit(ev: object) -> bool:
        asked.append(ev)
        w.feed(b, ev)  # the controller answers at once (committed)
        return True

    return IsrExpander(b, read, submit, clock=lambda: now[0]), asked, now


def test_rounds_complete_a_reassignment_and_regrow_an_isr_after_a_return() -> None:
    w = World()
    for b in (1, 2, 3, 4):
        w.start(b)
    w.run(until=100)
    t = w.h.create("t", assignments=((0, (1, 2, 3)),))
    w.run(until=200)
    x, asked, now = _expander(w, 1)
    assert x.round() == [] and asked == []  # the ISR is whole

    # move t-0 to [1, 2, 4]: 4 is adding; the leader's round takes it into the ISR and the
    # controller completes the reassignment on that AlterPartition
    moved = w.h.ask(rq.AlterPartitionReassignmentsRequest(
        (rq.ReassignablePartition("t", 0, (1, 2, 4)),)))
    assert moved.results[0].error == ErrorCode.NONE
    w.run(until=300)
    assert w.h.partition("t").adding_replicas == (4,)
    assert [e.new_isr for e in x.round()] == [(1, 2, 3, 4)]
    w.run(until=400)
    p = w.h.partition("t")
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == \
        ((1, 2, 4), (1, 2, 4), (), ())
    assert w.h.ask(rq.ListPartitionReassignmentsRequest()).reassignments == ()

    # broker 4 stops heartbeating: its session expires, the controller fences it and takes it
    # out of the ISR; the leader's round finds nobody to take in
    w.timers.pop(4)
    w.run(until=30_000)
    w.h.tick(30_000)
    w.fetch()
    assert w.h.partition("t").isr == (1, 2) and w.brokers[1].image.brokers[4].fenced
    now[0] = 30.0
    assert x.round() == [] and len(asked) == 1
    # back (heartbeating, caught up): unfenced, and the next round takes it back
    w.now = 30_000
    w.feed(4, HeartbeatDue(w.now))
    w.run(until=31_000)
    assert not w.brokers[1].image.brokers[4].fenced
    now[0] = 31.0
    assert [e.new_isr for e in x.round()] == [(1, 2, 4)]
    w.run(until=32_000)
    assert w.h.partition("t").isr == (1, 2, 4) and w.h.partition("t").leader == 1
    # each round's asks went to the core as one IsrChangesWanted (one AlterPartition)
    assert [type(ev) for ev in asked] == [IsrChangesWanted] * 2
    assert [c.topic_id for ev in asked for c in ev.changes] == [t.topic_id] * 2


def test_a_rounds_asks_go_to_the_core_as_one_event() -> None:
    asks = [Expansion((uuid_of(7), p), f"x-{p}", 0, 0, (1,), (1, 2)) for p in range(3)]
    got: list[object] = []
    assert _submit_all(asks, lambda ev: got.append(ev) or True) == asks
    assert got == [IsrChangesWanted(tuple(IsrChangeWanted(uuid_of(7), p, (1, 2))
                                          for p in range(3)))]
    assert _submit_all([], lambda ev: got.append(ev) or True) == [] and len(got) == 1
    assert _submit_all(asks, lambda ev: False) == []  # the shell stopped: nothing asked
