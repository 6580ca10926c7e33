"""The quorum codec with the log's own record batch v2 codec (``adapters.raft_log``'s
``encode_batches`` / ``decode_batches``, records as bytes): a Fetch answer's batches --
control batches (LeaderChange) among them -- survive the converter, the frames and a real
transport on loopback, byte for byte as the log writes them; a batch whose CRC no longer
matches is a ``DecodeError`` naming the records field."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.network.codec import raft_frames
from adapters.network.codec.errors import DecodeError
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.raft_log.serde import BYTES
from adapters.raft_log.wire_records import decode_batches, encode_batches
from adapters.raft_transport import RaftTransport
from fsm.errors import ErrorCode
from fsm.raft.messages import Batch, FetchRequest, FetchResponse, LeaderChange

LOG_RECORDS = RecordsCodec(lambda bs: encode_batches(bs, BYTES, 0),
                           lambda data: decode_batches(data, BYTES))
CONVERTER = RaftConverter(LOG_RECORDS, "cluster-log")


@st.composite
def log_batches(draw: st.DrawFn) -> tuple[Batch, ...]:
    """Batches as a log holds them: contiguous offsets, epochs that never go down."""
    offset = draw(st.integers(0, 2**40))
    epoch = draw(st.integers(0, 1000))
    out = []
    for _ in range(draw(st.integers(1, 4))):
        epoch += draw(st.integers(0, 2))
        if draw(st.booleans()):
            voters = tuple(draw(st.lists(st.integers(0, 50), min_size=1, max_size=3)))
            batch = Batch(offset, epoch, (LeaderChange(voters[0], voters, voters[:1]),),
                          control=True)
        else:
            records = tuple(draw(st.lists(st.binary(max_size=40), min_size=1, max_size=5)))
            batch = Batch(offset, epoch, records)
        out.append(batch)
        offset = batch.end_offset
    return tuple(out)


def through_frames(message: FetchResponse) -> Any:
    _, _, body = CONVERTER.to_wire(message)
    frame = raft_frames.encode_response(1, 12, 3, body)
    _, decoded = raft_frames.decode_response(1, 12, frame[4:])
    return CONVERTER.from_wire(1, False, decoded)


@settings(max_examples=150, deadline=None)
@given(log_batches())
def test_log_batches_survive_the_wire(batches: tuple[Batch, ...]) -> None:
    message = FetchResponse(ErrorCode.NONE, 7, 2, 10, 0, batches)
    assert through_frames(message) == message
    _, _, body = CONVERTER.to_wire(message)
    assert body["responses"][0]["partitions"][0]["records"] == encode_batches(batches, BYTES, 0)


def test_a_flipped_bit_in_the_records_is_refused_by_name() -> None:
    message = FetchResponse(ErrorCode.NONE, 7, 2, 10, 0, (Batch(5, 3, (b"abc", b"def")),))
    _, _, body = CONVERTER.to_wire(message)
    partition = body["responses"][0]["partitions"][0]
    records = bytearray(partition["records"])
    records[-1] ^= 0x01  # inside the last record: the CRC covers it
    partition["records"] = bytes(records)
    with pytest.raises(DecodeError, match=r"records: .*CRC"):
        CONVERTER.from_wire(1, False, body)


def test_log_batches_over_a_real_transport() -> None:
    socks = {i: socket.create_server(("127.0.0.1", 0)) for i in (1, 2)}
    voters = {i: s.getsockname()[:2] for i, s in socks.items()}
    batches = (Batch(0, 1, (LeaderChange(2, (1, 2), (2,)),), control=True),
               Batch(1, 1, (b"x" * 1000, b"y" * 1000)))
    answer = FetchResponse(ErrorCode.NONE, 1, 2, 3, 0, batches)
    got: list[Any] = []
    arrived = threading.Event()
    holder: list[RaftTransport] = []

    def record(source: int, message: Any) -> None:
        got.append((source, message))
        arrived.set()

    with RaftTransport(2, voters, socks[2], lambda s, m: holder[0].send(s, answer),
                       converter=CONVERTER) as t2, \
            RaftTransport(1, voters, socks[1], record, converter=CONVERTER) as t1:
        holder.append(t2)
        t1.send(2, FetchRequest(1, 1, 0, 0))
        assert arrived.wait(10)
    assert got == [(2, answer)]
