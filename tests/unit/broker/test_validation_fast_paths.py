"""The fast accepts of ``fsm.broker.validation`` agree with the checks they short-cut.

``leader_and_isr_reason`` and ``update_metadata_reason`` first try a fast accept (a few
C-level calls) and only on a "no" run the per-field checks that word the reason. The
reference predicates below restate those checks independently; for any partition value --
bools where ints belong, negatives, duplicates, empty and non-tuple lists, wrong types -- a
partition is accepted exactly when the reference accepts it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.broker.validation import (
    ids_ok,
    ids_reason,
    leader_and_isr_reason,
    tp_reason,
    update_metadata_reason,
)
from fsm.requests import LeaderAndIsrPartition, UpdateMetadataPartition

ODD = st.sampled_from([True, False, -1, -2, 1.0, "1", None, 2**40])
ints = st.one_of(st.integers(-3, 4), ODD)
id_seqs = st.one_of(st.lists(ints, max_size=4).map(tuple), st.lists(ints, max_size=3),
                    st.sampled_from([None, "12", ()]))
topics = st.one_of(st.sampled_from(["t", "topic-a", ""]), st.sampled_from([None, 3, b"t"]))


def plain_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def ref_ids(ids: object, empty_ok: bool) -> bool:
    return (isinstance(ids, tuple) and (empty_ok or len(ids) > 0)
            and all(plain_int(b) and b >= 0 for b in ids) and len(set(ids)) == len(ids))


def ref_tp(topic: object, partition: object) -> bool:
    return isinstance(topic, str) and topic != "" and plain_int(partition) and partition >= 0


def ref_lai(p: LeaderAndIsrPartition) -> bool:
    return (ref_tp(p.topic, p.partition) and ref_ids(p.replicas, False)
            and ref_ids(p.isr, False) and set(p.isr) <= set(p.replicas)
            and plain_int(p.leader) and (p.leader == -1 or p.leader in p.isr)
            and all(plain_int(x) and x >= 0 for x in (p.leader_epoch, p.zk_version,
                                                        p.controller_epoch)))


def ref_um(p: UpdateMetadataPartition) -> bool:
    if not ref_tp(p.topic, p.partition):
        return False
    if p.leader == -2:
        return True
    return (ref_ids(p.replicas, False) and ref_ids(p.isr, True)
            and ref_ids(p.offline_replicas, True) and set(p.isr) <= set(p.replicas)
            and set(p.offline_replicas) <= set(p.replicas) and plain_int(p.leader)
            and (p.leader == -1 or p.leader in p.replicas)
            and plain_int(p.leader_epoch) and p.leader_epoch >= 0)


@given(id_seqs, st.booleans())
def test_ids_agree(ids: object, empty_ok: bool) -> None:
    assert (ids_reason("ids", ids, empty_ok=empty_ok) is None) == ref_ids(ids, empty_ok)
    if ids_ok(ids):
        assert ref_ids(ids, False)


@given(st.tuples(topics, ints))
def test_tp_agrees(tp: tuple[object, object]) -> None:
    assert (tp_reason(tp) is None) == ref_tp(*tp)


@settings(max_examples=400)
@given(topics, ints, ints, ints, ints, id_seqs, ints, id_seqs)
def test_leader_and_isr_agrees(topic, partition, cepoch, leader, lepoch, isr, version,  # type: ignore[no-untyped-def]
                               replicas) -> None:
    p = LeaderAndIsrPartition(topic, partition, cepoch, leader, lepoch, isr, version, replicas)
    try:
        expected = ref_lai(p)
    except TypeError:  # the reference itself cannot hash an unhashable list member
        expected = False
    assert (leader_and_isr_reason(p) is None) == expected


@settings(max_examples=400)
@given(topics, ints, ints, ints, id_seqs, id_seqs, id_seqs)
def test_update_metadata_agrees(topic, partition, leader, lepoch, isr, replicas,  # type: ignore[no-untyped-def]
                                offline) -> None:
    p = UpdateMetadataPartition(topic, partition, 1, leader, lepoch, isr, 0, replicas, offline)
    try:
        expected = ref_um(p)
    except TypeError:
        expected = False
    assert (update_metadata_reason(p) is None) == expected


def test_valid_partitions_take_the_fast_path_and_bools_do_not() -> None:
    good = LeaderAndIsrPartition("t", 0, 1, 2, 0, (2, 3), 0, (1, 2, 3))
    assert leader_and_isr_reason(good) is None
    assert not ids_ok((True, 2))  # (True, 2) == (1, 2): only a type check tells them apart
    assert leader_and_isr_reason(
        LeaderAndIsrPartition("t", 0, 1, 2, 0, (2, True), 0, (1, 2, 3))) is not None
