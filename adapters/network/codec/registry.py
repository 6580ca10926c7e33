"""API key -> request/response messages, and the version ranges a broker supports.

What a broker advertises in ApiVersions (reference section 9, "Minimum a broker must
advertise"): ApiVersions 0-3 and Metadata 0-8 for clients; the controller APIs only at the
versions that carry the broker epoch (ControlledShutdown also 0-1, decoded without one).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from adapters.network.codec.apis import (
    api_versions,
    controlled_shutdown,
    leader_and_isr,
    metadata,
    stop_replica,
    update_metadata,
)
from adapters.network.codec.schema import Message, Struct, versions
from fsm.errors import ErrorCode


class ApiKey(enum.IntEnum):
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    API_VERSIONS = 18


@dataclass(frozen=True, slots=True)
class Api:
    key: ApiKey
    request: Message
    response: Message

    @property
    def versions(self) -> tuple[int, int]:
        declared = versions(self.request.valid)
        assert declared.high is not None
        return declared.low, declared.high

    def supports(self, version: int) -> bool:
        return version in versions(self.request.valid)


APIS: dict[int, Api] = {
    int(m.API_KEY): Api(ApiKey(m.API_KEY), m.REQUEST, m.RESPONSE)
    for m in (
        metadata,
        leader_and_isr,
        stop_replica,
        update_metadata,
        controlled_shutdown,
        api_versions,
    )
}

SUPPORTED: dict[int, tuple[int, int]] = {key: api.versions for key, api in sorted(APIS.items())}
"""api key -> (min, max) version: the ranges a broker advertises in ApiVersions."""

CLIENT_APIS = frozenset({ApiKey.API_VERSIONS, ApiKey.METADATA})
CONTROLLER_APIS = frozenset(
    {ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN}
)

ERROR_CODES = ErrorCode  # Kafka's numbers, from the core


def supported_subset(keys: frozenset[ApiKey] | set[int]) -> dict[int, tuple[int, int]]:
    """The supported ranges restricted to ``keys`` (e.g. what one listener accepts)."""
    return {k: r for k, r in SUPPORTED.items() if k in keys}


def is_flexible(api_key: int, version: int) -> bool:
    return APIS[api_key].request.is_flexible(version)


def request_schema(api_key: int, version: int) -> Struct:
    return APIS[api_key].request.schema(version)


def response_schema(api_key: int, version: int) -> Struct:
    return APIS[api_key].response.schema(version)
