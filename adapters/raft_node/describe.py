"""DescribeQuorum (API 55) from a tool: one request over a fresh TCP connection to a voter's
quorum listener (the transport answers a connection that names no node id like any other),
the answer decoded to ``fsm.raft.messages.DescribeQuorumResponse``. The leader answers with
the high watermark and every voter's log end offset; another node answers with an error
(Kafka's NOT_LEADER_OR_FOLLOWER)."""

from __future__ import annotations

import socket
import struct

from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.network.codec.raft_frames import decode_response, encode_request
from adapters.network.codec.raft_registry import SEND_VERSIONS
from fsm.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse

CLIENT_ID = "kcontrol-describe-quorum"
MAX_RESPONSE = 16 * 1024 * 1024


def _no_records(_: object) -> bytes:
    raise TypeError("DescribeQuorum carries no records")


_CONVERTER = RaftConverter(RecordsCodec(_no_records, lambda _: ()))  # type: ignore[arg-type]


def describe_quorum(host: str, port: int, timeout: float = 5.0) -> DescribeQuorumResponse:
    """The answer of the voter at ``host:port``; ``OSError``/``TimeoutError`` if it does
    not answer, ``ConnectionError`` if it closes the connection first."""
    key, _, body = _CONVERTER.to_wire(DescribeQuorumRequest())
    version = SEND_VERSIONS[key]
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(encode_request(key, version, 1, CLIENT_ID, body))
        (size,) = struct.unpack(">i", _read(sock, 4))
        if not 0 < size <= MAX_RESPONSE:
            raise ConnectionError(f"DescribeQuorum answer of {size} bytes from {host}:{port}")
        correlation, answer = decode_response(key, version, _read(sock, size))
    if correlation != 1:
        raise ConnectionError(f"answer to correlation id {correlation}, not 1")
    message = _CONVERTER.from_wire(key, False, answer)
    assert isinstance(message, DescribeQuorumResponse)
    return message


def _read(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the voter closed the connection")
        out += chunk
    return bytes(out)
