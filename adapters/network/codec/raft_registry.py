"""The metadata quorum's APIs: their own table, apart from ``registry.APIS``.

A broker's ApiVersions advertises ``registry.SUPPORTED``; the quorum's APIs are served only on a
controller's quorum listener (``adapters.raft_transport``), so they live here and a broker
never claims to serve Vote or Fetch. :data:`SEND_VERSIONS` is the version this node writes of
each request; :data:`RAFT_SUPPORTED` what it accepts (DescribeQuorum v0 from older tools too).
All are flexible (request header v2, response header v1) but BeginQuorumEpoch and
EndQuorumEpoch v0 (flexible from v1, KIP-853's version): request header v1, response header v0.
"""

from __future__ import annotations

import enum

from adapters.network.codec.apis import (
    begin_quorum_epoch,
    describe_quorum,
    end_quorum_epoch,
    fetch,
    fetch_snapshot,
    vote,
)
from adapters.network.codec.raft_tags import TaggedField
from adapters.network.codec.schema import Message, versions


class RaftApiKey(enum.IntEnum):
    FETCH = 1
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    FETCH_SNAPSHOT = 59


RAFT_MESSAGES: dict[int, tuple[Message, Message]] = {
    int(m.API_KEY): (m.REQUEST, m.RESPONSE)
    for m in (fetch, vote, begin_quorum_epoch, end_quorum_epoch, describe_quorum, fetch_snapshot)
}
"""api key -> (request, response) declarations."""

REQUEST_TAGS: dict[int, tuple[TaggedField, ...]] = {
    RaftApiKey.FETCH: fetch.REQUEST_TAGS,
    RaftApiKey.FETCH_SNAPSHOT: fetch_snapshot.REQUEST_TAGS,
}
"""Named tagged fields of a request's top-level struct."""

PARTITION_TAGS: dict[int, tuple[TaggedField, ...]] = {
    RaftApiKey.FETCH: fetch.PARTITION_TAGS,
    RaftApiKey.FETCH_SNAPSHOT: fetch_snapshot.PARTITION_TAGS,
}
"""Named tagged fields of a response's partition struct."""


def _range(message: Message) -> tuple[int, int]:
    declared = versions(message.valid)
    assert declared.high is not None
    return declared.low, declared.high


RAFT_SUPPORTED: dict[int, tuple[int, int]] = {
    key: _range(request) for key, (request, _) in sorted(RAFT_MESSAGES.items())
}
"""api key -> (min, max) version accepted on a quorum listener."""

SEND_VERSIONS: dict[int, int] = {key: hi for key, (_, hi) in RAFT_SUPPORTED.items()}
"""api key -> the version this node sends (the highest it declares)."""


def api_name(api_key: int) -> str:
    try:
        return RaftApiKey(api_key).name
    except ValueError:
        return f"api key {api_key}"
