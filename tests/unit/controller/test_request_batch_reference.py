"""``RequestBatch.finish`` against the code it replaced: the same effects, value for value.

``reference_finish`` is ``RequestBatch.finish`` as it stood before issue 26's speed work (one
pass over the assignment per broker of a full LeaderAndIsr, the entries built by the frozen
dataclasses' ``__init__``), kept here only as the reference the rewrite must equal. Hypothesis
draws contexts (live and dead brokers, assignments, states missing or for unknown partitions,
topics being deleted) and batches (LeaderAndIsr groups overlapping a full LeaderAndIsr,
UpdateMetadata to some or all, StopReplica); both must produce equal effects in the same
order. The builders of the entries are held to the dataclasses' constructors too."""

from __future__ import annotations

from operator import attrgetter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.controller.context import ControllerContext
from fsm.controller.request_batch import RequestBatch
from fsm.effects import SendRequest
from fsm.request_builders import new_leader_and_isr_partition, new_update_metadata_partition
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import (
    LEADER_DURING_DELETE,
    BrokerInfo,
    LeaderAndIsr,
    PartitionStateZk,
    TopicPartition,
)

_leader_of = attrgetter("leader")
POOL = range(6)
TOPICS = ("a", "b", "c")


def reference_finish(self: RequestBatch, ctx: ControllerContext, controller_id: int,
                     epoch: int) -> list[SendRequest]:
    """``RequestBatch.finish`` as it was at e1f369a, unchanged but for its name."""
    if self.empty():
        return []
    live = ctx.live
    states = ctx.states
    assignment = ctx.assignment
    out: list[SendRequest] = []
    brokers = tuple(live[b] for b in sorted(live))

    # LeaderAndIsr: each partition's entry built once, shared by all its brokers.
    per_broker: dict[int, list[dict[TopicPartition, None]]] = {}
    for reps, tps in self.lai.items():
        for b in reps:
            per_broker.setdefault(b, []).append(tps)
    to_delete = ctx.to_delete
    for b in self.lai_full:
        per_broker.setdefault(b, []).append(
            dict.fromkeys(tp for tp, reps in assignment.items()
                          if b in reps and tp[0] not in to_delete))
    lai_parts: dict[TopicPartition, LeaderAndIsrPartition] = {}
    wanted: dict[TopicPartition, None] = {}
    for b, groups in per_broker.items():
        if b in live:
            for tps in groups:
                wanted.update(tps)
    um_all = bool(self.um or self.um_all_partitions_to or self.um_everyone)
    offline_of: dict[tuple[int, ...], tuple[int, ...]] = {}

    def build(tps: list[TopicPartition], um: bool) -> tuple[UpdateMetadataPartition, ...]:
        """UpdateMetadata entries for ``tps`` (when ``um``), and the LeaderAndIsr entries
        of the wanted ones among them, in one pass (one lookup per partition)."""
        parts = []
        append = parts.append
        for tp in tps:
            st = states.get(tp)
            replicas = assignment.get(tp)
            if st is None or replicas is None:
                continue
            li = st.leader_and_isr
            if tp in wanted and tp not in lai_parts:
                lai_parts[tp] = LeaderAndIsrPartition(
                    tp[0], tp[1], li.controller_epoch, li.leader, li.leader_epoch, li.isr,
                    st.version, replicas)
            if um:
                offline = offline_of.get(replicas)
                if offline is None:
                    offline = offline_of[replicas] = tuple(
                        r for r in replicas if r not in live)
                append(UpdateMetadataPartition(
                    tp[0], tp[1], li.controller_epoch,
                    LEADER_DURING_DELETE if tp[0] in to_delete else li.leader,
                    li.leader_epoch, li.isr, st.version, replicas, offline))
        return tuple(parts)

    common = build(sorted(self.um), True) if um_all and self.um else ()
    build([tp for tp in wanted if tp not in lai_parts], False)
    for b in sorted(per_broker):
        if b not in live:
            continue
        groups = per_broker[b]
        tps = groups[0]
        if len(groups) > 1:
            tps = {}
            for g in groups:
                tps.update(g)  # sorted runs, deduplicated: sorted() merges the runs
        parts = tuple(filter(None, map(lai_parts.get, sorted(tps))))
        if not parts:
            continue
        leaders = sorted(set(map(_leader_of, parts)).intersection(live))
        out.append(SendRequest(b, LeaderAndIsrRequest(
            controller_id, epoch, live[b].epoch, parts,
            tuple(live[x] for x in leaders))))

    # UpdateMetadata: one tuple of entries shared by every broker it goes to.
    if um_all:
        full: tuple[UpdateMetadataPartition, ...] | None = None
        for b in sorted(live):
            if b in self.um_all_partitions_to:
                if full is None:
                    if len(self.um) == len(states) and self.um.keys() == states.keys():
                        full = common  # every partition is announced anyway
                    else:
                        full = build(sorted(states), True)
                parts = full
            else:
                parts = common
            if not parts and not self.um_everyone:
                continue
            out.append(SendRequest(b, UpdateMetadataRequest(
                controller_id, epoch, live[b].epoch, parts, brokers)))
    for (b, delete) in sorted(self.stop):
        if b not in live:
            continue
        out.append(SendRequest(b, StopReplicaRequest(
            controller_id, epoch, live[b].epoch, delete, tuple(sorted(self.stop[(b, delete)])))))
    return out


