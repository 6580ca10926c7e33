"""The core keeps its own rules (issue 21, item 3): every partition and replica state change
goes through one batched setter per table (``Controller._move_partitions`` /
``_move_replicas``), checked against the table, logged one record per group of identical
transitions, an illegal move logged and never raised.

Every test in this folder runs under ``state_guard`` (``conftest.py``): a state written
anywhere else raises. The tests here also drive the model checker's world -- random walks
that take every transition of both tables, and every scenario transcript -- under it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.controller import Controller, ControllerConfig
from fsm.controller.records import Entities
from fsm.events import ClusterLoaded, ControllerChange, TopicChange
from fsm.partition_states import PARTITION_TABLE, PartitionState
from fsm.replica_states import REPLICA_TABLE, ReplicaState
from fsm.values import ClusterSnapshot, TopicAssignment
from model_check.checks import default_checks
from model_check.coverage import Coverage
from model_check.scenario import load
from model_check.walk import walks
from tests.scenarios.interpreter import run_transcript

from .harness import active, brokers, feed, no_illegal, state
from .state_guard import WrittenOutsideTheSetters

_P = PartitionState
_R = ReplicaState
T0, T1 = ("t", 0), ("t", 1)
TRANSCRIPTS = sorted(p for p in (Path(__file__).parents[2] / "scenarios").glob("*.txt")
                     if not p.name.startswith("kraft_"))  # KRaft transcripts: their own interpreter


def records(ctl: Controller, kind: str) -> list:
    return [r for r in ctl.state_change_log if r.kind == kind]


# ---------------------------------------------------------------- the guard


def test_the_guard_catches_a_state_written_outside_the_setters() -> None:
    ctl = active()
    with pytest.raises(WrittenOutsideTheSetters):
        ctl.ctx.partition_state[T0] = _P.OfflinePartition
    with pytest.raises(WrittenOutsideTheSetters):
        ctl.ctx.replica_states.pop(T0)
    with pytest.raises(WrittenOutsideTheSetters):
        ctl.ctx.replica_states.update({T1: ()})
    restored = Controller.restore(ctl.snapshot(), ctl.config)
    with pytest.raises(WrittenOutsideTheSetters):
        del restored.ctx.partition_state[T0]
    assert ctl.partition_state(T0) is _P.OnlinePartition
    assert ctl.replica_state(T1, 2) is _R.OnlineReplica


def test_walks_write_states_only_through_the_setters() -> None:
    """Walks of two shipped scenarios that, together, take every transition of both tables
    (and fail over, reassign, delete): under the guard."""
    taken = set()
    for name in ("deep", "deletion"):
        cov = Coverage()
        r = walks(load(name), default_checks(), 5_000, 1, coverage=cov)
        assert r.verdict == "pass", (name, r.violation)
        tables = cov.report()["tables"]
        taken |= {(t, p) for t in ("partition", "replica") for p in tables[t]["taken"]}
    every = {(t.name, f"{a.value} -> {b.value}") for t in (PARTITION_TABLE, REPLICA_TABLE)
             for a, b in t.pairs}
    assert every - taken == set()


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcripts_write_states_only_through_the_setters(path: Path) -> None:
    _, _, failures = run_transcript(path.read_text())
    assert not failures, failures


# ---------------------------------------------------------------- the setters


def test_a_batch_is_checked_move_by_move_and_logged_per_group() -> None:
    ctl = active(topics={"t": {p: (1, 2) for p in range(4)}})
    ctl.drain_state_change_log()
    ctl._move_partitions([(("t", 0), _P.OfflinePartition), (("t", 1), _P.OfflinePartition),
                          (("t", 2), _P.NewPartition),  # Online -> New: illegal
                          (("t", 0), _P.OnlinePartition),  # a second move of t-0
                          (("t", 3), _P.OfflinePartition)], "test")
    log = ctl.drain_state_change_log()
    assert [(r.kind, r.entities, r.source, r.target) for r in log] == [
        ("illegal", (("t", 2),), "OnlinePartition", "NewPartition"),
        ("partition", (("t", 0), ("t", 1), ("t", 3)), _P.OnlinePartition, _P.OfflinePartition),
        ("partition", (("t", 0),), _P.OfflinePartition, _P.OnlinePartition),
    ]
    assert isinstance(log[1].entity, Entities) and log[2].entity == ("t", 0)
    assert [ctl.partition_state(("t", p)) for p in range(4)] == [
        _P.OnlinePartition, _P.OfflinePartition, _P.OnlinePartition, _P.OfflinePartition]


def test_replica_moves_self_transitions_and_illegal_moves() -> None:
    ctl = active(topics={"t": {0: (1, 2), 1: (1, 2)}})
    ctl.drain_state_change_log()
    ctl._move_replicas([(T0, 1, _R.OfflineReplica), (T1, 1, _R.OfflineReplica),
                        (T0, 2, _R.OnlineReplica),  # a self-transition: logged, unchanged
                        (T0, 1, _R.NonExistentReplica),  # Offline -> NonExistent: illegal
                        (T0, 1, _R.ReplicaDeletionStarted)], "test")
    log = ctl.drain_state_change_log()
    assert [(r.kind, r.entities, r.source, r.target) for r in log] == [
        ("illegal", ((T0, 1),), "OfflineReplica", "NonExistentReplica"),
        ("replica", ((T0, 1), (T1, 1)), _R.OnlineReplica, _R.OfflineReplica),
        ("replica", ((T0, 2),), _R.OnlineReplica, _R.OnlineReplica),
        ("replica", ((T0, 1),), _R.OfflineReplica, _R.ReplicaDeletionStarted),
    ]
    assert ctl.replica_state(T0, 1) is _R.ReplicaDeletionStarted
    assert ctl.replica_state(T1, 1) is _R.OfflineReplica
    assert ctl.replica_state(T0, 2) is _R.OnlineReplica


def test_a_load_begins_or_ends_memory_and_is_not_a_transition() -> None:
    ctl = active(topics={"t": {0: (1, 2)}})
    ctl.drain_state_change_log()
    ctl._move_partitions([(T0, _P.OfflinePartition), (T1, _P.NewPartition)], "test", load=True)
    ctl._move_replicas([(T0, 1, _R.NonExistentReplica), (T1, 3, _R.OfflineReplica)], "test",
                       load=True)
    log = ctl.drain_state_change_log()
    assert [(r.kind, r.entities, r.source, r.target) for r in log] == [
        ("illegal", (T0,), "OnlinePartition", "OfflinePartition"),  # memory holds one
        ("loaded", (T1,), _P.NonExistentPartition, _P.NewPartition),
        ("forgotten", ((T0, 1),), _R.OnlineReplica, _R.NonExistentReplica),
        ("loaded", ((T1, 3),), _R.NonExistentReplica, _R.OfflineReplica),
    ]
    assert ctl.partition_state(T0) is _P.OnlinePartition
    assert ctl.partition_state(T1) is _P.NewPartition
    assert ctl.replica_state(T0, 1) is _R.NonExistentReplica
    assert ctl.replica_state(T1, 3) is _R.OfflineReplica


# ---------------------------------------------------------------- loads and forgets


def test_failover_loads_the_states_then_starts_the_replicas() -> None:
    ctl = active(live=(1, 2), topics={"t": {0: (1, 2), 1: (3, 1)}, "u": {0: (3,)}})
    loaded = {(r.target, e) for r in records(ctl, "loaded") for e in r.entities}
    assert loaded == {
        (_P.OnlinePartition, T0), (_P.OnlinePartition, T1), (_P.OfflinePartition, ("u", 0)),
        (_R.OnlineReplica, (T0, 1)), (_R.OnlineReplica, (T0, 2)), (_R.OnlineReplica, (T1, 1)),
        (_R.OfflineReplica, (T1, 3)), (_R.OfflineReplica, (("u", 0), 3))}
    started = {(r.source, r.target, e) for r in records(ctl, "replica")
               if r.reason.startswith("controller failover") for e in r.entities}
    assert started == {(s, s, e) for s, e in loaded if isinstance(s, ReplicaState)}
    no_illegal(ctl)


def test_failover_leaves_a_restarted_reassignments_added_replica_unloaded() -> None:
    """An expansion found in ZooKeeper whose added replica is not in the ISR: that replica is
    not loaded (NonExistentReplica), so the follow-on round bumps the leader epoch and, once
    that committed, moves it NonExistent -> New like any added replica."""
    ctl = Controller(ControllerConfig(broker_id=2))
    feed(ctl, ControllerChange(None, 3, 3))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3),
        topics=(("t", TopicAssignment(((0, (2, 3, 1)),))),),
        partition_states=((T0, state(1, (1, 2), epoch=1, version=2)),),
        reassignments=((T0, (2, 3)),))
    ctl.handle(ClusterLoaded(snap))
    assert ctl.replica_state(T0, 3) is _R.NonExistentReplica
    assert ctl.replica_state(T0, 2) is _R.OnlineReplica
    named = {e for r in ctl.state_change_log if r.kind in ("loaded", "replica")
             for e in r.entities}
    assert (T0, 3) not in named and (T0, 2) in named
    ctl2 = Controller(ControllerConfig(broker_id=2))
    feed(ctl2, ControllerChange(None, 3, 3))
    feed(ctl2, ClusterLoaded(snap))
    assert ctl2.replica_state(T0, 3) is _R.NewReplica
    assert any(r.kind == "replica" and r.source is _R.NonExistentReplica
               and (T0, 3) in r.entities for r in ctl2.state_change_log)
    no_illegal(ctl2)


def test_a_vanished_topic_is_forgotten_through_the_setters() -> None:
    ctl = active(topics={"t": {0: (1, 2)}, "u": {0: (2, 3), 1: (3, 1)}})
    ctl.drain_state_change_log()
    feed(ctl, TopicChange(frozenset({"t"}), ()))
    assert ctl.topic_names() == {"t"}
    assert ctl.partition_state(("u", 0)) is _P.NonExistentPartition
    assert ctl.replica_state(("u", 1), 3) is _R.NonExistentReplica
    assert not any(tp[0] == "u" for tp in ctl.ctx.partition_state)
    assert not any(tp[0] == "u" for tp in ctl.ctx.replica_states)
    forgotten = {e for r in records(ctl, "forgotten") for e in r.entities}
    assert forgotten == {("u", 0), ("u", 1), (("u", 0), 2), (("u", 0), 3), (("u", 1), 3),
                         (("u", 1), 1)}
    assert not records(ctl, "partition") and not records(ctl, "replica")
    no_illegal(ctl)
