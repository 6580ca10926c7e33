"""``LazyCommands``: names listed without importing, a command imported when looked up, a wrong
entry or a broken module an error (never "no such command"), and the ``kcontrol`` group's table
naming every command as its module does."""

from __future__ import annotations

import sys

import click
import pytest
from click.testing import CliRunner

from adapters.cli import COMMANDS, main
from adapters.cli.lazy_commands import LazyCommands


def test_listing_imports_nothing_and_lookup_imports_one_module(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "adapters.cli.diagrams_cmd", raising=False)
    lazy = LazyCommands({"diagrams": "adapters.cli.diagrams_cmd:diagrams",
                         "zz": "no.such.module:thing"})
    group = click.Group("g", commands=lazy)
    assert group.list_commands(click.Context(group)) == ["diagrams", "zz"]
    assert "adapters.cli.diagrams_cmd" not in sys.modules and lazy.loaded() == frozenset()
    assert group.get_command(click.Context(group), "diagrams").name == "diagrams"  # type: ignore[union-attr]
    assert "adapters.cli.diagrams_cmd" in sys.modules and lazy.loaded() == {"diagrams"}
    assert group.get_command(click.Context(group), "nope") is None
    with pytest.raises(ModuleNotFoundError):  # listed but broken: the error, not None
        group.get_command(click.Context(group), "zz")


def test_an_entry_that_is_not_its_command_is_refused() -> None:
    with pytest.raises(ValueError, match="not 'module:attribute'"):
        LazyCommands({"x": "adapters.cli.diagrams_cmd"})
    lazy = LazyCommands({"draw": "adapters.cli.diagrams_cmd:diagrams",
                         "log": "adapters.cli.diagrams_cmd:Path"})
    for name in ("draw", "log"):
        with pytest.raises(TypeError, match=f"is not the click command '{name}'"):
            lazy[name]


def test_added_and_removed_commands() -> None:
    lazy = LazyCommands({"diagrams": "adapters.cli.diagrams_cmd:diagrams"})
    extra = click.Command("extra")
    lazy["extra"] = extra
    assert list(lazy) == ["diagrams", "extra"] and len(lazy) == 2 and lazy["extra"] is extra
    del lazy["diagrams"]
    assert list(lazy) == ["extra"] and "diagrams" not in lazy
    with pytest.raises(KeyError):
        del lazy["diagrams"]


def test_every_kcontrol_command_is_listed_and_loads_under_its_name() -> None:
    assert sorted(main.commands) == sorted(COMMANDS)
    assert all(main.commands[name].name == name for name in COMMANDS)


def test_a_mistyped_command_still_gets_a_suggestion() -> None:
    r = CliRunner().invoke(main, ["nod"])
    assert r.exit_code == 2 and "Did you mean 'node'?" in r.stderr
