"""``adapters.campaign.finish.run_to_end``: the exit code from the run and the report (0 only
for a clean, ok run; 1 for the campaign's error or a failed report; 130 for Ctrl-C or a
signal), the workload's figures collected and everything closed in every case, the report
written, the signal handlers given back."""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from adapters.campaign.finish import run_to_end


class Broken(RuntimeError):
    pass


@dataclass
class FakeReport:
    ok: bool = True
    aborted: str | None = None
    duration_s: float = 0.0

    def print(self, console: Console) -> None:
        console.print(f"verdict {'PASS' if self.ok and not self.aborted else 'FAIL'}")

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "aborted": self.aborted}


@dataclass
class FakeCampaign:
    raises: BaseException | None = None
    signum: int | None = None
    report: FakeReport = field(default_factory=FakeReport)
    t0: float = 0.0
    calls: list[str] = field(default_factory=list)

    def run(self) -> None:
        self.calls.append("run")
        if self.signum is not None:
            signal.raise_signal(self.signum)
        if self.raises is not None:
            raise self.raises

    def collect(self) -> None:
        self.calls.append("collect")

    def close(self) -> None:
        # a signal while closing is ignored: the clean-up is not cut short
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        self.calls.append("close")


def _run(campaign: FakeCampaign, json_path: Path | None = None) -> int:
    console = Console(record=True, width=200)
    code, report = run_to_end(campaign, console, json_path, (Broken,))
    assert report is campaign.report
    assert campaign.calls[-2:] == ["collect", "close"]
    return code


def test_a_clean_run_exits_0_and_writes_the_report(tmp_path: Path) -> None:
    c = FakeCampaign()
    before = signal.getsignal(signal.SIGTERM)
    assert _run(c, tmp_path / "r.json") == 0
    assert json.loads((tmp_path / "r.json").read_text()) == {"ok": True, "aborted": None}
    assert c.report.duration_s > 0
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_failed_report_exits_1() -> None:
    c = FakeCampaign(report=FakeReport(ok=False))
    assert _run(c) == 1


def test_the_campaigns_error_exits_1_and_is_the_abort_reason() -> None:
    c = FakeCampaign(raises=Broken("the cluster did not start"))
    assert _run(c) == 1
    assert c.report.aborted == "the cluster did not start"


def test_another_error_is_not_swallowed_but_everything_is_closed() -> None:
    c = FakeCampaign(raises=ValueError("a bug"))
    with pytest.raises(ValueError, match="a bug"):
        run_to_end(c, Console(record=True), None, (Broken,))
    assert c.calls == ["run", "collect", "close"]


@pytest.mark.parametrize(("how", "aborted"), [
    ("ctrl-c", "interrupted"), (signal.SIGTERM, "stopped by SIGTERM"),
    (signal.SIGHUP, "stopped by SIGHUP")])
def test_ctrl_c_and_signals_exit_130(how: Any, aborted: str) -> None:
    c = FakeCampaign(raises=KeyboardInterrupt()) if how == "ctrl-c" else FakeCampaign(signum=how)
    assert _run(c) == 130
    assert c.report.aborted == aborted
