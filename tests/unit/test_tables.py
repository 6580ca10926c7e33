"""The seven tables (ZooKeeper mode's four, KRaft mode's two, the Raft roles) hold exactly the seeds' transitions
and our declared readings of them, and the two compiled forms agree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.broker_states import BROKER_TABLE, BrokerState
from fsm.kraft.broker_lifecycle_states import KRAFT_BROKER_TABLE, KRaftBrokerState
from fsm.kraft.membership_states import MEMBERSHIP_TABLE, BrokerMembership
from fsm.partition_states import PARTITION_TABLE, PartitionState, partition_label
from fsm.raft.roles import RAFT_ROLE_TABLE, RaftRole
from fsm.replica_states import REPLICA_TABLE, ReplicaState, replica_label
from fsm.tables import ALL_TABLES, KRAFT_TABLES, RAFT_TABLES, ZK_TABLES
from fsm.transition_table import IllegalTransition, table, trigger_name
from fsm.zk_session_states import ZK_SESSION_TABLE, ZkClientState


def pairs(text: str) -> set[tuple[str, str]]:
    """Parse the seed's own wording: ``A -> B, C`` one line per source."""
    out = set()
    for line in text.strip().splitlines():
        src, dsts = line.split("->")
        for dst in dsts.split(","):
            out.add((src.strip(), dst.strip()))
    return out


def values(t) -> set[tuple[str, str]]:
    return {(a.value, b.value) for a, b in t.pairs}


# Copied from seed 000 (PartitionStateMachine, "valid state transitions").
SEED_PARTITION = """
NonExistentPartition -> NewPartition
NewPartition -> OnlinePartition, OfflinePartition
OnlinePartition -> OnlinePartition, OfflinePartition
OfflinePartition -> OnlinePartition, OfflinePartition, NonExistentPartition
"""

# Seed 000 (ReplicaStateMachine, "valid state transitions").
SEED_REPLICA = """
NonExistentReplica -> NewReplica
NewReplica -> OnlineReplica, OfflineReplica
OnlineReplica -> OnlineReplica, OfflineReplica
OfflineReplica -> OnlineReplica, OfflineReplica, ReplicaDeletionStarted
ReplicaDeletionStarted -> ReplicaDeletionSuccessful, ReplicaDeletionIneligible
ReplicaDeletionSuccessful -> NonExistentReplica
ReplicaDeletionIneligible -> OnlineReplica, OfflineReplica
"""

# Seed 000 ("use vanilla ZooKeeper client", "valid state transitions").
SEED_ZK = """
NOT_CONNECTED -> CONNECTING
CONNECTING -> CONNECTED, CLOSED
CONNECTED -> CONNECTING, CLOSED
"""

# Our ZooKeeper-mode reading of seed 004's lifecycle (see fsm/broker_states.py).
CHOSEN_BROKER = """
NOT_RUNNING -> STARTING
STARTING -> RECOVERY, SHUTTING_DOWN, NOT_RUNNING
RECOVERY -> RUNNING, SHUTTING_DOWN, NOT_RUNNING
RUNNING -> PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN, RECOVERY, NOT_RUNNING
PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN, RECOVERY, NOT_RUNNING
SHUTTING_DOWN -> NOT_RUNNING
"""

# Seed 004's three membership states plus Kafka's CONTROLLED_SHUTDOWN, as the quorum
# controller moves them (see fsm/kraft/membership_states.py).
CHOSEN_MEMBERSHIP = """
unregistered -> fenced
fenced -> fenced, active, unregistered
active -> fenced, controlled_shutdown, unregistered
controlled_shutdown -> fenced, unregistered
"""

# Seed 004's broker state machine as a KRaft broker runs it
# (fsm/kraft/broker_lifecycle_states.py).
CHOSEN_KRAFT_BROKER = """
NOT_RUNNING -> STARTING
STARTING -> RECOVERY, SHUTTING_DOWN, NOT_RUNNING
RECOVERY -> RUNNING, SHUTTING_DOWN, NOT_RUNNING
RUNNING -> PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN, NOT_RUNNING
PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN, NOT_RUNNING
SHUTTING_DOWN -> NOT_RUNNING
"""

# KIP-595's roles as our Raft core moves them (fsm/raft/roles.py): every higher epoch lands
# in unattached, voted or follower; unattached -> resigned is a restarted leader's start.
CHOSEN_RAFT = """
unattached -> unattached, voted, candidate, follower, resigned
voted -> unattached, voted, candidate, follower
candidate -> unattached, voted, candidate, leader, follower
leader -> unattached, voted, follower, resigned
follower -> unattached, voted, candidate, follower
resigned -> unattached, voted, candidate, follower
"""

TERMINAL = {("zookeeper-session", "CLOSED")}
"""States with no way out, by table: a closed ZooKeeper session is over (a new one is a new
client, starting again at NOT_CONNECTED). Every other state of every table has a move."""


