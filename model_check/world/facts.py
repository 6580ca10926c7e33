"""What the scheduler and the global view need to know about a component: its facts.

``World.controller_facts(b)``/``broker_facts(b)`` answer them; a world given a memo asks it
first (``model_check.memo.facts``: once per distinct component snapshot, restoring the
component only on a miss). A fact is a pure function of the component's state (and of the
broker id, for broker facts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from fsm.broker.views import ReplicaRole
from fsm.broker_states import BrokerState
from fsm.values import TopicPartition

if TYPE_CHECKING:
    from fsm.broker import BrokerCore
    from fsm.controller import Controller


class ControllerFacts(NamedTuple):
    active: bool
    epoch: int
    deleting: bool  # topics queued for deletion (the deletion-retry timer matters)
    awaiting_write: bool  # a decided write awaits its result (a cluster load waits too)
    live: tuple[int, ...] = ()  # the brokers it holds live (sorted; empty unless active)
    shutting_down: tuple[int, ...] = ()  # those of them in a controlled shutdown (sorted)


class BrokerFacts(NamedTuple):
    state: BrokerState
    led: tuple[tuple[TopicPartition, tuple[int, ...], tuple[int, ...]], ...]
    """``(tp, ISR view, replicas)`` of every replica the broker acts as leader of."""
    follows: frozenset[tuple[TopicPartition, int]] = frozenset()
    """``(tp, leader)`` of every replica the broker acts as a follower of ``leader`` for."""


def controller_facts(c: Controller) -> ControllerFacts:
    """The facts of controller ``c``."""
    active = c.is_active
    return ControllerFacts(active, c.epoch, bool(c.topics_to_delete()),
                           c.awaiting_write is not None,
                           tuple(sorted(c.live_brokers())) if active else (),
                           tuple(sorted(c.shutting_down())) if active else ())


def broker_facts(core: BrokerCore) -> BrokerFacts:
    """The facts of broker core ``core``."""
    led = tuple((tp, tuple(v.isr), tuple(v.replicas)) for tp, v in core.replicas()
                if core.believes_leader(tp))
    follows = frozenset((tp, v.leader) for tp, v in core.replicas()
                        if v.role is ReplicaRole.FOLLOWER and not v.fenced)
    return BrokerFacts(core.state, led, follows)
