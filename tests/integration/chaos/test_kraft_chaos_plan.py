"""The KRaft campaign's pure parts: the seeded plan, ``--plan``, the mode's options, the
report's verdict."""

from __future__ import annotations

from click.testing import CliRunner

from adapters.chaos.report import FaultRecord
from adapters.cli import main
from adapters.kraft_chaos.plan import KFaultKind, available_kinds, make_plan
from adapters.kraft_chaos.report import KRaftReport
from tests.integration.chaos.test_chaos_plan import assert_actions_name_live_topics


def test_the_plan_is_a_function_of_the_seed() -> None:
    assert make_plan(5, 60, 3) == make_plan(5, 60, 3)
    assert make_plan(5, 60, 3) != make_plan(6, 60, 3)
    assert make_plan(5, 60, 3, disks=False) != make_plan(5, 60, 3)


def test_the_first_round_covers_every_kind() -> None:
    for seed in (1, 2, 11):
        plan = make_plan(seed, 200, 3)
        assert {s.fault.kind for s in plan[:len(KFaultKind)]} == set(KFaultKind)
        assert {s.fault.kind for s in plan} == set(KFaultKind)


def test_kinds_left_out_without_disks_or_network() -> None:
    kinds = {s.fault.kind for s in make_plan(1, 200, 3, disks=False, network=False)}
    assert kinds == set(available_kinds(disks=False, network=False))
    assert not any(k.needs_disk or k.needs_network for k in kinds)
    assert len(kinds) == 7


def test_actions_name_the_topics_the_plan_expects() -> None:
    assert_actions_name_live_topics(make_plan(3, 200, 3), {1, 2, 3})


def test_plan_option_prints_the_plan_and_starts_nothing() -> None:
    r = CliRunner().invoke(main, ["chaos", "--mode", "kraft", "--faults", "12", "--seed", "4",
                                  "--plan"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) == 12
    for step, line in zip(make_plan(4, 12, 3), lines, strict=True):
        assert step.fault.describe() in line and step.action.describe() in line
    again = CliRunner().invoke(main, ["chaos", "--mode", "kraft", "--faults", "12", "--seed",
                                      "4", "--plan"])
    assert again.output == r.output


def test_options_of_the_other_mode_are_refused() -> None:
    r = CliRunner().invoke(main, ["chaos", "--mode", "kraft", "--zookeeper", "h:2181",
                                  "--plan"])
    assert r.exit_code == 2 and "--zookeeper is for --mode zookeeper only" in r.output
    r = CliRunner().invoke(main, ["chaos", "--fetch-timeout-ms", "1000", "--plan"])
    assert r.exit_code == 2 and "--fetch-timeout-ms is for --mode kraft only" in r.output
    r = CliRunner().invoke(main, ["chaos", "--plan", "--faults", "3"])  # zookeeper: the default
    assert r.exit_code == 0 and len(r.output.splitlines()) == 3


def test_the_report_fails_on_lost_records_and_slow_recovery() -> None:
    report = KRaftReport(1, 3, 2, 3000)
    report.records.append(FaultRecord(1, "kill-broker", "broker 1", "create", "acknowledged",
                                      recovery_s=4.9))
    assert report.ok and report.to_json()["recovery_over_target"] == []
    report.records.append(FaultRecord(2, "pause-broker", "broker 2", "create", "acknowledged",
                                      recovery_s=5.1))
    assert not report.ok
    assert [r["step"] for r in report.to_json()["recovery_over_target"]] == [2]
    report.records.pop()
    report.lost_committed_records.append({"node": "controller 3000", "offset": 7,
                                          "detail": "changed"})
    got = report.to_json()
    assert not report.ok and got["ok"] is False and got["mode"] == "kraft"
    for key in ("faults", "faults_by_kind", "violations", "lost", "stuck", "recovery_seconds",
                "seed", "actions_by_kind", "machine", "steps", "lost_committed_records",
                "recovery_seconds_by_kind", "recovery_over_target"):
        assert key in got
