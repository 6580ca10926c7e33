"""The epoch index against the plain truth: a log written out as one epoch per offset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.raft import epochs as idx
from fsm.raft.messages import OffsetAndEpoch


@st.composite
def logs(draw) -> list[int]:
    """Epochs of the records at offsets 0.. (non-decreasing, from 1)."""
    out, epoch = [], 1
    for _ in range(draw(st.integers(0, 12))):
        epoch += draw(st.integers(0, 2))
        out += [epoch] * draw(st.integers(1, 3))
    return out


def index_of(log: list[int]) -> idx.Epochs:
    out: list[tuple[int, int]] = []
    for offset, epoch in enumerate(log):
        out = list(idx.appended(tuple(out), epoch, offset))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(log=logs(), data=st.data())
def test_lookups_agree_with_the_written_out_log(log, data):
    epochs = index_of(log)
    offset = data.draw(st.integers(0, len(log)))
    assert idx.epoch_before(epochs, offset, None) == (log[offset - 1] if offset else 0)
    asked = data.draw(st.integers(0, 30))
    found = idx.end_offset_for_epoch(epochs, len(log), asked, None)
    held = [e for e in log if e <= asked]
    if not held:
        assert found is None
    else:
        e = max(held)
        assert found == OffsetAndEpoch(max(i for i, x in enumerate(log) if x == e) + 1, e)


@settings(max_examples=300, deadline=None)
@given(log=logs(), data=st.data())
def test_truncation_and_trimming_agree_with_the_written_out_log(log, data):
    epochs = index_of(log)
    cut = data.draw(st.integers(0, len(log)))
    assert idx.truncated(epochs, cut, None) == index_of(log[:cut])
    start = data.draw(st.integers(0, len(log)))
    trimmed = idx.trimmed(epochs, start)
    snap = OffsetAndEpoch(start, log[start - 1]) if start else None
    for offset in range(start, len(log) + 1):
        assert idx.epoch_before(trimmed, offset, snap) == (log[offset - 1] if offset else 0)
    for asked in range(0, (log[-1] if log else 0) + 2):
        expect = idx.end_offset_for_epoch(epochs, len(log), asked, None)
        got = idx.end_offset_for_epoch(trimmed, len(log), asked, snap)
        if expect is not None and expect.offset >= start:
            assert got == expect, (asked, start)


def test_an_epoch_going_back_is_refused():
    with pytest.raises(ValueError, match="after epoch 3"):
        idx.appended(((3, 0),), 2, 5)
