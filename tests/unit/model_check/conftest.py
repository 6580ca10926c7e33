"""Fixtures for the model checker tests."""

from __future__ import annotations

import pytest
from mc_support import patch_broker_epoch_bug


@pytest.fixture
def broker_epoch_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_broker_epoch_bug(monkeypatch)
