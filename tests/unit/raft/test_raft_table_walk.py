"""Every move of ``RAFT_ROLE_TABLE`` is one the core makes (seeded schedules of the test
cluster reach every declared pair, and nothing else), and a move outside the table raises."""

from __future__ import annotations

import random

import pytest

from fsm.raft import transitions
from fsm.raft.effects import RoleChanged
from fsm.raft.roles import RAFT_ROLE_TABLE, RaftRole
from fsm.transition_table import IllegalTransition
from tests.unit.raft.harness import Cluster
from tests.unit.raft.helpers import follower, leader
from tests.unit.raft.test_cluster_property import BUDGETS, actions, step, weighted_kinds


def moves_of_seeded_schedules(seeds: int, steps: int) -> set[tuple[RaftRole, RaftRole]]:
    seen: set[tuple[RaftRole, RaftRole]] = set()
    for seed in range(seeds):
        rng = random.Random(seed)
        c = Cluster((1, 2, 3), (9,), max_batches_per_fetch=2)
        c.start_all()
        spent = dict.fromkeys(BUDGETS, 0)
        for _ in range(steps):
            options = actions(c, spent)
            kind = rng.choice(weighted_kinds(options))
            step(c, rng.choice(options[kind]), spent)
        seen |= {(e.source, e.target) for _, e in c.trace if isinstance(e, RoleChanged)}
    return seen


def test_every_declared_move_is_made_and_no_other():
    seen = moves_of_seeded_schedules(60, 150)
    assert seen == set(RAFT_ROLE_TABLE.pairs)


def test_a_move_outside_the_table_raises_naming_the_node():
    node, _ = follower(2, 1, 1)
    with pytest.raises(IllegalTransition, match="node 2: follower -> leader"):
        transitions.move(node, RaftRole.LEADER, 1, 2, 2)
    lead = leader(1)
    with pytest.raises(IllegalTransition, match="leader -> candidate"):
        transitions.become_candidate(lead)
    assert lead.role is RaftRole.LEADER  # nothing changed
