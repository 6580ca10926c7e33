"""The KRaft transcripts can fail: under each of the checker's KRaft mutants
(``model_check.kraft.mutants``) the transcripts named here fail their ``expect`` lines --
failures that ``--rewrite`` does not paper over."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_check.kraft.mutants import KRAFT_MUTANTS, patched

from .kraft_interpreter import run_kraft_transcript

HERE = Path(__file__).parent

CAUGHT_BY = {
    "kraft-isr-change-bumps-leader-epoch": ("alter_partition", "reassignment", "lease_expiry"),
    "kraft-stale-alter-partition-accepted": ("alter_partition",
                                             "interleave_alter_partition_vs_leader_change"),
    "kraft-uncommitted-visible": ("interleave_failover_uncommitted", "create_topics",
                                  "heartbeat"),
    "kraft-unfenced-before-caught-up": ("heartbeat", "unregister"),
    "kraft-retried-registration-new-epoch": ("interleave_registration_lost_answer",),
}


def test_every_mutant_has_transcripts() -> None:
    assert sorted(CAUGHT_BY) == sorted(m.name for m in KRAFT_MUTANTS)


@pytest.mark.parametrize("mutant", sorted(CAUGHT_BY))
def test_transcripts_fail_under_the_mutant(mutant: str) -> None:
    texts = {name: (HERE / f"kraft_{name}.txt").read_text() for name in CAUGHT_BY[mutant]}
    with patched(mutant):
        passed = [name for name, text in texts.items() if not run_kraft_transcript(text)[2]]
    assert not passed, f"{mutant}: these transcripts still meet every expectation: {passed}"
    for name, text in texts.items():  # and the clean core passes them again
        assert not run_kraft_transcript(text)[2], name
