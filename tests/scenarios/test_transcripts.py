"""Scenario transcripts: every ``*.txt`` here is run command by command against the world
(``kraft_*.txt`` against the KRaft world, by ``kraft_interpreter``; the rest against the
ZooKeeper-mode world, by ``interpreter``).

Expectations (``expect ...``) fail the test even with ``--rewrite``; the rest of the
output is compared with the file, or written back into it under ``--rewrite``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .interpreter import run_transcript
from .kraft_interpreter import run_kraft_transcript

HERE = Path(__file__).parent
TRANSCRIPTS = sorted(HERE.glob("*.txt"))


def rewrite_wanted(config: pytest.Config) -> bool:
    try:
        flag = bool(config.getoption("--rewrite"))
    except ValueError:
        flag = False
    return flag or os.environ.get("KCONTROL_REWRITE") == "1"


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcript(path: Path, request: pytest.FixtureRequest) -> None:
    text = path.read_text()
    run = run_kraft_transcript if path.stem.startswith("kraft_") else run_transcript
    produced, mismatches, failures = run(text)
    if rewrite_wanted(request.config) and produced != text:
        path.write_text(produced)
    assert not failures, f"{path.name}: " + "\n".join(failures)
    if rewrite_wanted(request.config):
        return
    assert not mismatches, f"{path.name}:\n" + "\n".join(mismatches) + \
        "\n(run `pytest tests/scenarios --rewrite` if the new output is right)"
