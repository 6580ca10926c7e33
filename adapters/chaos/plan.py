"""The campaign's plan: a list of steps, each one admin action followed by one fault, drawn
from ``random.Random(seed)`` alone -- the same seed, broker count and fault count give the same
plan, whatever happens when it runs. Targets that only exist at run time (the controller, the
ZooKeeper leader) are named by role here and resolved when the fault is injected.

Fault kinds (``FaultKind``):

- ``kill-broker`` / ``kill-controller``: ``kill -9`` of a broker / of the controller's broker;
  restarted once every partition with a live in-sync replica has a leader again;
- ``pause-broker`` / ``pause-controller``: ``SIGSTOP`` until the ensemble has expired its
  sessions (longer than the session timeout), then ``SIGCONT``: the GC pause of seed 001 §3.
  The woken zombie must find its sessions expired and register again with a new epoch;
- ``controlled-shutdown``: ``SIGTERM`` (ControlledShutdown to the controller), then a restart;
- ``restart-in-shutdown``: ``SIGTERM``, and while the broker is still in
  ``PendingControlledShutdown`` a ``kill -9`` and an immediate restart;
- ``zk-kill-follower`` / ``zk-kill-leader``: ``kill -9`` of a ZooKeeper server (a follower /
  the quorum leader, found with ``srvr``), restarted once the cluster recovered;
- ``expire-session``: a broker's registration session, or the controller's session, ended on
  the server side (``adapters.chaos.sessions``).

Admin actions (``ActionKind``): create a topic (1-3 partitions, replication factor 2-3, an
explicit seeded assignment), add partitions, reassign one partition, a preferred-replica
election, delete a topic. The planner keeps a model of the topics it expects, so each action
names a topic that should exist then.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

CONTROLLER = "controller"
"""A target named by role: the controller's broker at injection time."""


class FaultKind(enum.Enum):
    KILL_BROKER = "kill-broker"
    KILL_CONTROLLER = "kill-controller"
    PAUSE_BROKER = "pause-broker"
    PAUSE_CONTROLLER = "pause-controller"
    CONTROLLED_SHUTDOWN = "controlled-shutdown"
    RESTART_IN_SHUTDOWN = "restart-in-shutdown"
    ZK_KILL_FOLLOWER = "zk-kill-follower"
    ZK_KILL_LEADER = "zk-kill-leader"
    EXPIRE_SESSION = "expire-session"

    @property
    def needs_own_ensemble(self) -> bool:
        return self in (FaultKind.ZK_KILL_FOLLOWER, FaultKind.ZK_KILL_LEADER)


ZK_KINDS = frozenset(k for k in FaultKind if k.needs_own_ensemble)

WEIGHTS: dict[FaultKind, int] = {
    FaultKind.KILL_BROKER: 3,
    FaultKind.KILL_CONTROLLER: 3,
    FaultKind.PAUSE_BROKER: 2,
    FaultKind.PAUSE_CONTROLLER: 2,
    FaultKind.CONTROLLED_SHUTDOWN: 3,
    FaultKind.RESTART_IN_SHUTDOWN: 2,
    FaultKind.ZK_KILL_FOLLOWER: 2,
    FaultKind.ZK_KILL_LEADER: 2,
    FaultKind.EXPIRE_SESSION: 3,
}
"""Relative frequencies after the first round (which has every kind once)."""


class ActionKind(enum.Enum):
    CREATE = "create"
    ADD_PARTITIONS = "add-partitions"
    REASSIGN = "reassign"
    ELECT = "elect-preferred"
    DELETE = "delete"


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    target: int | str | None = None
    """A broker id, ``CONTROLLER``, or for ZooKeeper kinds the index among followers."""

    def describe(self) -> str:
        if self.kind in (FaultKind.KILL_CONTROLLER, FaultKind.PAUSE_CONTROLLER):
            return self.kind.value
        if self.kind is FaultKind.ZK_KILL_LEADER:
            return self.kind.value
        if self.kind is FaultKind.ZK_KILL_FOLLOWER:
            return f"{self.kind.value} #{self.target}"
        if self.kind is FaultKind.EXPIRE_SESSION:
            who = "controller" if self.target == CONTROLLER else f"broker {self.target}"
            return f"{self.kind.value} ({who})"
        who = "controller" if self.target == CONTROLLER else f"broker {self.target}"
        return f"{self.kind.value} {who}"


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    topic: str | None = None
    assignment: tuple[tuple[int, ...], ...] = ()
    """create: every partition's replicas; add-partitions: the new partitions' replicas;
    reassign: the one partition's target replicas."""
    partition: int | None = None
    topics: tuple[str, ...] = ()
    """elect-preferred: the topics whose partitions are elected (all of them)."""

    def describe(self) -> str:
        k = self.kind
        if k is ActionKind.CREATE:
            rf = len(self.assignment[0]) if self.assignment else 0
            return f"create {self.topic} ({len(self.assignment)}p rf{rf})"
        if k is ActionKind.ADD_PARTITIONS:
            return f"add {len(self.assignment)}p to {self.topic}"
        if k is ActionKind.REASSIGN:
            return (f"reassign {self.topic}-{self.partition} -> "
                    f"{','.join(map(str, self.assignment[0]))}")
        if k is ActionKind.ELECT:
            return f"elect-preferred {','.join(self.topics)}"
        return f"delete {self.topic}"


