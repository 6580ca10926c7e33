"""One non-blocking TCP connection of the quorum transport: its frame reader, its bounded
write buffer, and what it waits for.

An *outbound* connection goes to a voter (``peer``): this node's requests go out on it and
their responses come back on it, matched by correlation id (``in_flight``). An *inbound*
connection was accepted from anyone (a voter, an observer, a tool): requests come in on it
and this node's answers go back on it, in the order the shell gives them.
"""

from __future__ import annotations

import socket
from collections import deque
from dataclasses import dataclass

from adapters.network.codec.framing import FrameReader
from adapters.raft_transport.served import Inbound


@dataclass(slots=True)
class InFlight:
    api_key: int
    api_version: int
    deadline: float  # monotonic seconds: past it the connection is given up


class Connection:
    __slots__ = (
        "sock", "reader", "out", "peer", "inbound", "connected", "in_flight", "label",
        "client_key", "closed", "connect_deadline", "last_received", "served", "backlog",
        "muted",
    )

    def __init__(self, sock: socket.socket, max_frame_size: int, *, inbound: bool,
                 peer: int | None, label: str, client_key: int = 0) -> None:
        self.sock = sock
        self.reader = FrameReader(max_frame_size)
        self.out = bytearray()
        self.peer = peer  # outbound: the voter it goes to
        self.inbound = inbound
        self.connected = inbound  # outbound: once the non-blocking connect completes
        self.in_flight: dict[int, InFlight] = {}  # outbound: correlation id -> request
        self.label = label  # for log lines: "to 2 (127.0.0.1:9093)", "from 127.0.0.1:51234"
        self.client_key = client_key  # inbound: the id given to a client that names none
        self.closed = False
        self.connect_deadline = 0.0
        self.last_received = 0.0  # monotonic seconds of the last bytes read
        self.served: deque[Inbound] = deque()  # inbound: served-API requests, in arrival order
        self.backlog: deque[bytes] = deque()  # inbound: frames read while muted
        self.muted = False  # inbound: not read until answers go out (``served.py``)

    def fileno(self) -> int:
        return self.sock.fileno()

    def oldest_deadline(self) -> float | None:
        if not self.in_flight:
            return None
        return min(f.deadline for f in self.in_flight.values())
