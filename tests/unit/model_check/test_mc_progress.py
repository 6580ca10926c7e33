"""Progress of long work (``model_check.progress``): no bar unless standard error is a terminal,
the plain lines' format and spacing, nothing on standard output; the exhaustive search's level
table has the memory column."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from model_check import progress
from model_check.memory import rss_bytes
from model_check.progress import Progress, plain_line

ROOT = Path(__file__).resolve().parents[3]
LINE = re.compile(r"progress: (?P<what>.+): (?P<done>\d+)/(?P<total>\d+) (?P<unit>\w+) "
                  r"\((?P<pct>\d+)%\), (?P<rate>\d+(\.\d)?) (?P=unit)/s, "
                  r"elapsed \d+:\d\d:\d\d, eta (\d+:\d\d:\d\d|\?)")


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_plain_line_has_the_documented_format() -> None:
    line = plain_line("deep --random", 42_000, 100_000, "steps", 13.5)
    assert line == ("progress: deep --random: 42000/100000 steps (42%), 3111 steps/s, "
                    "elapsed 0:00:13, eta 0:00:18")
    assert LINE.fullmatch(line)
    assert plain_line("x", 0, 5, "faults", 0.0).endswith("0.0 faults/s, elapsed 0:00:00, eta ?")
    assert LINE.fullmatch(plain_line("chaos seed 1", 3, 20, "faults", 95.0))
    assert plain_line("x", 1, 10, "faults", 4 * 3600.0).endswith(
        "elapsed 4:00:00, eta 36:00:00")


def test_plain_lines_come_at_most_every_interval_and_not_before_the_first() -> None:
    out, clock = io.StringIO(), Clock()
    with Progress("w", 100, "steps", clock=clock, stream=out) as p:
        assert p.mode == "plain"
        for _ in range(50):
            clock.t += 1.0  # 50 s in all, an advance a second
            p.advance(2)
    lines = out.getvalue().splitlines()
    assert len(lines) == 50 // int(progress.PLAIN_EVERY_S)
    assert all(LINE.fullmatch(line) for line in lines)
    assert lines[0].startswith("progress: w: 20/100 steps (20%), 2.0 steps/s, elapsed 0:00:10")


def test_off_prints_nothing() -> None:
    out, clock = io.StringIO(), Clock()
    with Progress("w", 10, "steps", enabled=False, clock=clock, stream=out) as p:
        clock.t += 3600
        p.advance(5)
    assert p.mode == "off" and p.done == 5 and out.getvalue() == ""


def test_no_bar_when_standard_error_is_not_a_terminal() -> None:
    with Progress("w", 10, "steps") as p:  # pytest's captured stderr is no terminal
        p.advance()
    assert p.mode == "plain"


def test_check_random_piped_no_control_characters_and_json_stays_json(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)  # a line after every walk
    r = CliRunner().invoke(main, ["check", "smoke", "--random", "--steps", "300", "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["states_generated"] == 300  # standard output: the JSON only
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("progress:")]
    assert lines and all(LINE.fullmatch(ln) for ln in lines)
    assert lines[-1].startswith("progress: smoke --random: 300/300 steps (100%)")
    assert "\x1b" not in r.stderr and "\r" not in r.stderr


def test_short_runs_print_no_progress_line() -> None:
    r = CliRunner().invoke(main, ["check", "smoke", "--random", "--steps", "300"])
    assert r.exit_code == 0, r.output
    assert "progress:" not in r.output and "\x1b" not in r.output


def test_the_level_table_shows_the_memory_in_use() -> None:
    r = CliRunner().invoke(main, ["check", "smoke", "--depth", "3"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["level"])
    assert lines[header].split() == ["level", "frontier", "generated", "new", "dupes",
                                     "seconds", "rss", "MiB"]
    rows = [ln.split() for ln in lines[header + 1:header + 4]]
    assert [row[0] for row in rows] == ["1", "2", "3"]
    assert all(len(row) == 7 and int(row[6]) > 0 for row in rows)


def test_rss_is_the_current_resident_set() -> None:
    rss = rss_bytes()
    assert rss is not None and 2**20 < rss < 2**40
    grown = bytearray(64 * 2**20)
    grown[:: 4096] = b"x" * len(grown[:: 4096])  # touch every page
    assert (rss_bytes() or 0) - rss > 32 * 2**20
    del grown


def test_walk_all_piped_writes_rows_and_no_control_characters(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "scripts/walk_all.py", "--seeds", "1", "--steps", "200",
                        "--scenario", "smoke", "--jobs", "1", "--trace-out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "1 of 1 walks pass" in r.stdout
    assert "\x1b" not in r.stdout + r.stderr and "\r" not in r.stdout + r.stderr


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_only_when_standard_error_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would take it for a terminal: not us
    with Progress("w", 10, "steps") as p:
        p.advance(10)
    assert p.mode == "plain"
    monkeypatch.setenv("TERM", "xterm")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with Progress("w", 10, "steps") as p:
        p.advance(10)
    assert p.mode == "bar"
    assert "\x1b[" in terminal.getvalue() and "progress:" not in terminal.getvalue()


def test_chaos_counts_the_faults_done(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The wiring only (no cluster): every audited fault advances the count."""
    from adapters.cli import chaos_cmd

    def campaign(settings, console, json_out, on_fault):  # noqa: ANN001, ANN202
        for _ in range(settings.faults):
            on_fault(None)
        return 0, None

    monkeypatch.setattr(chaos_cmd, "run_campaign", campaign)
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    r = CliRunner().invoke(main, ["chaos", "--faults", "3", "--dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("progress:")]
    assert [ln.split(",")[0] for ln in lines] == [
        f"progress: chaos seed 1: {k}/3 faults ({100 * k // 3}%)" for k in (1, 2, 3)]
    assert all(LINE.fullmatch(ln) for ln in lines) and "progress:" not in r.stdout
