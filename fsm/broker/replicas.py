"""Become leader, become follower, stop: the per-partition decisions of seed 001 section C.

Pure functions from (what the broker has, what it is told) to (error code, new view). The
core stores the view; ``None`` means "unchanged" for a LeaderAndIsr decision.

Freshness. A partition state supersedes another when its ``(leader_epoch, zk_version)``
is higher (lexicographically). Kafka compares the leader epoch alone and ignores an equal
one; kcontrol also accepts an equal leader epoch with a *higher* znode version (an ISR
change the controller made without a new leader epoch), and an equal pair when the local
replica is not acting (stopped, or fenced by its own failed ISR write) so that the
controller can always restart it. A state older than the local one is answered
``FENCED_LEADER_EPOCH`` (Kafka answers STALE_CONTROLLER_EPOCH per partition; 74 says what
happened and cannot be confused with the request-level 11). An exact repeat of what the
broker already has is answered ``NONE`` and changes nothing.
"""

from __future__ import annotations

from fsm.broker.validation import leader_and_isr_reason
from fsm.broker.views import ReplicaRole, ReplicaView
from fsm.errors import ErrorCode
from fsm.requests import LeaderAndIsrPartition
from fsm.values import NO_LEADER, LeaderAndIsr, PartitionStateZk


def view_from_request(own_id: int, p: LeaderAndIsrPartition) -> ReplicaView:
    """becomeLeader / becomeFollower: the view the broker takes from a partition state."""
    role = ReplicaRole.LEADER if p.leader == own_id else ReplicaRole.FOLLOWER
    return ReplicaView(role, p.leader, p.leader_epoch, p.isr, p.zk_version, p.replicas,
                       p.controller_epoch)


def decide_leader_and_isr(own_id: int, current: ReplicaView | None,
                          p: LeaderAndIsrPartition) -> tuple[ErrorCode, ReplicaView | None]:
    """The answer for one partition of a LeaderAndIsr and the view to store (None: keep)."""
    if leader_and_isr_reason(p) is not None:
        return ErrorCode.INVALID_REQUEST, None
    if own_id not in p.replicas:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    new = view_from_request(own_id, p)
    if current is None:
        return ErrorCode.NONE, new
    if new.freshness < current.freshness:
        return ErrorCode.FENCED_LEADER_EPOCH, None
    if new.freshness == current.freshness and is_acting(current):
        if new == current:
            return ErrorCode.NONE, None
        return ErrorCode.FENCED_LEADER_EPOCH, None
    return ErrorCode.NONE, new


def is_acting(view: ReplicaView) -> bool:
    """Leading or following, not stopped and not fenced."""
    return view.role is not ReplicaRole.STOPPED and not view.fenced


def stopped(view: ReplicaView) -> ReplicaView:
    """StopReplica(delete=false): stop fetching and stop leading; keep the epochs."""
    if view.role is ReplicaRole.STOPPED:
        return view
    return ReplicaView(ReplicaRole.STOPPED, view.leader, view.leader_epoch, view.isr,
                       view.zk_version, view.replicas, view.controller_epoch, view.fenced,
                       view.zk_seen)


def fenced(view: ReplicaView, seen: tuple[LeaderAndIsr, int] | None) -> ReplicaView:
    """A failed ISR write: stop acting as leader until told (seed 001, multiple leaders §3)."""
    return ReplicaView(view.role, view.leader, view.leader_epoch, view.isr, view.zk_version,
                       view.replicas, view.controller_epoch, True, seen)


def with_isr(view: ReplicaView, isr: tuple[int, ...], zk_version: int) -> ReplicaView:
    """A committed ISR write: the leader adopts its ISR and the znode's next version."""
    return ReplicaView(view.role, view.leader, view.leader_epoch, isr, zk_version,
                       view.replicas, view.controller_epoch, view.fenced, view.zk_seen)


def view_from_zk(own_id: int, replicas: tuple[int, ...],
                 state: PartitionStateZk | None) -> ReplicaView:
    """Startup recovery (seed 001 section E): start the replica, lead or follow as ZooKeeper
    says. Without a state (not initialised yet) the replica follows no leader at epoch -1."""
    if state is None:
        return ReplicaView(ReplicaRole.FOLLOWER, NO_LEADER, -1, (), -1, replicas, -1)
    lai = state.leader_and_isr
    role = ReplicaRole.LEADER if lai.leader == own_id else ReplicaRole.FOLLOWER
    return ReplicaView(role, lai.leader, lai.leader_epoch, lai.isr, state.version, replicas,
                       lai.controller_epoch)
