"""Fixtures for the model checker tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from model_check import mutants


@pytest.fixture
def broker_epoch_bug() -> Iterator[None]:
    """Brokers ignore the broker epoch (KIP-380 undone) for the test."""
    with mutants.patched("broker-ignores-broker-epoch"):
        yield