@dataclass(frozen=True)
class Step:
    index: int
    action: Action
    fault: Fault


@dataclass
class _Model:
    """The topics the plan expects to exist (name -> each partition's replicas)."""

    topics: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    created: int = 0


MAX_TOPICS = 6
MAX_PARTITIONS = 6


def make_plan(seed: int, faults: int, brokers: int, *, zookeeper_faults: bool = True
              ) -> list[Step]:
    """``faults`` steps for a cluster of brokers 1..``brokers``. Without ``zookeeper_faults``
    (an ensemble kcontrol did not start) the ZooKeeper kinds are left out."""
    kinds = [k for k in FaultKind if zookeeper_faults or not k.needs_own_ensemble]
    return seeded_steps(seed, faults, brokers, kinds, WEIGHTS, _draw_fault, Step)


K = TypeVar("K")
S = TypeVar("S")


def seeded_steps(seed: int, faults: int, brokers: int, kinds: Sequence[K],
                 weights: dict[K, int], draw_fault: Callable[[random.Random, K, list[int]], Any],
                 make_step: Callable[[int, Action, Any], S]) -> list[S]:
    """Both campaigns' plans: ``faults`` steps (``make_step(index, action, fault)``) for
    brokers 1..``brokers``, drawn from ``random.Random(seed)`` alone. The first round has every
    kind of ``kinds`` once, in a seeded order; later kinds are drawn by ``weights``. Each
    step's admin action comes from ``_draw_action`` against the plan's model of the topics,
    its fault from ``draw_fault(rng, kind, broker ids)``."""
    if brokers < 2:
        raise ValueError("a fault campaign needs at least 2 brokers")
    rng = random.Random(seed)
    first_round = list(kinds)
    rng.shuffle(first_round)
    model = _Model()
    ids = list(range(1, brokers + 1))
    steps = []
    for i in range(faults):
        kind = first_round[i] if i < len(first_round) else \
            rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
        action = _draw_action(rng, model, ids)
        steps.append(make_step(i + 1, action, draw_fault(rng, kind, ids)))
    return steps


def _draw_fault(rng: random.Random, kind: FaultKind, ids: list[int]) -> Fault:
    if kind in (FaultKind.KILL_CONTROLLER, FaultKind.PAUSE_CONTROLLER):
        return Fault(kind, CONTROLLER)
    if kind is FaultKind.ZK_KILL_LEADER:
        return Fault(kind, None)
    if kind is FaultKind.ZK_KILL_FOLLOWER:
        return Fault(kind, rng.randrange(2))
    if kind in (FaultKind.CONTROLLED_SHUTDOWN, FaultKind.RESTART_IN_SHUTDOWN,
                FaultKind.EXPIRE_SESSION):
        return Fault(kind, CONTROLLER if rng.random() < 0.4 else rng.choice(ids))
    return Fault(kind, rng.choice(ids))


def _replicas(rng: random.Random, ids: list[int], rf: int) -> tuple[int, ...]:
    return tuple(rng.sample(ids, rf))


def _draw_action(rng: random.Random, model: _Model, ids: list[int]) -> Action:
    topics = sorted(model.topics)
    if not topics:
        kind = ActionKind.CREATE
    elif len(topics) >= MAX_TOPICS:
        kind = rng.choice([ActionKind.DELETE, ActionKind.REASSIGN, ActionKind.ELECT])
    else:
        kind = rng.choices(list(ActionKind), weights=[4, 2, 3, 2, 2])[0]
    if kind is ActionKind.ADD_PARTITIONS:
        growable = [t for t in topics if len(model.topics[t]) < MAX_PARTITIONS]
        if not growable:
            kind = ActionKind.REASSIGN
    if kind is ActionKind.CREATE:
        model.created += 1
        name = f"chaos-{model.created}"
        rf = rng.randint(2, min(3, len(ids)))
        assignment = tuple(_replicas(rng, ids, rf) for _ in range(rng.randint(1, 3)))
        model.topics[name] = list(assignment)
        return Action(kind, name, assignment)
    if kind is ActionKind.ADD_PARTITIONS:
        topic = rng.choice(growable)
        rf = len(model.topics[topic][0])
        new = tuple(_replicas(rng, ids, rf) for _ in range(rng.randint(1, 2)))
        model.topics[topic].extend(new)
        return Action(kind, topic, new)
    if kind is ActionKind.REASSIGN:
        topic = rng.choice(topics)
        partition = rng.randrange(len(model.topics[topic]))
        current = model.topics[topic][partition]
        target = _replicas(rng, ids, len(current))
        while target == current or (len(ids) > len(current) and set(target) == set(current)):
            target = _replicas(rng, ids, len(current))
        model.topics[topic][partition] = target
        return Action(kind, topic, (target,), partition)
    if kind is ActionKind.ELECT:
        chosen = tuple(sorted(rng.sample(topics, min(len(topics), rng.randint(1, 2)))))
        return Action(kind, topics=chosen)
    topic = rng.choice(topics)
    del model.topics[topic]
    return Action(ActionKind.DELETE, topic)


__all__ = ["CONTROLLER", "Action", "ActionKind", "Fault", "FaultKind", "Step", "ZK_KINDS",
           "make_plan", "seeded_steps"]