@st.composite
def cases(draw: st.DrawFn) -> tuple[ControllerContext, RequestBatch]:
    ctx = ControllerContext()
    live = draw(st.sets(st.sampled_from(POOL)))
    ctx.live = {b: BrokerInfo(b, 100 + b) for b in sorted(live)}
    replica_lists = st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True).map(tuple)
    tps: list[TopicPartition] = []
    for t in draw(st.lists(st.sampled_from(TOPICS), unique=True)):
        for p in range(draw(st.integers(1, 4))):
            tp = (t, p)
            tps.append(tp)
            ctx.assignment[tp] = draw(replica_lists)
    unknown = [("z", 0), ("a", 9)]  # partitions a batch or a state may name, not assigned
    for tp in tps + unknown:
        if draw(st.booleans()):
            reps = ctx.assignment.get(tp, (0,))
            isr = tuple(draw(st.lists(st.sampled_from(reps), min_size=1, unique=True)))
            leader = draw(st.sampled_from((*isr, -1)))
            ctx.states[tp] = PartitionStateZk(
                LeaderAndIsr(leader, draw(st.integers(0, 3)), isr, draw(st.integers(0, 2))),
                draw(st.integers(0, 5)))
    ctx.to_delete = draw(st.sets(st.sampled_from(TOPICS)))
    some_tps = st.sampled_from(tps + unknown)
    batch = RequestBatch()
    for tp in draw(st.lists(some_tps, max_size=8)):
        reps = draw(st.one_of(st.just(ctx.assignment.get(tp, (1,))), replica_lists))
        batch.leader_and_isr(tp, reps)
    batch.lai_full = draw(st.sets(st.sampled_from(POOL)))
    for tp in draw(st.lists(some_tps, max_size=8)):
        batch.announce(tp)
    batch.um_all_partitions_to = draw(st.sets(st.sampled_from(POOL)))
    batch.um_everyone = draw(st.booleans())
    for tp in draw(st.lists(some_tps, max_size=4)):
        batch.stop_replica(draw(st.sampled_from(POOL)), tp, draw(st.booleans()))
    return ctx, batch


@settings(max_examples=400, deadline=None)
@given(cases())
def test_finish_equals_the_code_it_replaced(case: tuple[ControllerContext, RequestBatch]) -> None:
    ctx, batch = case
    got = batch.finish(ctx, 7, 3)
    assert got == reference_finish(batch, ctx, 7, 3)
    # the entries are the dataclasses' values: same type, equal, equal hashes
    for e in got:
        if isinstance(e.request, StopReplicaRequest):
            continue
        for part in e.request.partitions:
            assert type(part) in (LeaderAndIsrPartition, UpdateMetadataPartition)
            assert hash(part) == hash(type(part)(*(getattr(part, f) for f in part.__slots__)))


def test_a_failover_batch_to_every_broker() -> None:
    """The failover's shape (a full LeaderAndIsr and UpdateMetadata to every live broker,
    a topic being deleted, a dead broker) at a size where groups are many and shared."""
    ctx = ControllerContext()
    ctx.live = {b: BrokerInfo(b, 100 + b) for b in range(1, 9)}
    for t in range(20):
        for p in range(10):
            reps = tuple((t + p + k) % 10 for k in range(3))
            ctx.assignment[(f"t{t:02d}", p)] = reps
            ctx.states[(f"t{t:02d}", p)] = PartitionStateZk(LeaderAndIsr(reps[0], p, reps, 1), t)
    ctx.to_delete = {"t03"}
    batch = RequestBatch()
    batch.lai_full.update(range(10))
    batch.um_all_partitions_to.update(range(10))
    batch.um_everyone = True
    batch.leader_and_isr(("t05", 1), (6, 7, 8))
    batch.announce(("t05", 1))
    got = batch.finish(ctx, 1, 2)
    assert got == reference_finish(batch, ctx, 1, 2)
    assert len([e for e in got if isinstance(e.request, LeaderAndIsrRequest)]) == 8
    assert {len(e.request.partitions) for e in got
            if isinstance(e.request, UpdateMetadataRequest)} == {200}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=5), st.integers(), st.integers(), st.integers(), st.integers(),
       st.lists(st.integers(0, 9)).map(tuple), st.integers(),
       st.lists(st.integers(0, 9)).map(tuple), st.lists(st.integers(0, 9)).map(tuple),
       st.booleans())
def test_the_builders_make_the_dataclasses_values(
        topic: str, partition: int, ce: int, leader: int, le: int, isr: tuple[int, ...],
        version: int, replicas: tuple[int, ...], offline: tuple[int, ...], is_new: bool) -> None:
    lai = new_leader_and_isr_partition(topic, partition, ce, leader, le, isr, version, replicas,
                                       is_new)
    assert lai == LeaderAndIsrPartition(topic, partition, ce, leader, le, isr, version,
                                        replicas, is_new)
    assert new_leader_and_isr_partition(topic, partition, ce, leader, le, isr, version,
                                        replicas) == LeaderAndIsrPartition(
        topic, partition, ce, leader, le, isr, version, replicas)
    um = new_update_metadata_partition(topic, partition, ce, leader, le, isr, version, replicas,
                                       offline)
    assert um == UpdateMetadataPartition(topic, partition, ce, leader, le, isr, version,
                                         replicas, offline)
    assert hash(um) == hash(UpdateMetadataPartition(topic, partition, ce, leader, le, isr,
                                                    version, replicas, offline))
    for value in (lai, um):
        with pytest.raises(AttributeError):  # frozen, as the dataclass's own
            value.leader = 5  # type: ignore[misc]
