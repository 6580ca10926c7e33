"""``--coverage``: what a search reached -- table transitions, handlers, decision kinds,
leader selectors, invariant premises -- counted per step, memo hits included."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from adapters.cli import main
from fsm.controller.leader_selection import selector_of
from fsm.controller.records import INIT, OFFLINE, PREFERRED, REASSIGN_DONE, SHUTDOWN
from fsm.tables import KRAFT_TABLES, ZK_TABLES
from fsm.values import LeaderAndIsr
from invariants import CATALOGUE
from model_check.checks import default_checks
from model_check.coverage import Coverage, never
from model_check.scenario import load
from model_check.search import bfs
from model_check.walk import walks


def _bfs(name: str) -> tuple:
    cov = Coverage()
    r = bfs(load(name), default_checks(), coverage=cov)
    return r, cov.report()


def test_coverage_changes_nothing_in_the_search() -> None:
    plain = bfs(load("smoke"), default_checks())
    r, _ = _bfs("smoke")
    assert (r.distinct_states, r.states_generated, r.verdict, r.depth) == \
        (plain.distinct_states, plain.states_generated, plain.verdict, plain.depth)


def test_every_table_pair_is_either_taken_or_never_and_counts_add_up() -> None:
    r, rep = _bfs("smoke")
    for name, table in ZK_TABLES.items():
        entry = rep["tables"][name]
        pairs = {f"{a.value} -> {b.value}" for a, b in table.pairs}
        assert set(entry["taken"]) | set(entry["never"]) == pairs
        assert not set(entry["taken"]) & set(entry["never"])
        assert entry["other"] == {}  # nothing outside the table was ever taken
    # the KRaft tables are no ZooKeeper world's: the report does not count them
    assert set(rep["tables"]) == set(ZK_TABLES)
    assert not set(rep["tables"]) & set(KRAFT_TABLES)
    assert not any(g.startswith("transition kraft-") for g in rep["never"])
    # smoke: two brokers start, a topic is created, one broker crashes -- the crash moves
    # replicas offline and its partition's leadership (or ISR) changes
    assert rep["tables"]["replica"]["taken"]["OnlineReplica -> OfflineReplica"] > 0
    assert rep["tables"]["broker-session"]["taken"]["RUNNING -> NOT_RUNNING"] > 0
    assert rep["handlers"]["controller"]["taken"]["BrokerChange"] > 0
    assert rep["decisions"]["taken"]["offline"] > 0
    assert rep["selectors"]["taken"]["new-partition"] == 1  # the setup's topic, once
    assert "TopicDeletionRequest" in rep["handlers"]["controller"]["never"]
    assert "transition replica: ReplicaDeletionStarted -> ReplicaDeletionSuccessful" in \
        rep["never"]
    # every distinct state and the setup's are checked once; every step once
    assert rep["states_checked"] == r.distinct_states + r.setup_steps
    assert rep["steps_checked"] == r.states_generated + r.setup_steps


def test_memo_hits_count_as_the_steps_that_first_ran() -> None:
    """The second search of the same scenario in this process is all step-memo hits: it must
    report exactly what the first one did."""
    _, first = _bfs("mutants-shutdown")
    _, second = _bfs("mutants-shutdown")
    assert first == second and first["core_steps"] > 0


def test_premises_tell_vacuous_from_checked() -> None:
    _, smoke = _bfs("smoke")
    inv = smoke["invariants"]
    assert set(inv) == {i.name for i in CATALOGUE}
    # no deletion, no reassignment, no controlled shutdown in smoke: those held vacuously
    for name in ("deleted_topic_leaves_no_replica", "finished_reassignment_has_target_replicas",
                 "controlled_shutdown_moved_leadership"):
        assert inv[name]["evaluated"] > 0 and inv[name]["premise_held"] == 0, name
        assert f"invariant premise: {name}" in smoke["never"]
    assert inv["leader_in_isr"]["premise_held"] > 0
    # the controlled shutdown scenario reaches the controlled-shutdown invariant's premise
    _, cs = _bfs("mutants-shutdown")
    assert cs["invariants"]["controlled_shutdown_moved_leadership"]["premise_held"] > 0
    assert cs["selectors"]["taken"]["controlled-shutdown"] > 0


def test_a_waived_invariant_is_reported_not_skipped() -> None:
    """Under unclean election at_most_one_committer is not enforced, but it is evaluated:
    on unclean-paused the paused old leader and the unclean new one both commit."""
    cov = Coverage()
    r = walks(load("unclean-paused"), default_checks(), 20_000, seed=1, coverage=cov)
    assert r.verdict == "pass"
    e = cov.report()["invariants"]["at_most_one_committer"]
    assert e["evaluated"] == 0 and e["waived"] == r.states_generated + r.setup_steps + 1
    assert e["would_fail"] > 0 and "unclean" in e["waiver"].lower()


def test_random_walks_count_every_step() -> None:
    cov = Coverage()
    r = walks(load("smoke"), default_checks(), 500, seed=3, coverage=cov)
    rep = cov.report()
    assert rep["steps_checked"] == r.states_generated + r.setup_steps
    assert rep["states_checked"] == r.states_generated + r.setup_steps + 1  # + the fresh world
    again = Coverage()
    walks(load("smoke"), default_checks(), 500, seed=3, coverage=again)
    assert again.report() == rep


def test_merging_plain_coverage_adds_up() -> None:
    _, rep = _bfs("smoke")
    cov = Coverage()
    bfs(load("smoke"), default_checks(), coverage=cov)
    total = Coverage()
    total.merge(cov.plain())
    total.merge(cov)
    doubled = total.report()
    assert doubled["core_steps"] == 2 * rep["core_steps"]
    assert doubled["tables"]["replica"]["taken"] == {
        k: 2 * v for k, v in rep["tables"]["replica"]["taken"].items()}
    assert never(doubled) == never(rep)


def test_selector_of_names_who_chose_the_leader() -> None:
    before = LeaderAndIsr(1, 3, (1, 2), 1)
    assert selector_of(INIT, None, LeaderAndIsr(1, 0, (1, 2), 1)) == "new-partition"
    assert selector_of(OFFLINE, before, LeaderAndIsr(2, 4, (2,), 1)) == "offline"
    assert selector_of(OFFLINE, before, LeaderAndIsr(3, 4, (3,), 1)) == "offline-unclean"
    assert selector_of(OFFLINE, before, LeaderAndIsr(-1, 4, (1, 2), 1)) is None
    assert selector_of(OFFLINE, before, LeaderAndIsr(1, 4, (1,), 1)) is None  # ISR shrink
    assert selector_of(SHUTDOWN, before, LeaderAndIsr(2, 4, (2,), 1)) == "controlled-shutdown"
    assert selector_of(PREFERRED, LeaderAndIsr(2, 3, (1, 2), 1),
                       LeaderAndIsr(1, 4, (1, 2), 1)) == "preferred"
    assert selector_of(REASSIGN_DONE, before, LeaderAndIsr(2, 4, (2,), 1)) == "reassigned"


def test_cli_prints_the_table_and_writes_the_json_key(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["check", "smoke", "--coverage", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "table partition:" in r.output and "controller handlers:" in r.output
    assert "never reached:" in r.output
    doc = json.loads(out.read_text())
    assert doc["coverage"]["tables"]["partition"]["taken"]
    r = CliRunner().invoke(main, ["check", "smoke", "--json", str(tmp_path / "plain.json")])
    assert r.exit_code == 0 and "table partition:" not in r.output
    assert "coverage" not in json.loads((tmp_path / "plain.json").read_text())
