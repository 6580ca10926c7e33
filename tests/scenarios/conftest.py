"""``pytest tests/scenarios --rewrite`` regenerates the expected output of every transcript
(``KCONTROL_REWRITE=1`` does the same from anywhere)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--rewrite", action="store_true", default=False,
                     help="rewrite tests/scenarios/*.txt with the output produced")
