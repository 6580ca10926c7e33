"""Size-prefixed frames fed in arbitrary pieces; oversized and negative sizes."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.network.codec.errors import FrameError, FrameTooLarge
from adapters.network.codec.framing import FrameReader, frame


@given(
    payloads=st.lists(st.binary(max_size=40), max_size=6),
    cuts=st.lists(st.integers(0, 400), max_size=10),
)
def test_frames_come_out_whole_however_the_bytes_are_cut(
    payloads: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(frame(p) for p in payloads)
    reader = FrameReader(max_frame_size=40)
    out: list[bytes] = []
    last = 0
    for cut in sorted({min(c, len(stream)) for c in cuts}) + [len(stream)]:
        out += reader.feed(stream[last:cut])
        last = cut
    assert out == payloads
    assert reader.buffered == 0


def test_every_prefix_waits_for_more() -> None:
    data = frame(b"hello world")
    for n in range(len(data)):
        reader = FrameReader()
        assert reader.feed(data[:n]) == []
        assert reader.feed(data[n:]) == [b"hello world"]


def test_zero_length_frame() -> None:
    assert FrameReader().feed(b"\x00\x00\x00\x00") == [b""]


def test_oversized_frame_rejected_from_its_size_alone() -> None:
    reader = FrameReader(max_frame_size=1024)
    with pytest.raises(FrameTooLarge):
        reader.feed(struct.pack(">i", 2**31 - 1))  # no body sent: nothing was buffered
    assert reader.buffered == 0
    with pytest.raises(FrameTooLarge):  # the reader stays broken: close the connection
        reader.feed(b"\x00\x00\x00\x01x")


def test_maximum_is_inclusive() -> None:
    reader = FrameReader(max_frame_size=3)
    assert reader.feed(frame(b"abc")) == [b"abc"]
    with pytest.raises(FrameTooLarge):
        reader.feed(frame(b"abcd"))


def test_oversized_frame_after_a_good_one_in_the_same_chunk() -> None:
    reader = FrameReader(max_frame_size=8)
    with pytest.raises(FrameTooLarge):
        reader.feed(frame(b"ok") + struct.pack(">i", 9))


def test_negative_size() -> None:
    reader = FrameReader()
    with pytest.raises(FrameError) as info:
        reader.feed(struct.pack(">i", -1))
    assert not isinstance(info.value, FrameTooLarge)
