"""Random sequences of broker changes keep leader ∈ ISR ⊆ replicas and ISR non-empty."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.controller import ControllerConfig
from fsm.events import ControlledShutdown
from fsm.requests import ControlledShutdownRequest

from .harness import active, broker_change, feed, no_illegal

TOPICS = {"t": {0: (1, 2, 3), 1: (2, 3, 1), 2: (3, 1), 3: (1,)}, "u": {0: (2, 3)}}

steps = st.lists(st.one_of(
    st.tuples(st.just("live"), st.sets(st.integers(1, 3)), st.sets(st.integers(1, 3))),
    st.tuples(st.just("shutdown"), st.integers(1, 3), st.just(frozenset())),
), max_size=12)


@settings(max_examples=80, deadline=None)
@given(steps, st.booleans())
def test_leader_in_isr_subset_of_replicas(seq, unclean) -> None:
    ctl = active(topics=TOPICS,
                 config=ControllerConfig(broker_id=1, unclean_leader_election_enable=unclean))
    epochs = {p: 0 for t in TOPICS for p in [(t, q) for q in TOPICS[t]]}
    for kind, a, bounce in seq:
        if kind == "live":
            live = ctl.live_brokers()
            broker_change(ctl, *sorted(a), bounced={b: live.get(b, 0) + 1000 for b in bounce
                                                     if b in a})
        else:
            ep = ctl.live_brokers().get(a, -5)
            feed(ctl, ControlledShutdown(ControlledShutdownRequest(a, ep), 1))
        live = set(ctl.live_brokers())
        for tp in epochs:
            li = ctl.leader_and_isr(tp)
            assert li.isr, tp
            assert set(li.isr) <= set(ctl.replicas(tp))
            if li.leader != -1:
                assert li.leader in li.isr and li.leader in live
            assert li.leader_epoch >= epochs[tp]
            epochs[tp] = li.leader_epoch
    no_illegal(ctl)