@pytest.mark.parametrize(
    ("tbl", "expected"),
    [
        (PARTITION_TABLE, SEED_PARTITION),
        (REPLICA_TABLE, SEED_REPLICA),
        (ZK_SESSION_TABLE, SEED_ZK),
        (BROKER_TABLE, CHOSEN_BROKER),
        (MEMBERSHIP_TABLE, CHOSEN_MEMBERSHIP),
        (KRAFT_BROKER_TABLE, CHOSEN_KRAFT_BROKER),
        (RAFT_ROLE_TABLE, CHOSEN_RAFT),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_table_holds_exactly_the_seed_transitions(tbl, expected):
    assert values(tbl) == pairs(expected)


def test_state_names_are_the_seeds():
    assert [s.value for s in PartitionState] == [
        "NonExistentPartition", "NewPartition", "OnlinePartition", "OfflinePartition"]
    assert [s.value for s in ReplicaState] == [
        "NonExistentReplica", "NewReplica", "OnlineReplica", "OfflineReplica",
        "ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible"]
    assert [s.value for s in ZkClientState] == ["NOT_CONNECTED", "CONNECTING", "CONNECTED", "CLOSED"]
    assert [s.value for s in BrokerState] == [
        "NOT_RUNNING", "STARTING", "RECOVERY", "RUNNING", "PENDING_CONTROLLED_SHUTDOWN",
        "SHUTTING_DOWN"]
    assert [s.value for s in BrokerMembership] == [
        "unregistered", "fenced", "active", "controlled_shutdown"]
    assert [s.value for s in KRaftBrokerState] == [s.value for s in BrokerState]
    assert [s.value for s in RaftRole] == [
        "unattached", "voted", "candidate", "leader", "follower", "resigned"]


def test_the_tables_are_seven_four_zookeeper_two_kraft_one_raft():
    assert list(ZK_TABLES) == ["partition", "replica", "zookeeper-session", "broker-session"]
    assert list(KRAFT_TABLES) == ["kraft-broker-membership", "kraft-broker-lifecycle"]
    assert list(RAFT_TABLES) == ["raft-role"]
    assert ALL_TABLES == {**ZK_TABLES, **KRAFT_TABLES, **RAFT_TABLES} and len(ALL_TABLES) == 7
    # one enum per table: the checker's coverage finds a table by its state enum
    assert len({t.states for t in ALL_TABLES.values()}) == len(ALL_TABLES)


def test_every_state_has_a_way_out_or_is_declared_terminal():
    for t in ALL_TABLES.values():
        for s in t.states:
            assert bool(t.targets(s)) != ((t.name, s.value) in TERMINAL), (t.name, s)


def test_a_crash_is_possible_from_every_broker_state():
    for tbl, states in ((BROKER_TABLE, BrokerState), (KRAFT_BROKER_TABLE, KRaftBrokerState)):
        for s in states:
            if s is not states.NOT_RUNNING:
                assert tbl.is_valid(s, states.NOT_RUNNING), (tbl.name, s)


def test_every_state_is_reachable_from_the_initial_state():
    for t in ALL_TABLES.values():
        seen, todo = {t.initial}, [t.initial]
        while todo:
            for nxt in t.targets(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        assert seen == set(t.states), t.name


def test_illegal_transition_names_entity_state_and_target():
    label = partition_label("orders", 3)
    with pytest.raises(IllegalTransition) as err:
        PARTITION_TABLE.check(label, PartitionState.OnlinePartition, PartitionState.NewPartition)
    msg = str(err.value)
    assert "orders-3" in msg and "OnlinePartition -> NewPartition" in msg
    assert err.value.entity == "orders-3"
    assert err.value.current is PartitionState.OnlinePartition
    assert err.value.target is PartitionState.NewPartition
    assert err.value.valid_previous == (PartitionState.NonExistentPartition,)

    rlabel = replica_label("orders", 3, 2)
    with pytest.raises(IllegalTransition, match=r"\(orders-3, broker 2\)"):
        REPLICA_TABLE.check(rlabel, ReplicaState.NewReplica, ReplicaState.ReplicaDeletionStarted)


def test_check_returns_the_target_on_a_valid_move():
    assert (
        REPLICA_TABLE.check("r", ReplicaState.OfflineReplica, ReplicaState.ReplicaDeletionStarted)
        is ReplicaState.ReplicaDeletionStarted
    )


def test_a_table_naming_a_foreign_state_is_refused():
    with pytest.raises(ValueError):
        table("bad", PartitionState, PartitionState.NewPartition,
              {PartitionState.NewPartition: [ReplicaState.NewReplica]})


@pytest.mark.parametrize("name", sorted(ALL_TABLES))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_random_walk_agrees_between_lookup_and_machine(name, data):
    """Walk the table at random (valid and invalid moves); both compiled forms must agree."""
    from transitions.core import MachineError

    t = ALL_TABLES[name]
    states = list(t.states)
    model = t.build_machine().models[0]
    current = t.initial
    assert model.state == current.value
    for _ in range(data.draw(st.integers(0, 30), label="steps")):
        target = data.draw(st.sampled_from(states), label="target")
        trigger = getattr(model, trigger_name(target), None)
        if t.is_valid(current, target):
            assert t.check("entity", current, target) is target
            assert trigger is not None and trigger() is True
            current = target
        else:
            with pytest.raises(IllegalTransition):
                t.check("entity", current, target)
            if trigger is not None:
                with pytest.raises(MachineError):
                    trigger()
        assert model.state == current.value


@pytest.mark.parametrize("name", sorted(ALL_TABLES))
def test_machine_is_built_from_the_table(name):
    """The transitions machine holds the same edges as the table: no second copy."""
    t = ALL_TABLES[name]
    machine = t.build_machine()
    edges = set()
    for event in machine.events.values():
        for src, trans in event.transitions.items():
            for tr in trans:
                edges.add((src, tr.dest))
    assert edges == values(t)
