"""The ISR expander's incremental scan (``isr_changes``) gives the full scan's answer: over
random replays on a running broker core -- ISR and leader changes, fences and unfences, a
controlled shutdown, a reassignment's adding replica, AlterPartition wishes and answers ahead
of the image -- after each round the incremental scan's ``found``, ``busy`` and ``running``
are ``scan``'s, and its ``led`` agrees with ``scan``'s for every partition it holds and holds
every partition the last round found or had busy. And it does look at less: a batch that
only fences a broker is not a pass over every replica; a broker that becomes eligible is."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.kraft_broker.isr_changes import MAX_CHANGED, ChangeLog, IncrementalScan
from adapters.kraft_broker.isr_expander import Scan, scan
from fsm.errors import ErrorCode
from fsm.kraft.broker.effects import SendToController
from fsm.kraft.broker.events import (
    ControllerResponse,
    IsrChangesWanted,
    IsrChangeWanted,
    MetadataFetched,
    MetadataSnapshotLoaded,
)
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.values import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    UnfenceBrokerRecord,
)
from tests.unit.kraft.broker.walk import ME, T1, T2, cluster_records, register, running

EPOCHS = {2: 1, 3: 2, 4: 12}
PARTITIONS = {(T1, 0): (1, 2, 3), (T1, 1): (2, 1, 3), (T1, 2): (2, 3), (T2, 0): (3, 1)}


class Rig:
    """A running broker 1 (the walk's cluster, and broker 4 registered fenced), the shell's
    change log noting what it is fed, and an incremental scan taking from it."""

    def __init__(self) -> None:
        self.core, _ = running([*cluster_records(), register(4, 12, fenced=True)])
        self.log = ChangeLog()
        self.inc = IncrementalScan(self.log.take)
        self.last = Scan(running=False)
        self.requests: list[Any] = []
        self.scans = 0

    def feed(self, event: Any) -> None:
        for e in self.core.handle(event):
            if isinstance(e, SendToController) and \
                    isinstance(e.request, rq.AlterPartitionRequest):  # (not heartbeats)
                self.requests.append(e.request)
        self.log.note(event)

    def replay(self, *records: Any) -> None:
        self.feed(MetadataFetched(self.core.metadata_offset + 1, records))

    def round(self) -> Scan:
        got, full = self.inc(self.core), scan(self.core)
        self.scans += 1
        assert (got.running, got.found, got.busy) == (full.running, full.found, full.busy)
        for key, isr in got.led.items():
            assert full.led[key] == isr
        for key in self.last.found.keys() | self.last.busy:
            if key in full.led:
                assert got.led[key] == full.led[key]
        self.last = got
        return got


def apply(rig: Rig, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "change":
        _, key, isr, leader = op
        replicas = PARTITIONS[key]
        rig.replay(PartitionChangeRecord(key[1], key[0],
                                         tuple(r for r in replicas if r in isr) or None,
                                         leader if leader in replicas or leader == -1 else -2))
    elif kind == "fence":
        rig.replay(FenceBrokerRecord(op[1], EPOCHS[op[1]]))
    elif kind == "unfence":
        rig.replay(UnfenceBrokerRecord(op[1], EPOCHS[op[1]]))
    elif kind == "shutdown":
        rig.replay(BrokerRegistrationChangeRecord(op[1], EPOCHS[op[1]],
                                                  in_controlled_shutdown=1))
    elif kind == "add4":
        rig.replay(PartitionChangeRecord(0, T1, replicas=(1, 2, 3, 4), adding_replicas=(4,)))
    elif kind == "wish":  # grow to every replica
        rig.feed(IsrChangesWanted((IsrChangeWanted(op[1][0], op[1][1], PARTITIONS[op[1]]),)))
    elif kind == "shrink":  # as the admin's isr_change: busy, nothing to find
        rig.feed(IsrChangesWanted((IsrChangeWanted(op[1][0], op[1][1], (ME,)),)))
    elif kind == "answer" and rig.requests:
        request = rig.requests.pop(0)
        results = tuple(rq.AlterPartitionResult(i.topic_id, i.partition_id, ErrorCode.NONE, ME,
                                                i.leader_epoch, i.new_isr,
                                                i.partition_epoch + 1)
                        for i in request.partitions)
        rig.feed(ControllerResponse(request, rq.AlterPartitionResponse(ErrorCode.NONE,
                                                                       results)))
    elif kind == "round":
        rig.round()


KEYS = st.sampled_from(sorted(PARTITIONS))
OPS = st.one_of(
    st.tuples(st.just("change"), KEYS, st.sets(st.integers(1, 3), min_size=1),
              st.sampled_from([-2, -1, 1, 2, 3])),
    st.tuples(st.sampled_from(["fence", "unfence", "shutdown"]), st.sampled_from([2, 3, 4])),
    st.tuples(st.just("add4")),
    st.tuples(st.sampled_from(["wish", "shrink"]), KEYS),
    st.tuples(st.just("answer")),
    st.tuples(st.just("round")),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(OPS, max_size=30))
def test_the_incremental_scan_is_the_full_scan(ops: list[tuple[Any, ...]]) -> None:
    rig = Rig()
    rig.round()
    for op in ops:
        apply(rig, op)
    rig.round()


def test_a_fence_is_not_a_pass_over_every_replica_and_an_unfence_is() -> None:
    rig = Rig()
    rig.replay(PartitionChangeRecord(0, T1, isr=(1,)))
    assert rig.round().found[(T1, 0)].new_isr == (1, 2, 3)
    assert rig.inc.full == 1  # the first round looks at everything
    rig.replay(FenceBrokerRecord(3, 2), PartitionChangeRecord(1, T1, isr=(2, 1)))
    assert rig.round().found[(T1, 0)].new_isr == (1, 2)
    assert rig.inc.full == 1
    rig.replay(UnfenceBrokerRecord(3, 2))  # 3 may join again: anywhere
    assert rig.round().found[(T1, 0)].new_isr == (1, 2, 3)
    assert rig.inc.full == 2
    rig.log.note(MetadataSnapshotLoaded(1_000, ()))
    assert rig.log.take() is None  # a snapshot: everything


def test_a_partition_busy_at_the_last_round_is_looked_at_again() -> None:
    """Asked (found, busy), then its joining broker fenced (busy, not found), then answered
    (neither): the chooser still needs the ISR held of it to say what became of the ask."""
    rig = Rig()
    rig.replay(PartitionChangeRecord(0, T1, isr=(1, 2)))
    rig.round()
    apply(rig, ("wish", (T1, 0)))
    assert rig.round().busy == {(T1, 0)}
    rig.replay(FenceBrokerRecord(3, 2))
    s = rig.round()
    assert s.busy == {(T1, 0)} and not s.found
    apply(rig, ("answer",))
    assert rig.round().led[(T1, 0)] == (1, 2, 3)
    assert rig.inc.full == 1


def test_the_change_log_notes_partitions_and_is_bounded() -> None:
    log = ChangeLog()
    assert log.take() is None  # nothing taken yet: everything
    log.note(MetadataFetched(0, (PartitionChangeRecord(1, T1, isr=(1,)), FenceBrokerRecord(3, 2),
                                 PartitionRecord(0, T2, (1,), (1,)))))
    assert log.take() == {(T1, 1), (T2, 0)}
    assert log.take() == set()
    log.note(MetadataFetched(0, tuple(PartitionChangeRecord(i, T1, leader=1)
                                      for i in range(MAX_CHANGED + 1))))
    assert log.take() is None
