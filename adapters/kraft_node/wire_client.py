"""``WireClient``: one synchronous connection to a KRaft node's listener, for the tools
(``kcontrol quorum describe``, ``cluster-id``, ``unregister``), the tests and anyone who
needs to ask a controller or a broker something over Kafka's protocol without a thread.

One TCP connection, correlation ids counted from 1, every wait bounded by ``timeout``.
``send`` writes a request and returns its correlation id without waiting (requests may be
pipelined); ``receive`` reads answers until the one to that correlation id (answers to
other requests read on the way are kept for their own ``receive``); ``call`` is both.
Bodies are the codec's wire dicts; the frames are built by the module that knows the API:
``raft_frames`` for the quorum's APIs, kwire's ``kraft_frames`` for the controller's, the
broker codec's ``dispatch`` for ApiVersions. ``call_value`` does the same with the plain
values of ``fsm.raft.messages`` / ``fsm.kraft.controller.requests``.

Every failure is a :class:`WireError` whose message says where and what (``cannot connect
to 127.0.0.1:9093: Connection refused``, ``no answer from 127.0.0.1:9093 within 5 s``):
the tools print it as it is.
"""

from __future__ import annotations

import socket
import struct
import time
from types import ModuleType
from typing import Any

from adapters.network.codec import dispatch, raft_frames
from adapters.network.codec.errors import CodecError
from adapters.network.codec.headers import API_VERSIONS_KEY, RequestHeader
from adapters.network.codec.raft_registry import RAFT_SUPPORTED

DEFAULT_TIMEOUT_S = 5.0
MAX_RESPONSE = 64 * 1024 * 1024
MAX_KEPT = 1024
"""Bound on answers read ahead of their ``receive``."""
CLIENT_ID = "kcontrol-tool"
_SIZE = struct.Struct(">i")


class WireError(Exception):
    """The node could not be reached, did not answer in time, closed the connection, or
    answered something that does not decode. The message says which."""


