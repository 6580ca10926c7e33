"""Every controller unit test runs under the state-setter guard: a partition or replica state
written anywhere but in ``Controller._move_partitions`` / ``_move_replicas`` fails the test
(``state_guard``)."""

from __future__ import annotations

import pytest

from .state_guard import guard


@pytest.fixture(autouse=True)
def _states_written_only_by_the_setters(monkeypatch: pytest.MonkeyPatch) -> None:
    guard(monkeypatch)
