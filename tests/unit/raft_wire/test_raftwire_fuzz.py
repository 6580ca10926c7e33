"""The quorum codec fuzzed (``adapters.raft_transport.fuzz``): valid request and response
frames of every quorum API and version, mutated structure-aware, and random bytes, must
decode or fail with one of the codec's own errors -- never another exception; and a live
transport fed such frames keeps serving its peers."""

from __future__ import annotations

import random
import socket
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raftwire_stub_records import converter

from adapters.network.codec.errors import CodecError, DecodeError, FrameTooLarge
from adapters.raft_transport import RaftTransport
from adapters.raft_transport import fuzz as F
from fsm.raft.messages import BeginQuorumEpochRequest

REQUESTS = F.corpus(seed=5, per_version=4)
RESPONSES = F.corpus(seed=6, per_version=4, response=True)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(run: object, *args: object) -> str:
    try:
        return run(*args)  # type: ignore[operator, no-any-return]
    except CodecError as e:  # the transport closes the connection: allowed
        return type(e).__name__


def test_the_corpus_is_valid_and_covers_every_version() -> None:
    assert {(s.api_key, s.api_version) for s in REQUESTS} == set(F.every_version())
    labels = [outcome(F.fuzz_request, s.frame) for s in REQUESTS]
    assert labels.count(F.DECODED) >= len(REQUESTS) // 2  # most are about the one partition
    assert set(labels) <= {F.DECODED, "DecodeError"}
    for s in RESPONSES:
        assert outcome(F.fuzz_response, s.frame, s.api_key, s.api_version) in (F.DECODED, "DecodeError")


@FUZZ
@given(rng=st.randoms(use_true_random=False), data=st.data())
def test_mutated_requests_decode_or_fail_cleanly(rng: random.Random, data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(REQUESTS))
    other = data.draw(st.sampled_from(REQUESTS))
    label = outcome(F.fuzz_request, F.mutate(seed, rng, other))
    assert label in {*F.OUTCOMES, "DecodeError", "FrameError", "FrameTooLarge"}


@FUZZ
@given(rng=st.randoms(use_true_random=False), data=st.data())
def test_mutated_responses_decode_or_fail_cleanly(rng: random.Random,
                                                  data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(RESPONSES))
    label = outcome(F.fuzz_response, F.mutate(seed, rng), seed.api_key, seed.api_version)
    assert label in {*F.OUTCOMES, "DecodeError", "FrameError", "FrameTooLarge"}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_decode_or_fail_cleanly(data: bytes) -> None:
    assert outcome(F.fuzz_request, data) in {*F.OUTCOMES, "DecodeError", "FrameError",
                                             "FrameTooLarge"}
    assert outcome(F.fuzz_response, data, 1, 12) in {*F.OUTCOMES, "DecodeError", "FrameError",
                                                     "FrameTooLarge"}


def test_a_frame_over_the_limit_is_refused_before_its_body() -> None:
    with pytest.raises(FrameTooLarge):
        F.fuzz_request((F.FUZZ_MAX_FRAME_SIZE + 1).to_bytes(4, "big"))
    with pytest.raises(DecodeError):  # a length inside the frame beyond it
        F.fuzz_request(b"\x00\x00\x00\x0e\x00\x34\x00\x00\x00\x00\x00\x01\x00\x00\x00\x7f\xff\xff")


def test_a_transport_fed_mutated_frames_keeps_serving() -> None:
    got: list[object] = []
    socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    voters = {i + 1: s.getsockname()[:2] for i, s in enumerate(socks)}
    arrived = threading.Event()

    def on_message(source: int, message: object) -> None:
        got.append((source, message))
        if message == BeginQuorumEpochRequest(9, 1):
            arrived.set()

    rng = random.Random(3)
    with RaftTransport(2, voters, socks[1], on_message, converter=converter()) as target, \
            RaftTransport(1, voters, socks[0], lambda s, m: None, converter=converter()) as peer:
        for i in range(60):
            seed = REQUESTS[i % len(REQUESTS)]
            with socket.create_connection(target.address, timeout=10) as bad:
                bad.sendall(F.mutate(seed, rng))
                bad.shutdown(socket.SHUT_WR)
                while bad.recv(65536):  # answered or not, the transport ends it
                    pass
        peer.send(2, BeginQuorumEpochRequest(9, 1))
        assert arrived.wait(10), got
        assert target._thread.is_alive()
