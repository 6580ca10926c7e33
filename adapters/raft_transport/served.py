"""APIs a quorum listener serves besides the quorum's own: on a controller node, the
controller's (BrokerRegistration, CreateTopics, ...), handed by the transport to a
:class:`ServedApis` (``adapters.kraft_node.controller_apis``) and answered when it says so.

The transport keeps, for each such request, an :class:`Inbound`: which connection, which
correlation id, by when. Answers are keyed by the request's own ``handle`` (unique in the
transport), never by "the oldest request of that API": a controller answers a heartbeat at
once and a CreateTopics only once its records commit, so answers arrive out of order. They
leave each connection in the order its requests came in (Kafka's clients match answers to
requests by position and check the correlation id): an answer ready before the ones ahead of
it waits for them. At most ``max_in_flight`` such requests wait per connection; beyond that
the transport stops reading from it until answers go out (TCP pushes back on the client, as
Kafka's muted channels do). A request unanswered by its deadline is answered with
:meth:`ServedApis.expired` (REQUEST_TIMED_OUT); its late answer is dropped.

The order holds among these requests; the quorum's own answers (Fetch, Vote, ...) are written
as they come, so a client that mixes both kinds on one connection may see a quorum answer
overtake a controller answer (our brokers and Kafka's keep the two on separate connections).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

Reply = Callable[[bytes], None]
"""Hands the whole response frame (size prefix included) back to the transport; callable
from any thread, at most once (a second call is dropped)."""


class Inbound:
    """One request of a served API, waiting for its answer."""

    __slots__ = ("handle", "api_key", "api_version", "correlation_id", "frame", "deadline",
                 "conn", "answer", "context")

    def __init__(self, handle: int, api_key: int, api_version: int, correlation_id: int,
                 frame: bytes, deadline: float, conn: Any) -> None:
        self.handle = handle
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.frame = frame  # the request frame, size prefix removed
        self.deadline = deadline  # monotonic seconds
        self.conn = conn
        self.answer: bytes | None = None  # the response frame, once there is one
        self.context: Any = None  # the ServedApis' own (e.g. the decoded request body)


class ServedApis(Protocol):
    supported: Mapping[int, tuple[int, int]]
    """api key -> (min, max) version: routed to ``handle`` and advertised in ApiVersions."""

    def handle(self, request: Inbound, reply: Reply) -> None:
        """Called on the transport's I/O thread: must not block. A ``CodecError`` it raises
        closes that connection (a frame that does not decode)."""

    def expired(self, request: Inbound) -> bytes:
        """The response frame for a request unanswered by its deadline."""


def peek_correlation(frame: bytes) -> int:
    """The correlation id of a request frame (bytes 4-8 of every request header)."""
    return int.from_bytes(frame[4:8], "big", signed=True)
