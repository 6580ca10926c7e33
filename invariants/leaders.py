"""Partition leaders against the broker registrations in ZooKeeper."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import QUIESCENT, invariant
from invariants.view import NO_LEADER, GlobalView

TopicPartition = tuple[str, int]


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def an_active_controller_and_a_leader(view: GlobalView) -> bool:
    """A controller is active and a partition state names a leader."""
    zk = view.zk
    if zk is None or not any(st.leader != NO_LEADER for _, st in zk.partitions):
        return False
    return view.controllers is None or any(c.up and c.active for c in view.controllers)


@invariant(QUIESCENT, "issue 4 live audit; seed 000 'broker failure' (leaders move off a failed "
                      "broker); Kafka's partition state znode (leader -1 = no leader)",
           premise=an_active_controller_and_a_leader)
def leader_is_registered_or_none(view: GlobalView) -> Iterator[str]:
    """Once quiescent, every partition's leader in ZooKeeper is a registered broker
    (``/brokers/ids/<id>`` exists) or -1 (no leader).

    The controller elects only live brokers, and when a broker's registration disappears it
    moves leadership off it -- to another live ISR member, or to -1 when none is left. A
    leader that is not registered sends clients to a broker that is gone: the partition is
    offline while ZooKeeper says it is not.

    Not a state invariant: between a broker's death and the controller's reaction the old
    leader is still named, by design. So it is checked once nothing is in flight, and only
    while some controller is up and active to react (a cluster whose every candidate is down
    can fix nothing). Topics being deleted are exempt: like Kafka, the controller elects no
    leader for them. A live audit (``adapters.zookeeper.audit``) does not know what is in
    flight and checks it anyway: a violation seen once may be that window, one that persists
    across audits is real.
    """
    zk = view.zk
    if zk is None or view.pending:
        return
    if view.controllers is not None and not any(c.up and c.active for c in view.controllers):
        return
    for tp, st in zk.partitions:
        if st.leader != NO_LEADER and st.leader not in zk.registered \
                and tp[0] not in zk.deleting:
            yield (f"{_tp(tp)}: leader {st.leader} is not a registered broker "
                   f"(registered: {sorted(zk.registered)})")
