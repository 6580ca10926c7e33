"""A small blocking Kafka-protocol client: connect, send requests, read their answers.

Used by the controller's channel manager, the tests and ``describe`` over the wire::

    with WireClient("127.0.0.1", port) as c:
        versions = c.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "kcontrol",
                                                      "client_software_version": "0.1"})
        meta = c.metadata(version=8)

Requests may be pipelined (``send`` several, then ``receive`` each, in order). Every
failure is an ``OSError`` (``ConnectionError`` for a closed peer, ``TimeoutError``) or a
codec error for an answer that does not decode; after one, ``close`` and reconnect.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from typing import Any

from adapters.network.codec import (
    DEFAULT_MAX_FRAME_SIZE,
    ApiKey,
    FrameReader,
    RequestHeader,
    decode_response,
    encode_request,
)
from adapters.network.codec.apis.metadata import all_topics_request


class WireClient:
    def __init__(self, host: str, port: int, *, client_id: str | None = "kcontrol",
                 timeout: float = 10.0, connect_timeout: float | None = None,
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout = timeout
        self.connect_timeout = timeout if connect_timeout is None else connect_timeout
        self.max_frame_size = max_frame_size
        self._sock: socket.socket | None = None
        self._reader = FrameReader(max_frame_size)
        self._frames: deque[bytes] = deque()
        self._pending: deque[tuple[int, int, int]] = deque()  # (correlation, key, version)
        self._next_correlation = 0
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connection

    def connect(self) -> WireClient:
        if self._sock is None:
            sock = socket.create_connection((self.host, self.port),
                                            timeout=self.connect_timeout)
            sock.settimeout(self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = sock
            self._reader = FrameReader(self.max_frame_size)
            self._frames.clear()
            self._pending.clear()
        return self

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def close(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def abort(self) -> None:
        """From another thread: wake a blocked send/receive (it raises), then close."""
        sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.close()

    def __enter__(self) -> WireClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ requests

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> int:
        """Writes one request; returns its correlation id."""
        self._next_correlation = (self._next_correlation + 1) & 0x7FFFFFFF
        corr = self._next_correlation
        header = RequestHeader(int(api_key), version, corr, self.client_id)
        self.send_raw(encode_request(header, body))
        self._pending.append((corr, int(api_key), version))
        return corr

    def receive(self) -> dict[str, Any]:
        """The answer to the oldest request sent and not yet answered."""
        if not self._pending:
            raise RuntimeError("no request awaiting an answer")
        corr, key, version = self._pending.popleft()
        got, body = decode_response(key, version, self.recv_frame())
        if got != corr:
            raise ConnectionError(f"answer for correlation {got}, expected {corr}")
        return body

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.send(api_key, version, body)
        return self.receive()

    def metadata(self, topics: list[str] | None = None, version: int = 8) -> dict[str, Any]:
        body = all_topics_request(version)
        if topics is not None:
            body["topics"] = [{"name": t} for t in topics]
        return self.request(ApiKey.METADATA, version, body)

    # ------------------------------------------------------------------ raw bytes

    def send_raw(self, data: bytes) -> None:
        sock = self._require()
        sock.sendall(data)

    def recv_frame(self) -> bytes:
        """The next whole frame (size prefix removed); ConnectionError on EOF."""
        sock = self._require()
        while not self._frames:
            data = sock.recv(256 * 1024)
            if not data:
                raise ConnectionError(f"{self.host}:{self.port} closed the connection")
            self._frames.extend(self._reader.feed(data))
        return self._frames.popleft()

    def _require(self) -> socket.socket:
        if self._sock is None:
            raise ConnectionError("not connected")
        return self._sock
