"""``CoreRequests``: the broker core's ``SendToController`` on the wire -- BrokerRegistration,
BrokerHeartbeat and AlterPartition values (``fsm.kraft.controller.requests``) encoded with
kwire's codec (``kraft_convert``, ``kraft_frames``) at ``SEND_VERSIONS`` and sent on the
controller channel; the answer decoded back into a value and handed to the core as
``ControllerResponse(request, response)``.

``ControllerUnreachable(request)`` instead when the request was lost (timed out, the
connection lost, no leader known in time), when the answer does not decode (logged), or when
it says NOT_CONTROLLER (the node we reached is not, or no longer, the active controller: the
core retries after its interval, by then towards the leader the observer follows). Each
request's deadline is ``controller.quorum.request.timeout.ms``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from adapters.kraft_broker.controller_channel import ControllerChannel, Lost
from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.errors import CodecError
from adapters.network.codec.kraft_registry import SEND_VERSIONS, api_name
from fsm.errors import ErrorCode
from fsm.kraft.broker.events import ControllerResponse, ControllerUnreachable

log = logging.getLogger("kcontrol.kraft.broker")


def frame_request(api_key: int, version: int, correlation_id: int, client_id: str,
                  body: bytes) -> bytes:
    """The channel's request frames: kwire's framing of an encoded body."""
    return kraft_frames.encode_request(api_key, version, correlation_id, client_id, body)


class CoreRequests:
    def __init__(self, channel: ControllerChannel, submit: Callable[[object], Any],
                 timeout_s: float, broker_id: int) -> None:
        """``submit``: the broker shell's (the core's events)."""
        self.channel = channel
        self.submit = submit
        self.timeout_s = timeout_s
        self.prefix = f"[broker {broker_id}]"

    def send(self, request: Any) -> None:
        """Never blocks; the outcome comes back through ``submit``."""
        api_key, _ = kraft_convert.api_of(request)
        version = SEND_VERSIONS[api_key]
        body = kraft_frames.encode_body(
            api_key, version, kraft_convert.request_to_wire(api_key, version, request),
            response=False)

        def done(frame: bytes | None, lost: Lost | None) -> None:
            self.submit(self._outcome(request, api_key, version, frame, lost))

        self.channel.submit(api_key, version, body, done, self.timeout_s)

    def _outcome(self, request: Any, api_key: int, version: int, frame: bytes | None,
                 lost: Lost | None) -> object:
        name = api_name(api_key)
        if frame is None:
            log.info("%s %s got no answer: %s", self.prefix, name, lost)
            return ControllerUnreachable(request)
        try:
            _, body = kraft_frames.decode_response(api_key, version, frame)
            response = kraft_convert.response_from_wire(api_key, version, body)
        except (CodecError, KeyError, TypeError, ValueError) as exc:
            log.warning("%s %s answer does not decode: %s", self.prefix, name, exc)
            return ControllerUnreachable(request)
        if getattr(response, "error", None) == ErrorCode.NOT_CONTROLLER:
            log.info("%s %s answered NOT_CONTROLLER by node %d", self.prefix, name,
                     self.channel.leader)
            return ControllerUnreachable(request)
        if getattr(response, "error", ErrorCode.NONE) != ErrorCode.NONE:
            log.info("%s %s answered %s", self.prefix, name, response.error.name)
        return ControllerResponse(request, response)
