"""The records field of the node's Fetch answers: the log's bytes pass as they are, values
are encoded by the log's codec, a follower decodes both alike, and a damaged answer is a
``DecodeError`` naming where."""

from __future__ import annotations

import pytest

from adapters.network.codec.errors import DecodeError
from adapters.raft_log import BYTES
from adapters.raft_log import encode_batches as log_encode
from adapters.raft_node.encoded import EncodedBatches
from adapters.raft_node.wire_records import decode_batches, encode_batches
from fsm.raft.messages import Batch, LeaderChange

BATCHES = (Batch(0, 1, (LeaderChange(1, (1, 2, 3)),), control=True),
           Batch(1, 1, (b"alpha", b"beta")), Batch(3, 2, (b"gamma",)))


def test_the_logs_bytes_go_out_as_they_are_and_decode_like_values() -> None:
    on_disk = log_encode(BATCHES, BYTES, timestamp_ms=5)
    assert encode_batches((EncodedBatches(on_disk),)) == on_disk
    assert decode_batches(on_disk) == BATCHES
    assert decode_batches(encode_batches(BATCHES)) == BATCHES


def test_a_damaged_answer_is_a_decode_error() -> None:
    data = bytearray(log_encode(BATCHES, BYTES, timestamp_ms=5))
    data[-3] ^= 0xFF  # a record byte of the last batch: its CRC no longer matches
    with pytest.raises(DecodeError, match="CRC"):
        decode_batches(bytes(data))
    with pytest.raises(DecodeError):
        decode_batches(bytes(data[:-10]))  # cut short
