"""Partition states encoded once for every broker (``adapters.network.shared_encoding``).

The controller sends the same LeaderAndIsr and UpdateMetadata partition states to every
broker, each stamped with its own broker epoch; the sender threads share one encoding of the
``topic_states`` array. A request encoded with the shared array must be byte for byte the
request encoded on its own.
"""

from __future__ import annotations

import pytest

from adapters.network.channel_manager import encode
from adapters.network.codec import convert
from adapters.network.codec.dispatch import encode_request
from adapters.network.codec.errors import EncodeError
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.registry import ApiKey
from adapters.network.codec.wire import Encoded
from adapters.network.shared_encoding import SharedEncodings, array_type
from fsm.errors import ErrorCode
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint

BROKERS = tuple(BrokerInfo(b, 100 + b, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + b),))
                for b in (1, 2, 3))


def lai_parts(n: int) -> tuple[LeaderAndIsrPartition, ...]:
    return tuple(LeaderAndIsrPartition(f"t{i % 7}", i, 3, 1 + i % 3, 5, (1, 2, 3), 9, (1, 2, 3))
                 for i in range(n))


def um_parts(n: int) -> tuple[UpdateMetadataPartition, ...]:
    return tuple(UpdateMetadataPartition(f"t{i % 7}", i, 3, 1 + i % 3, 5, (1, 2, 3), 9,
                                         (1, 2, 3), (3,) if i % 2 else ())
                 for i in range(n))


def frame(request: object, shared: SharedEncodings | None) -> bytes:
    key, version, body = encode(request, "PLAINTEXT", shared)  # type: ignore[arg-type]
    return encode_request(RequestHeader(key, version, 7, "kcontrol"), body)


@pytest.mark.parametrize("n", [3, 200])
def test_shared_frames_are_the_frames_encoded_alone(n: int) -> None:
    shared = SharedEncodings(min_partitions=64)
    lai, um = lai_parts(n), um_parts(n)
    for b in BROKERS:
        # each broker gets its own tuple of the same partition objects, as RequestBatch does
        for req in (LeaderAndIsrRequest(1, 3, b.epoch, tuple(lai), BROKERS),
                    UpdateMetadataRequest(1, 3, b.epoch, um, BROKERS)):
            assert frame(req, shared) == frame(req, None)
    if n >= 64:
        assert (shared.misses, shared.hits) == (2, 4)  # encoded once per API, then shared
    else:
        assert (shared.misses, shared.hits) == (0, 0)  # small requests are not memoised


def test_equal_but_distinct_partitions_are_encoded_afresh() -> None:
    """The key is identity: a new, equal partition value is another entry (never a stale hit)."""
    shared = SharedEncodings(min_partitions=1)
    first = lai_parts(100)
    encode(LeaderAndIsrRequest(1, 3, 101, first, BROKERS), "PLAINTEXT", shared)
    changed = first[:-1] + (LeaderAndIsrPartition("t1", 99, 3, 2, 6, (2, 3), 10, (1, 2, 3)),)
    req = LeaderAndIsrRequest(1, 3, 102, changed, BROKERS)
    assert frame(req, shared) == frame(req, None)
    assert shared.hits == 0


def test_memo_is_bounded() -> None:
    shared = SharedEncodings(capacity=2, min_partitions=1)
    kept = [lai_parts(5) for _ in range(5)]
    for parts in kept:
        encode(LeaderAndIsrRequest(1, 3, 101, parts, BROKERS), "PLAINTEXT", shared)
    assert len(shared._memo) == 2


def test_an_array_encoded_for_another_type_is_refused() -> None:
    wrong = Encoded(array_type(ApiKey.UPDATE_METADATA, 5, "topic_states"),
                    convert.update_metadata_topic_states(um_parts(2)))
    body = convert.leader_and_isr_request_to_wire(
        LeaderAndIsrRequest(1, 3, 101, lai_parts(2), BROKERS), "PLAINTEXT", wrong)
    with pytest.raises(EncodeError, match="encoded as"):
        encode_request(RequestHeader(ApiKey.LEADER_AND_ISR, 2, 1, "c"), body)


def test_error_codes_map_like_the_enum() -> None:
    for code in ErrorCode:
        assert convert.error_code(int(code)) is code
    assert convert.error_code(9999) is ErrorCode.UNKNOWN_SERVER_ERROR
    assert convert.error_code(-12345) is ErrorCode.UNKNOWN_SERVER_ERROR
