"""Unclean leader election, checked: the shipped ``unclean`` scenario elects outside the ISR and
passes on the clean core; the elections' invariants find a selector that breaks the last-resort
rule, an unclean election with the setting off, and a partition left offline beside a live
replica."""

from __future__ import annotations

import dataclasses

import pytest

from fsm.controller import leader_selection
from invariants import check_transition
from invariants.view import NO_LEADER, GlobalView
from model_check.checks import default_checks
from model_check.scenario import load, loads
from model_check.search import bfs


def _unclean_elections(before: GlobalView, after: GlobalView) -> list[str]:
    """Leader changes, in ZooKeeper, to a broker outside the previous ISR."""
    zb, za = before.zk, after.zk
    if zb is None or za is None or zb is za:
        return []
    out = []
    for tp, st in za.partitions:
        old = zb.states.get(tp)
        if old is not None and old.czxid == st.czxid and st.leader not in (NO_LEADER, old.leader) \
                and st.leader not in old.isr:
            out.append(f"{tp}: {old.leader} {list(old.isr)} -> {st.leader} {list(st.isr)}")
    return out


def test_the_unclean_scenario_elects_outside_the_isr_and_passes() -> None:
    sc = load("unclean")
    assert dict(sc.world)["unclean_leader_election"] is True
    seen: list[str] = []

    def transition(before: GlobalView, after: GlobalView) -> list:
        seen.extend(_unclean_elections(before, after))
        return check_transition(before, after)

    checks = dataclasses.replace(default_checks(), transition=transition, edge_key=None)
    r = bfs(sc, checks)
    assert r.verdict == "pass" and r.bounded_by == "exhausted", r.violation
    assert r.distinct_states < 10_000
    assert "('t', 0): 2 [2] -> 1 [1]" in seen  # broker 1 elected, outside the ISR [2]


def _keeps_the_isr(assigned, isr, alive, eligible, unclean):  # noqa: ANN001, ANN202
    """An unclean selector that keeps the old ISR beside the new leader."""
    chosen = _ORIGINAL(assigned, isr, alive, eligible, unclean)
    if chosen is not None and chosen[0] not in isr:
        return chosen[0], chosen[1] + tuple(i for i in isr if i not in chosen[1])
    return chosen


def _always_unclean(assigned, isr, alive, eligible, unclean):  # noqa: ANN001, ANN202
    """A selector that ignores the setting."""
    return _ORIGINAL(assigned, isr, alive, eligible, True)


def _never_unclean(assigned, isr, alive, eligible, unclean):  # noqa: ANN001, ANN202
    """A selector that ignores the setting the other way."""
    return _ORIGINAL(assigned, isr, alive, eligible, False)


_ORIGINAL = leader_selection.offline_leader
_CLEAN = load("unclean").text.replace("unclean_leader_election = true",
                                      "unclean_leader_election = false")


@pytest.mark.parametrize("selector,text,expected", [
    (_keeps_the_isr, None, "unclean_election_only_as_last_resort"),
    (_always_unclean, _CLEAN, "unclean_election_only_as_last_resort"),
    (_never_unclean, None, "no_offline_partition_with_live_replica_when_unclean"),
], ids=["keeps-the-isr", "always-unclean", "never-unclean"])
def test_a_broken_selector_is_found(selector, text, expected: str,  # noqa: ANN001
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load("unclean") if text is None else loads(text, name="unclean-off")
    monkeypatch.setattr(leader_selection, "offline_leader", selector)
    r = bfs(sc, default_checks())
    assert r.verdict == "violation" and r.violation is not None
    assert r.violation.invariant == expected, r.violation


def test_the_clean_setting_passes_the_same_faults() -> None:
    r = bfs(loads(_CLEAN, name="unclean-off"), default_checks())
    assert r.verdict == "pass", r.violation
