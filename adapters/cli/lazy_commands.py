"""``LazyCommands``: a click group's name -> command mapping whose commands are imported from
their modules on first use.

``kcontrol node --config F`` starts a KRaft node; it needs the ``node`` command's module and
nothing of the checker, the ZooKeeper tools or Spark, which the other sub-commands import.
Given as a group's ``commands``, the mapping lists every name without importing anything
(``list_commands``, "did you mean" suggestions); click's ``get_command`` -- the one command a
command line names, or every command for the group's ``--help`` listing -- imports that
command's module only.

Each entry is ``"package.module:attribute"``; the attribute must be a click command of that
name (a mismatch is a programming error and raises at once, not a missing command).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping

import click


class LazyCommands(MutableMapping[str, click.Command]):
    """Commands by name, each imported from ``"module:attribute"`` when first looked up."""

    def __init__(self, where: Mapping[str, str]) -> None:
        for name, spec in where.items():
            module, sep, attribute = spec.partition(":")
            if not (module and sep and attribute):
                raise ValueError(f"{name}: {spec!r} is not 'module:attribute'")
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module, _, attribute = self._where[name].partition(":")  # KeyError: no such name
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != name:
                raise TypeError(f"{module}.{attribute} is not the click command {name!r}")
            self._loaded[name] = command
        return command

    def get(self, name: str, default: click.Command | None = None) -> click.Command | None:  # type: ignore[override]
        """The command, or ``default`` for a name not listed (an import error propagates:
        a broken module is not a missing command)."""
        if name not in self:
            return default
        return self[name]

    def __contains__(self, name: object) -> bool:
        return name in self._where or name in self._loaded

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command
        self._where.pop(name, None)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._loaded.pop(name, None)
        self._where.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._where
        yield from (n for n in self._loaded if n not in self._where)

    def __len__(self) -> int:
        return len(self._where.keys() | self._loaded.keys())

    def loaded(self) -> frozenset[str]:
        """The names whose command has been imported (or added) so far."""
        return frozenset(self._loaded)
