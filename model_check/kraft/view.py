"""A ``KRaftView`` of a ``KRaftWorld``: what the invariants read, nothing they do not."""

from __future__ import annotations

from fsm.kraft.broker.replicas import Role
from invariants.kraft import BrokerFacts, ControllerFacts, KRaftView
from model_check.kraft.raft_world import KRaftRaftWorld
from model_check.kraft.world import KRaftWorld


def view_of(w: KRaftWorld) -> KRaftView:
    controllers = tuple(ControllerFacts(i, c.active, _replayed_to(w, i), c.committed, c.image,
                                         c.waiting_answers)
                        for i, c in enumerate(w.controllers))
    brokers = []
    for b in sorted(w.brokers):
        core = w.brokers[b]
        leaders = tuple((tid, pid, rep.leader_epoch) for (tid, pid), rep in core.replicas()
                        if rep.role is Role.LEADER)
        brokers.append(BrokerFacts(b, w.alive(b), core.state.value, core.incarnation_id,
                                   core.broker_epoch, core.metadata_offset, core.image, leaders))
    return KRaftView(w.hw, w.log_end(), tuple(w.log[:w.hw + 1]), w.committed_image(),
                     controllers, tuple(brokers), w.pending())


def _replayed_to(w: KRaftWorld, i: int) -> int:
    """The last offset controller ``i`` has replayed. On the Raft log its glue knows better
    than the controller: the glue skips the quorum's control batches (a standby's
    ``committed_offset`` stays below a LeaderChange it passed), but has applied them."""
    c = w.controllers[i]
    glue = w.voters[i] if isinstance(w, KRaftRaftWorld) else None
    return c.committed_offset if glue is None else max(c.committed_offset, glue.applied - 1)
