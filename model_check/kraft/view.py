"""A ``KRaftView`` of a ``KRaftWorld``: what the invariants read, nothing they do not."""

from __future__ import annotations

from fsm.kraft.broker.replicas import Role
from invariants.kraft import BrokerFacts, ControllerFacts, KRaftView
from model_check.kraft.world import KRaftWorld


def view_of(w: KRaftWorld) -> KRaftView:
    controllers = tuple(ControllerFacts(i, c.active, c.committed_offset, c.committed, c.image)
                        for i, c in enumerate(w.controllers))
    brokers = []
    for b in sorted(w.brokers):
        core = w.brokers[b]
        leaders = tuple((tid, pid, rep.leader_epoch) for (tid, pid), rep in core.replicas()
                        if rep.role is Role.LEADER)
        brokers.append(BrokerFacts(b, w.alive(b), core.state.value, core.incarnation_id,
                                   core.broker_epoch, core.metadata_offset, core.image, leaders))
    return KRaftView(w.hw, w.log_end(), tuple(w.log[:w.hw + 1]), w.controller.committed,
                     controllers, tuple(brokers), w.pending())
