"""The committed Mermaid diagrams are the ones the tables draw today."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.diagrams import DiagramError, render_all
from fsm.tables import ALL_TABLES

SPECS = Path(__file__).resolve().parents[2] / "specs" / "diagrams"


def test_committed_mermaid_diagrams_are_up_to_date():
    for d in render_all("mermaid"):
        path = SPECS / d.filename
        assert path.exists(), f"{path} is missing: run `make diagrams`"
        assert path.read_text() == d.content, f"{path} is stale: run `make diagrams`"


def test_every_transition_is_drawn():
    for d in render_all("mermaid"):
        t = ALL_TABLES[d.table]
        for a, b in t.pairs:
            assert f"  {a.value} --> {b.value}: to_{b.value}" in d.content, (d.table, a, b)


def test_a_move_into_one_state_from_every_state_is_drawn():
    """transitions takes a ``to_X`` event with a move from every state for an auto transition
    and leaves it out of the drawing unless told not to: ours are declared moves."""
    from adapters.diagrams import mermaid
    from fsm.transition_table import table

    class S(enum.Enum):
        A = "A"
        B = "B"

    drawn = mermaid(table("every-to-b", S, S.A, {S.A: [S.B], S.B: [S.B, S.A]}))
    for a, b in (("A", "B"), ("B", "B"), ("B", "A")):
        assert f"  {a} --> {b}: to_{b}" in drawn, (a, b)


def test_rendering_is_deterministic():
    assert render_all("mermaid") == render_all("mermaid")


def test_cli_regenerates_identical_files(tmp_path):
    result = CliRunner().invoke(main, ["diagrams", "--out", str(tmp_path), "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    for d in render_all("mermaid"):
        assert (tmp_path / d.filename).read_text() == (SPECS / d.filename).read_text()


def test_dot_needs_no_binary():
    for d in render_all("dot"):
        assert d.content.startswith("digraph")
        assert "OnlinePartition" in d.content or d.table != "partition"


def test_svg_without_dot_binary_says_so(monkeypatch):
    monkeypatch.setattr("adapters.diagrams.shutil.which", lambda name: None)
    with pytest.raises(DiagramError, match="apt-get install graphviz"):
        render_all("svg")
    result = CliRunner().invoke(main, ["diagrams", "--format", "svg", "--out", "/tmp/x"])
    assert result.exit_code == 1
    assert "Graphviz" in result.output


def test_unknown_format_is_a_usage_error():
    result = CliRunner().invoke(main, ["diagrams", "--format", "png"])
    assert result.exit_code == 2
