"""The listener's scatter-gather output buffer and the response pieces it sends.

A cached Metadata answer (hundreds of KB) is queued as the cache's own bytes object and
written with ``sendmsg``; partial writes must resume exactly where the kernel stopped, across
chunk boundaries, and the bytes that arrive must be the frames in order.
"""

from __future__ import annotations

import contextlib
import socket

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.network.codec import encode_response, encode_response_pieces
from adapters.network.codec.registry import ApiKey
from adapters.network.listeners import OutBuffer

# large pieces cheaply: a length and a fill byte (distinct fills show a reordering)
LARGE = st.builds(lambda n, fill: bytes([fill]) * n, st.integers(8_000, 70_000),
                  st.integers(0, 255))


def drain(buf: OutBuffer, chunk_limit: int | None = None) -> bytes:
    """Send everything through a socketpair with a small buffer (forcing partial sends),
    reading the other end as it goes; returns what arrived."""
    a, b = socket.socketpair()
    try:
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        a.setblocking(False)
        got = bytearray()
        while buf:
            if chunk_limit is not None:
                OutBuffer.MAX_IOV = chunk_limit
            with contextlib.suppress(BlockingIOError):
                buf.send(a)
            b.settimeout(1.0)
            got += b.recv(1 << 16)
        b.setblocking(False)
        try:
            while True:
                data = b.recv(1 << 16)
                if not data:
                    break
                got += data
        except BlockingIOError:
            pass
        return bytes(got)
    finally:
        OutBuffer.MAX_IOV = 64
        a.close()
        b.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=300), LARGE), max_size=12),
       st.sampled_from([None, 1, 3]))
def test_everything_queued_arrives_in_order(pieces: list[bytes], limit: int | None) -> None:
    buf = OutBuffer()
    for i, p in enumerate(pieces):
        buf += (p, b"") if i % 2 else p  # single pieces and tuples of pieces
    assert len(buf) == sum(map(len, pieces))
    assert drain(buf, limit) == b"".join(pieces)
    assert not buf and len(buf) == 0


def test_a_cached_body_is_sent_without_a_copy() -> None:
    body = bytes(500_000)
    head, sent = encode_response_pieces(ApiKey.METADATA, 8, 42, body)
    assert sent is body
    assert head + sent == encode_response(ApiKey.METADATA, 8, 42, body)
    assert int.from_bytes(head[:4], "big") == len(head) - 4 + len(body)
