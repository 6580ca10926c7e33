"""The wire decoder's fuzz target (``adapters.network.wire_fuzz``), run briefly: valid frames of
every API and version, mutated structure-aware (lengths, counts, varints, header, size prefix,
bits, truncation, splices), must decode or fail with one of the codec's own errors, within
bounded memory. The long run is ``benchmarks/bench_fuzz_decoder.py``."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from netcodec_strategies import TEXT, values

from adapters.network import wire_fuzz as F
from adapters.network.codec import registry
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.primitives import int_bounds
from adapters.network.server import CONTROL_PLANE_APIS, DATA_PLANE_APIS

CASES = F.every_version()
IDS = [f"{registry.ApiKey(k).name}-v{v}" for k, v in CASES]
PLANES = {
    "all": dict(registry.SUPPORTED),
    "control": registry.supported_subset(CONTROL_PLANE_APIS),
    "data": registry.supported_subset(DATA_PLANE_APIS),
}
SEEDS = F.corpus(seed=11, per_version=2)
ALLOWED = {*F.OUTCOMES, "DecodeError", "FrameError", "FrameTooLarge"}


def check(data: bytes, supported: dict[int, tuple[int, int]] | None = None) -> str:
    """The contract: a known outcome, never another exception (that fails the test)."""
    label = F.classify(data, registry.SUPPORTED if supported is None else supported)
    assert label in ALLOWED, label
    return label


@st.composite
def seed_frames(draw: st.DrawFn) -> F.Seed:
    """A valid frame of any API and version, with hypothesis-drawn header and body."""
    key, version = draw(st.sampled_from(CASES))
    api = registry.APIS[key]
    body = draw(values(api.request.schema(version)))
    client_id = draw(st.none() | TEXT)
    header = RequestHeader(key, version, draw(st.integers(*int_bounds(4))), client_id)
    frame = F.request_frame(header, body)
    return F.Seed(key, version, frame, F.field_slots(frame))


def test_every_seed_frame_is_a_valid_request() -> None:
    assert {(s.api_key, s.api_version) for s in SEEDS} == set(CASES)
    for s in SEEDS:
        label = check(s.frame)
        # an ApiVersions v3 with a random client software name is answered INVALID_REQUEST
        assert label == F.DECODED or (s.api_key == 18 and label == "answered INVALID_REQUEST")
        assert s.slots[0] == F.Slot(0, 4, F.SIZE_SLOT)
        assert all(slot.offset + slot.width <= len(s.frame) for slot in s.slots)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seed_frames(), other=st.sampled_from(SEEDS), rnd=st.randoms(use_true_random=False),
       plane=st.sampled_from(sorted(PLANES)))
def test_fuzz_structure_aware_mutations_of_every_api_version(
        seed: F.Seed, other: F.Seed, rnd: random.Random, plane: str) -> None:
    check(F.mutate(seed, rnd, other=other), PLANES[plane])


@settings(max_examples=1000, deadline=None)
@given(prefix=st.sampled_from([None, -1, -(2**31), 0, 3, 2**31 - 1, F.FUZZ_MAX_FRAME_SIZE + 1]),
       body=st.binary(max_size=96))
def test_fuzz_random_bytes_through_the_framing(prefix: int | None, body: bytes) -> None:
    size = len(body) if prefix is None else prefix
    label = check(struct.pack(">i", size) + body)
    if size < 0:
        assert label == "FrameError"
    elif size > F.FUZZ_MAX_FRAME_SIZE:
        assert label == "FrameTooLarge"
    elif size > len(body):
        assert label == F.INCOMPLETE


# every length, count and varint of one frame per API/version, set to the extremes
_EXTREMES = {2: (-2, -(2**15), 2**15 - 1), 4: (-2, -(2**31), 2**31 - 1)}
_HUGE_VARINTS = (F.uvarint(2**32 - 1), F.uvarint(2**31), b"\xff\xff\xff\xff\x7f", b"\x80" * 6)


def _extreme_variants(seed: F.Seed) -> list[bytes]:
    out = []
    for slot in seed.slots:
        if slot.kind == F.LENGTH_SLOT:
            # and counts the bytes left could hold as a count, but not as 4-byte elements
            left = len(seed.frame) - slot.offset - slot.width
            lo, hi = int_bounds(slot.width)
            values = {*_EXTREMES[slot.width], min(left, hi), min(left + 1, hi)}
            news = [v.to_bytes(slot.width, "big", signed=True) for v in sorted(values)]
        elif slot.kind == F.VARINT_SLOT:
            news = list(_HUGE_VARINTS)
        else:
            continue
        for new in news:
            data = bytearray(seed.frame)
            data[slot.offset:slot.offset + slot.width] = new
            data[0:4] = struct.pack(">i", len(data) - 4)
            out.append(bytes(data))
    return out


@pytest.mark.parametrize("seed", SEEDS[1::2], ids=IDS)
def test_huge_and_negative_lengths_are_refused_without_allocating(seed: F.Seed) -> None:
    variants = _extreme_variants(seed)
    for data in variants:
        label = check(data)
        assert label != F.INCOMPLETE  # the size prefix agrees: the frame is whole
        peak = F.traced_peak(data)
        assert peak <= F.memory_bound(data), (data.hex(), peak)
        assert peak < 128 * 1024  # a claimed 2**31 elements allocate nothing of the sort
    # every request has a length somewhere (the header's client id) but ControlledShutdown v0
    assert bool(variants) != ((seed.api_key, seed.api_version) == (7, 0))


def test_a_two_gigabyte_array_count_is_a_decode_error_at_once() -> None:
    # Metadata v1: header, then the topics count 2**31-1 followed by three 2-byte names
    payload = struct.pack(">hhih", 3, 1, 1, 1) + b"c" + struct.pack(">i", 2**31 - 1) + b"\0" * 6
    data = struct.pack(">i", len(payload)) + payload
    assert check(data) == "DecodeError"
    assert F.traced_peak(data) < 64 * 1024


def test_seeded_inputs_are_deterministic_and_replayable() -> None:
    first = list(F.inputs(seed=3, count=300))
    assert first == list(F.inputs(seed=3, count=300))
    assert first != list(F.inputs(seed=4, count=300))
    assert F.input_at(3, 123) == first[123][1]
    labels = {check(data) for _, data in first}
    # the mutations reach every stage: framing, header, body, and whole requests
    assert {"FrameTooLarge", "FrameError", "DecodeError", F.DECODED, F.INCOMPLETE} <= labels


def test_field_slots_refuses_what_is_not_one_valid_frame() -> None:
    frame = SEEDS[0].frame
    for bad in (frame[:-1], frame + b"\0", b"\0\0\0\4\0\x63\0\0", b""):
        with pytest.raises(ValueError):
            F.field_slots(bad)
