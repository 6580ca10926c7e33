"""The KRaft APIs fuzzed (``adapters.network.kraft_fuzz``): valid request and response frames
of every KRaft API and version, mutated structure-aware, and random bytes, must decode,
convert and be answered -- or fail with one of the codec's own errors, never another
exception."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.network import kraft_fuzz as F
from adapters.network.codec.errors import CodecError

REQUESTS = F.corpus(seed=5, per_version=3)
RESPONSES = F.corpus(seed=6, per_version=3, response=True)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALLOWED = {*F.OUTCOMES, "DecodeError", "FrameError", "FrameTooLarge"}


def outcome(run: object, *args: object) -> str:
    try:
        return run(*args)  # type: ignore[operator, no-any-return]
    except CodecError as e:  # the listener closes the connection: allowed
        return type(e).__name__


def test_the_corpus_is_valid_and_covers_every_version() -> None:
    assert {(s.api_key, s.api_version) for s in REQUESTS} == set(F.every_version())
    for s in REQUESTS:
        label = outcome(F.fuzz_request, s.frame)
        # AlterPartition v0-v1 name topics: the controller refuses them (a DecodeError)
        assert label == (F.DECODED if (s.api_key, s.api_version) not in {(56, 0), (56, 1)}
                         else "DecodeError"), (s.api_key, s.api_version)
    for s in RESPONSES:
        label = outcome(F.fuzz_response, s.frame, s.api_key, s.api_version)
        assert label == (F.DECODED if (s.api_key, s.api_version) not in {(56, 0), (56, 1)}
                         else "DecodeError"), (s.api_key, s.api_version)


@FUZZ
@given(rng=st.randoms(use_true_random=False), data=st.data())
def test_mutated_requests_decode_or_fail_cleanly(rng: random.Random, data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(REQUESTS))
    other = data.draw(st.sampled_from(REQUESTS))
    assert outcome(F.fuzz_request, F.mutate(seed, rng, other)) in ALLOWED


@FUZZ
@given(rng=st.randoms(use_true_random=False), data=st.data())
def test_mutated_responses_decode_or_fail_cleanly(rng: random.Random,
                                                  data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(RESPONSES))
    label = outcome(F.fuzz_response, F.mutate(seed, rng), seed.api_key, seed.api_version)
    assert label in ALLOWED


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(F.every_version()))
def test_random_bytes_decode_or_fail_cleanly(data: bytes, api: tuple[int, int]) -> None:
    assert outcome(F.fuzz_request, data) in ALLOWED
    assert outcome(F.fuzz_response, data, *api) in ALLOWED
