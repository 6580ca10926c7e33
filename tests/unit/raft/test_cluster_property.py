"""The core in a small cluster under random schedules: messages delivered in any order, lost,
duplicated; timers fired in any order; flushes late; nodes crashing (losing their unflushed
tail) and restarting from their durable state; appends, snapshots, resignations. Whatever the
schedule, no epoch has two leaders, every committed entry stays durable on a majority, every
leader holds every committed entry, and no two nodes apply different entries at one offset
(``harness.Cluster`` checks all of it on every step)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsm.raft.roles import RaftRole
from tests.unit.raft.harness import Cluster

BUDGETS = {"drop": 4, "duplicate": 4, "crash": 2, "append": 6, "snapshot": 2, "resign": 1}


WEIGHTS = {"deliver": 24, "flush": 5, "flush_all": 3, "fire": 3, "drop": 1, "duplicate": 1, "restart": 2,
           "crash": 1, "append": 3, "snapshot": 1, "resign": 1}
"""How often each kind of step is picked (when possible): mostly progress, a few faults, so
that schedules commit entries, not only hold elections."""


def actions(c: Cluster, spent: dict[str, int]) -> dict[str, list[tuple]]:
    """The steps possible now, by kind."""
    out: dict[str, list[tuple]] = {k: [] for k in WEIGHTS}
    out["deliver"] = [("deliver", i) for i in range(len(c.bag))]
    if spent["drop"] < BUDGETS["drop"]:
        out["drop"] = [("drop", i) for i in range(len(c.bag))]
    if spent["duplicate"] < BUDGETS["duplicate"]:
        out["duplicate"] = [("duplicate", i) for i in range(len(c.bag))]
    out["fire"] = [("fire", t) for t in sorted(c.timers)]
    for n in c.ids:
        node = c.nodes[n]
        if node is None:
            out["restart"].append(("restart", n))
            continue
        if c.disks[n].flush_queue:
            out["flush"].append(("flush", n))
            out["flush_all"].append(("flush_all", n))
        if spent["crash"] < BUDGETS["crash"]:
            out["crash"].append(("crash", n))
        if spent["snapshot"] < BUDGETS["snapshot"] and node.high_watermark > node.log_start_offset:
            out["snapshot"].append(("snapshot", n))
        if node.role is RaftRole.LEADER:
            if spent["append"] < BUDGETS["append"]:
                out["append"].append(("append", n))
            if spent["resign"] < BUDGETS["resign"]:
                out["resign"].append(("resign", n))
    return {k: v for k, v in out.items() if v}


def weighted_kinds(options: dict[str, list[tuple]]) -> list[str]:
    return [k for k in options for _ in range(WEIGHTS[k])]


def step(c: Cluster, action: tuple, spent: dict[str, int]) -> None:
    kind, arg = action
    if kind in spent:
        spent[kind] += 1
    if kind == "deliver":
        c.deliver(arg)
    elif kind == "drop":
        c.bag.pop(arg)
    elif kind == "duplicate":
        c.deliver(arg, keep=True)
    elif kind == "fire":
        c.fire(arg)
    elif kind == "flush_all":
        c.flush(arg, coalesce=True)
    elif kind == "restart":
        c.start(arg)
    else:
        getattr(c, kind)(arg)


def run(data, voters: tuple[int, ...], observers: tuple[int, ...], steps: int) -> Cluster:
    c = Cluster(voters, observers, max_batches_per_fetch=2)
    c.start_all()
    spent = dict.fromkeys(BUDGETS, 0)
    for _ in range(steps):
        options = actions(c, spent)
        if not options:
            break
        kind = data.draw(st.sampled_from(weighted_kinds(options)))
        step(c, data.draw(st.sampled_from(options[kind])), spent)
    return c


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_three_voters_stay_safe_under_any_schedule(data):
    run(data, (1, 2, 3), (), 120)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_five_voters_and_an_observer_stay_safe_under_any_schedule(data):
    run(data, (1, 2, 3, 4, 5), (9,), 120)


def test_a_cluster_left_alone_elects_commits_and_converges():
    """The calm schedule: one election, appends, everything delivered -- every node ends with
    the leader's log and high watermark (the harness must be able to see progress too)."""
    c = Cluster((1, 2, 3), (9,))
    c.start_all()
    c.fire((2, "election", -1))
    c.run_until_quiet()
    while c.nodes[9].role is not RaftRole.FOLLOWER:  # the observer asks voter after voter
        c.fire(next(t for t in c.timers if t[0] == 9 and t[1] == "request"))
        c.run_until_quiet()
    assert c.nodes[9].leader_id == 2
    for _ in range(5):
        c.append(2)
        c.run_until_quiet()
    for t in sorted(c.timers):  # parked fetches answered on their timers: no news, no change
        if t[1] == "parked":
            c.fire(t)
    c.run_until_quiet()
    ends = {n.node_id: (n.end_offset, n.high_watermark) for n in c.nodes.values()}
    assert ends == {1: (6, 6), 2: (6, 6), 3: (6, 6), 9: (6, 6)}
    assert [c.committed[o][1] for o in range(1, 6)] == ["r1", "r2", "r3", "r4", "r5"]
