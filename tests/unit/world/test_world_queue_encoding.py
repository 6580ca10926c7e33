"""A controller queue's encoding in the ``rest`` snapshot is built from the restored one
when a step takes the head off or puts one event at either end (``world._encode_queue``):
it must always equal encoding the queue afresh."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fsm.events import Startup, TimerFired, TimerKind
from model_check.world import state as S
from model_check.world.codec import decode, encode
from model_check.world.world import _encode_queue

EVENTS = st.one_of(
    st.sampled_from([S.LOAD_MARKER, S.CONTROLLER_MARKER]),
    st.builds(Startup),
    st.builds(TimerFired, st.sampled_from(list(TimerKind))),
)
QUEUES = st.lists(EVENTS, max_size=6).map(tuple)


@given(QUEUES, EVENTS, st.sampled_from(["pop", "append", "front", "other"]), QUEUES)
def test_the_queue_encoding_reused_equals_a_fresh_one(was: tuple, event: object, change: str,
                                                      other: tuple) -> None:
    q = {"pop": was[1:], "append": (*was, event), "front": (event, *was),
         "other": other}[change]
    old = encode(was) if was else ()
    out = _encode_queue(q, was, old)
    assert out == (encode(q) if q else ())
    assert decode(out) == q
