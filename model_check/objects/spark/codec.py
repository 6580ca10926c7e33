"""How a world travels between Spark processes: ``pickle`` (protocol 5) of the object, with two
of its references left out and put back on arrival by identity -- the scenario (every task
has it in its ``Job``; a world holds it and it would be most of the bytes) and the set the
run's coverage is counted into (``WorldKind.watch``: each process counts into its own).
A path is the action indices from the start, two bytes each, big-endian (the ZooKeeper-mode
engine's ``encoding.step``): ``bytes`` order on paths of one length is the order in which the
local engine meets them."""

from __future__ import annotations

import io
import pickle
from typing import Any

from model_check.spark.encoding import last_index, path_indices, step

__all__ = ["dumps", "last_index", "loads", "path_indices", "step"]

_SCENARIO, _REACHED = "scenario", "reached"


class _Pickler(pickle.Pickler):
    def __init__(self, out: io.BytesIO, scenario: Any, reached: Any) -> None:
        super().__init__(out, protocol=5)
        self._scenario, self._reached = scenario, reached

    def persistent_id(self, obj: Any) -> str | None:  # noqa: D102 -- pickle's hook
        if obj is self._scenario:
            return _SCENARIO
        if self._reached is not None and obj is self._reached:
            return _REACHED
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: io.BytesIO, scenario: Any, reached: Any) -> None:
        super().__init__(data)
        self._scenario, self._reached = scenario, reached

    def persistent_load(self, pid: str) -> Any:  # noqa: D102 -- pickle's hook
        if pid == _SCENARIO:
            return self._scenario
        if pid == _REACHED:
            return self._reached
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


def dumps(world: Any, scenario: Any, reached: Any = None) -> bytes:
    """``world`` as bytes, without ``scenario`` and ``reached`` (the coverage set)."""
    out = io.BytesIO()
    _Pickler(out, scenario, reached).dump(world)
    return out.getvalue()


def loads(blob: bytes, scenario: Any, reached: Any = None) -> Any:
    """The world of ``dumps``, holding this process's ``scenario`` and ``reached``."""
    return _Unpickler(io.BytesIO(blob), scenario, reached).load()
