"""The Fetch ``records`` field: batches back to back, the bytes of the log's segments."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from raft_log_support import batches, open_log

from adapters.raft_log import BYTES, MalformedBatch, decode_batches, encode_batches
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import TopicRecord
from fsm.raft.messages import Batch, LeaderChange


def test_round_trip_with_the_metadata_serde() -> None:
    data = (Batch(0, 1, (LeaderChange(1, (1, 2, 3), (1, 2)),), control=True),
            Batch(1, 1, (TopicRecord("a", uuid_of(1)), TopicRecord("b", uuid_of(2)))))
    assert decode_batches(encode_batches(data)) == data
    assert decode_batches(b"") == ()


def test_the_log_serves_what_decode_batches_reads(tmp_path: Path) -> None:
    data = batches(0, [2, 3, 1])
    with open_log(tmp_path) as log:
        log.append(data)
        assert decode_batches(log.read_bytes(0, 6, 10), BYTES) == tuple(data)


def _boundaries(raw: bytes) -> list[int]:
    from adapters.raft_log.batch_format import read_header
    out, pos = [0], 0
    while pos < len(raw):
        pos += read_header(raw, pos).size
        out.append(pos)
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_cut_or_flip_is_refused_with_a_position(data: st.DataObject) -> None:
    raw = bytearray(encode_batches(batches(0, [2, 3, 1]), BYTES, 0))
    bounds = _boundaries(bytes(raw))
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(1, len(raw) - 1).filter(lambda c: c not in bounds))
        bad = bytes(raw[:cut])  # a cut at a boundary is a shorter, good answer
    else:
        # the CRC does not cover a batch's base offset and epoch: flips there are tested
        # below, by the order they break
        blind = {b + i for b in bounds[:1] for i in range(8)} | {
            b + i for b in bounds[:-1] for i in range(12, 16)}
        at = data.draw(st.integers(0, len(raw) - 1).filter(lambda a: a not in blind))
        raw[at] ^= 0x10
        bad = bytes(raw)
    with pytest.raises(MalformedBatch, match="batch at byte"):
        decode_batches(bad, BYTES)


def test_batches_out_of_order_are_refused() -> None:
    a, b = batches(0, [2, 3])
    with pytest.raises(MalformedBatch, match="batch at byte 79: batch at offset 3 epoch 1 "
                                             "after one ending at 2"):
        decode_batches(encode_batches([a], BYTES) + encode_batches(
            [Batch(3, 1, b.records)], BYTES), BYTES)
    with pytest.raises(MalformedBatch, match="epoch 0 after one ending at 2 in epoch 1"):
        decode_batches(encode_batches([a], BYTES) + encode_batches(
            [Batch(2, 0, b.records)], BYTES), BYTES)