def parse_address(text: str, option: str = "--bootstrap-server") -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9093`` for IPv6) -> (host, port); ``ValueError`` naming
    ``option`` otherwise. The first of a comma-separated list is taken."""
    first = text.split(",")[0].strip()
    host, colon, port = first.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{option} {text!r}: want HOST:PORT")
    return host, int(port)


def frames_for(api_key: int) -> ModuleType:
    """The module that frames ``api_key``'s requests and responses (``encode_request``,
    ``decode_response``, ``parse_request``, ``encode_response``)."""
    if api_key in RAFT_SUPPORTED:
        return raft_frames
    from adapters.network.codec import kraft_frames  # kwire's; imported when first needed

    return kraft_frames


class WireClient:
    def __init__(self, host: str, port: int, *, timeout: float = DEFAULT_TIMEOUT_S,
                 client_id: str = CLIENT_ID) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout {timeout}: must be positive")
        self.host, self.port = host, port
        self.timeout = timeout
        self.client_id = client_id
        self._sock: socket.socket | None = None
        self._next = 1
        self._pending: dict[int, tuple[int, int]] = {}  # correlation id -> (key, version)
        self._kept: dict[int, bytes] = {}  # answers read before their receive
        self._buffer = bytearray()

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    def __enter__(self) -> WireClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        if self._sock is not None:
            return
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except TimeoutError:
            raise WireError(f"cannot connect to {self.where}: no answer within "
                            f"{self.timeout:g} s") from None
        except OSError as e:
            raise WireError(f"cannot connect to {self.where}: {e.strerror or e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._pending.clear()
        self._kept.clear()
        self._buffer.clear()

    # ------------------------------------------------------------------ frames
    def send(self, api_key: int, version: int, body: dict[str, Any] | bytes) -> int:
        """Writes one request; returns its correlation id (answered by ``receive``)."""
        self.connect()
        assert self._sock is not None
        correlation_id = self._next
        self._next = (self._next + 1) & 0x7FFFFFFF or 1
        try:
            if api_key == API_VERSIONS_KEY:
                assert isinstance(body, dict)
                data = dispatch.encode_request(
                    RequestHeader(api_key, version, correlation_id, self.client_id), body)
            else:
                data = frames_for(api_key).encode_request(api_key, version, correlation_id,
                                                          self.client_id, body)
        except CodecError as e:
            raise WireError(f"cannot encode the request (api key {api_key} v{version}): "
                            f"{e}") from None
        try:
            self._sock.sendall(data)
        except OSError as e:
            self.close()
            raise WireError(f"cannot write to {self.where}: {e.strerror or e}") from None
        self._pending[correlation_id] = (api_key, version)
        return correlation_id

    def receive(self, correlation_id: int) -> dict[str, Any]:
        """The body answering ``correlation_id`` (answers read on the way are kept)."""
        if correlation_id not in self._pending:
            raise ValueError(f"no request with correlation id {correlation_id} waits")
        deadline = time.monotonic() + self.timeout
        while correlation_id not in self._kept:
            data = self._read_frame(deadline)
            got = int.from_bytes(data[:4], "big", signed=True) if len(data) >= 4 else -1
            if got not in self._pending:
                self.close()
                raise WireError(f"{self.where} answered correlation id {got}, which no "
                                "request of this connection has")
            if len(self._kept) >= MAX_KEPT:
                self.close()
                raise WireError(f"{self.where}: over {MAX_KEPT} answers read ahead")
            self._kept[got] = data
        api_key, version = self._pending.pop(correlation_id)
        data = self._kept.pop(correlation_id)
        try:
            if api_key == API_VERSIONS_KEY:
                _, body = dispatch.decode_response(api_key, version, data)
            else:
                _, body = frames_for(api_key).decode_response(api_key, version, data)
        except CodecError as e:
            raise WireError(f"{self.where}: the answer (api key {api_key} v{version}) does "
                            f"not decode: {e}") from None
        return body

    def call(self, api_key: int, version: int, body: dict[str, Any] | bytes) -> dict[str, Any]:
        return self.receive(self.send(api_key, version, body))

    def api_versions(self, version: int = 3) -> dict[int, tuple[int, int]]:
        """What the node advertises: api key -> (min, max)."""
        body = self.call(API_VERSIONS_KEY, version, {"client_software_name": "kcontrol",
                                                      "client_software_version": "1"})
        return {e["api_key"]: (e["min_version"], e["max_version"])
                for e in body.get("api_keys", [])}

    # ------------------------------------------------------------------ values
    def call_value(self, request: Any, version: int | None = None) -> Any:
        """Sends a value of ``fsm.raft.messages`` (DescribeQuorum) or of
        ``fsm.kraft.controller.requests``; returns the answer as a value."""
        api_key, version, body = to_wire(request, version)
        answer = self.call(api_key, version, body)
        return from_wire(api_key, version, answer)

    def _read_frame(self, deadline: float) -> bytes:
        while True:
            if len(self._buffer) >= 4:
                (size,) = _SIZE.unpack_from(self._buffer, 0)
                if not 0 <= size <= MAX_RESPONSE:
                    self.close()
                    raise WireError(f"{self.where} sent a frame of {size} bytes")
                if len(self._buffer) >= 4 + size:
                    data = bytes(self._buffer[4:4 + size])
                    del self._buffer[:4 + size]
                    return data
            left = deadline - time.monotonic()
            if left <= 0 or self._sock is None:
                where = self.where
                self.close()
                raise WireError(f"no answer from {where} within {self.timeout:g} s")
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(256 * 1024)
            except TimeoutError:
                continue
            except OSError as e:
                where = self.where
                self.close()
                raise WireError(f"cannot read from {where}: {e.strerror or e}") from None
            if not chunk:
                where = self.where
                self.close()
                raise WireError(f"{where} closed the connection (it may not serve this "
                                "request)")
            self._buffer += chunk


def to_wire(request: Any, version: int | None = None) -> tuple[int, int, dict[str, Any]]:
    """(api key, version, wire body) of a request value; ``version`` defaults to the one
    this node sends."""
    from adapters.network.codec.raft_convert import REQUEST_TYPES

    raft_key = REQUEST_TYPES.get(type(request))
    if raft_key is not None:
        from adapters.network.codec.raft_registry import SEND_VERSIONS

        key, _, body = _raft_converter().to_wire(request)
        return int(key), SEND_VERSIONS[key] if version is None else version, body
    from adapters.network.codec import kraft_convert, kraft_registry

    key = controller_api_key(request)
    v = kraft_registry.SEND_VERSIONS[key] if version is None else version
    return key, v, kraft_convert.request_to_wire(key, v, request)


def controller_api_key(request: Any) -> int:
    """The API key of a request value of ``fsm.kraft.controller.requests``."""
    from fsm.kraft.controller import requests as rq

    keys = {rq.BrokerRegistrationRequest: 62, rq.BrokerHeartbeatRequest: 63,
            rq.UnregisterBrokerRequest: 64, rq.AlterPartitionRequest: 56,
            rq.CreateTopicsRequest: 19, rq.DeleteTopicsRequest: 20,
            rq.CreatePartitionsRequest: 37, rq.ElectLeadersRequest: 43,
            rq.AlterPartitionReassignmentsRequest: 45, rq.ListPartitionReassignmentsRequest: 46}
    describe = getattr(rq, "DescribeClusterRequest", None)
    if describe is not None:
        keys[describe] = 60
    try:
        return keys[type(request)]
    except KeyError:
        raise TypeError(f"not a request a KRaft node serves: {request!r}") from None


def from_wire(api_key: int, version: int, body: dict[str, Any]) -> Any:
    """The response value of a decoded wire body."""
    if api_key in RAFT_SUPPORTED:
        return _raft_converter().from_wire(api_key, False, body)
    from adapters.network.codec import kraft_convert

    return kraft_convert.response_from_wire(api_key, version, body)


def _raft_converter() -> Any:
    from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec

    def no_records(_: object) -> bytes:
        raise TypeError("a tool sends and reads no record batches")

    return RaftConverter(RecordsCodec(no_records, lambda _: ()))  # type: ignore[arg-type]
