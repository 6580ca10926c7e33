"""``Forwarder``: a client's admin request (CreateTopics, DeleteTopics, CreatePartitions,
ElectLeaders, Alter/ListPartitionReassignments, UnregisterBroker) sent on to the active
controller, as a KIP-590 broker does (without the Envelope: the request goes as it came).

The request body is sent as the client wrote it (the same bytes, the same version) under a
correlation id of the controller channel's; the controller's answer is relayed with the
client's correlation id (its response header and body untouched). An answer carrying
NOT_CONTROLLER anywhere (the node reached is not, or no longer, the active controller) and a
request that never left the channel (no leader known yet) are tried again once the observer
follows a leader -- a new one after NOT_CONTROLLER -- at most ``MAX_TRIES`` times within the
budget (``budget_factor`` request timeouts). Past the budget, or once the request was lost
after it was sent (it may have been carried out: sending it again could do it twice), the
client hears REQUEST_TIMED_OUT, every item of its request (kwire's ``error_response``).
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from typing import Any

from adapters.kraft_broker.controller_channel import ControllerChannel, Lost
from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.errors import CodecError
from adapters.network.codec.framing import frame as size_prefixed
from adapters.network.codec.kraft_registry import api_name
from fsm.errors import ErrorCode

log = logging.getLogger("kcontrol.kraft.broker")

MAX_TRIES = 4
_CORRELATION = struct.Struct(">i")
NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)


class _Wait:
    __slots__ = ("event", "frame", "lost")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.frame: bytes | None = None
        self.lost: Lost | None = None

    def __call__(self, frame: bytes | None, lost: Lost | None) -> None:
        self.frame, self.lost = frame, lost
        self.event.set()


class Forwarder:
    def __init__(self, channel: ControllerChannel, request_timeout_s: float,
                 budget_factor: float = 3.0) -> None:
        self.channel = channel
        self.request_timeout_s = request_timeout_s
        self.budget_s = budget_factor * request_timeout_s
        self.forwarded = 0
        self.retried = 0
        self.timed_out = 0

    def forward(self, api_key: int, version: int, correlation_id: int, body: bytes,
                decoded_body: dict[str, Any]) -> bytes:
        """The whole response frame for the client (blocks its connection's thread)."""
        name = api_name(api_key)
        deadline = time.monotonic() + self.budget_s
        leader = self.channel.leader
        for attempt in range(1, MAX_TRIES + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            wait = _Wait()
            self.channel.submit(api_key, version, body, wait, min(left, self.request_timeout_s))
            wait.event.wait(left + 1.0)
            if wait.frame is not None:
                if not _says_not_controller(api_key, version, wait.frame):
                    self.forwarded += 1
                    return size_prefixed(_CORRELATION.pack(correlation_id) + wait.frame[4:])
                log.info("%s forwarded to node %d: NOT_CONTROLLER (try %d)", name, leader,
                         attempt)
                self.retried += 1
                self.channel.wait_leader(max(deadline - time.monotonic(), 0.0),
                                         other_than=leader)
            elif wait.lost is not None and not wait.lost.sent:
                log.info("%s not forwarded: %s (try %d)", name, wait.lost, attempt)
                self.retried += 1
                self.channel.wait_leader(max(deadline - time.monotonic(), 0.0))
            else:
                log.warning("%s forwarded, no answer: %s", name, wait.lost)
                break
            leader = self.channel.leader
        self.timed_out += 1
        log.warning("%s: no answer from an active controller: REQUEST_TIMED_OUT", name)
        error = kraft_convert.error_response(api_key, version, decoded_body,
                                             ErrorCode.REQUEST_TIMED_OUT)
        return kraft_frames.encode_response(api_key, version, correlation_id, error)


def _says_not_controller(api_key: int, version: int, frame: bytes) -> bool:
    try:
        _, body = kraft_frames.decode_response(api_key, version, frame)
    except CodecError:
        return False  # relayed as it came: the client judges it
    return _has_code(body, NOT_CONTROLLER)


def _has_code(value: Any, code: int, depth: int = 0) -> bool:
    """Whether an ``error_code`` field anywhere in a decoded body is ``code``."""
    if depth > 8:
        return False
    if isinstance(value, dict):
        if value.get("error_code") == code:
            return True
        return any(_has_code(v, code, depth + 1) for v in value.values()
                   if isinstance(v, (dict, list)))
    if isinstance(value, list):
        return any(_has_code(v, code, depth + 1) for v in value)
    return False
