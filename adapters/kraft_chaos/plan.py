"""The KRaft campaign's plan: steps of one admin action and one fault each, drawn from
``random.Random(seed)`` alone -- the same seed, broker count, fault count and fault classes
give the same plan. Targets that exist only at run time (the active controller, a standby)
are named by role and resolved when the fault is injected.

Fault kinds (``KFaultKind``), each undone before the step ends:

- ``kill-active-controller`` / ``kill-standby-controller`` / ``kill-broker``: ``kill -9``,
  restarted once the cluster recovered;
- ``pause-active-controller`` / ``pause-standby-controller`` / ``pause-broker``: ``SIGSTOP``
  past the quorum's fetch timeout and the broker session timeout, then ``SIGCONT``: a paused
  active controller is replaced and, woken, must step down and follow; a paused broker is
  fenced, and woken must be unfenced again;
- ``controlled-shutdown``: ``SIGTERM`` to a broker, its exit awaited, a restart;
- ``disk-full`` / ``disk-read-only``: the metadata directory of the controller on the small
  filesystem filled / remounted read-only: the controller must stop (fail-stop) at its next
  write; the disk is restored and the controller restarted: it rejoins;
- ``isolate-active-controller`` / ``isolate-standby-controller``: every link to and from the
  controller black-holed past the fetch timeout, then healed;
- ``one-way-loss``: on every link to one controller, its requests or its responses dropped
  (probability 1.0 or 0.5) for a few seconds.

Disk kinds need a small filesystem (``disks``), network kinds the proxy mesh (``network``):
without them they are left out of the plan.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass

from adapters.chaos.plan import Action, seeded_steps

ACTIVE = "active"
STANDBY = "standby"


class KFaultKind(enum.Enum):
    KILL_ACTIVE = "kill-active-controller"
    KILL_STANDBY = "kill-standby-controller"
    KILL_BROKER = "kill-broker"
    PAUSE_ACTIVE = "pause-active-controller"
    PAUSE_STANDBY = "pause-standby-controller"
    PAUSE_BROKER = "pause-broker"
    CONTROLLED_SHUTDOWN = "controlled-shutdown"
    DISK_FULL = "disk-full"
    DISK_READ_ONLY = "disk-read-only"
    ISOLATE_ACTIVE = "isolate-active-controller"
    ISOLATE_STANDBY = "isolate-standby-controller"
    ONE_WAY_LOSS = "one-way-loss"

    @property
    def needs_disk(self) -> bool:
        return self in (KFaultKind.DISK_FULL, KFaultKind.DISK_READ_ONLY)

    @property
    def needs_network(self) -> bool:
        return self in (KFaultKind.ISOLATE_ACTIVE, KFaultKind.ISOLATE_STANDBY,
                        KFaultKind.ONE_WAY_LOSS)


WEIGHTS: dict[KFaultKind, int] = {
    KFaultKind.KILL_ACTIVE: 3,
    KFaultKind.KILL_STANDBY: 2,
    KFaultKind.KILL_BROKER: 3,
    KFaultKind.PAUSE_ACTIVE: 2,
    KFaultKind.PAUSE_STANDBY: 1,
    KFaultKind.PAUSE_BROKER: 2,
    KFaultKind.CONTROLLED_SHUTDOWN: 3,
    KFaultKind.DISK_FULL: 2,
    KFaultKind.DISK_READ_ONLY: 2,
    KFaultKind.ISOLATE_ACTIVE: 2,
    KFaultKind.ISOLATE_STANDBY: 1,
    KFaultKind.ONE_WAY_LOSS: 3,
}
"""Relative frequencies after the first round (which has every kind once)."""

DROP_REQUESTS = "requests"
DROP_RESPONSES = "responses"


@dataclass(frozen=True)
class KFault:
    kind: KFaultKind
    target: int | str | None = None
    """A broker id, ``ACTIVE`` or ``STANDBY`` (controllers), None (the disk's controller)."""
    standby: int = 0
    """Which standby (index among the standbys, sorted by id) when ``target`` is STANDBY."""
    drop: str = DROP_REQUESTS
    """one-way-loss: which direction is dropped."""
    loss: float = 1.0
    """one-way-loss: the probability each message of that direction is dropped."""
    hold_s: float = 0.0
    """one-way-loss: how long the loss lasts."""

    def describe(self) -> str:
        k = self.kind
        if k is KFaultKind.ONE_WAY_LOSS:
            return (f"{k.value} ({self.target} ctrl, drop {self.drop} p={self.loss:g}, "
                    f"{self.hold_s:g}s)")
        if isinstance(self.target, int):
            return f"{k.value} {self.target}"
        if self.target == STANDBY:
            return f"{k.value} #{self.standby}"
        return k.value


@dataclass(frozen=True)
class KStep:
    index: int
    action: Action
    fault: KFault


def available_kinds(*, disks: bool, network: bool) -> list[KFaultKind]:
    return [k for k in KFaultKind
            if (disks or not k.needs_disk) and (network or not k.needs_network)]


def make_plan(seed: int, faults: int, brokers: int, *, disks: bool = True,
              network: bool = True) -> list[KStep]:
    """``faults`` steps for brokers 1..``brokers``; the first round has every available kind
    once (in a seeded order), later kinds are drawn by ``WEIGHTS``."""
    if faults < 0:
        raise ValueError(f"{faults} faults: not negative")
    kinds = available_kinds(disks=disks, network=network)
    return seeded_steps(seed, faults, brokers, kinds, WEIGHTS, _draw_fault, KStep)


def _draw_fault(rng: random.Random, kind: KFaultKind, ids: list[int]) -> KFault:
    if kind in (KFaultKind.KILL_BROKER, KFaultKind.PAUSE_BROKER,
                KFaultKind.CONTROLLED_SHUTDOWN):
        return KFault(kind, rng.choice(ids))
    if kind in (KFaultKind.KILL_ACTIVE, KFaultKind.PAUSE_ACTIVE, KFaultKind.ISOLATE_ACTIVE):
        return KFault(kind, ACTIVE)
    if kind in (KFaultKind.KILL_STANDBY, KFaultKind.PAUSE_STANDBY,
                KFaultKind.ISOLATE_STANDBY):
        return KFault(kind, STANDBY, standby=rng.randrange(2))
    if kind is KFaultKind.ONE_WAY_LOSS:
        role = ACTIVE if rng.random() < 0.6 else STANDBY
        return KFault(kind, role, standby=rng.randrange(2),
                      drop=rng.choice((DROP_REQUESTS, DROP_RESPONSES)),
                      loss=rng.choice((1.0, 0.5)), hold_s=float(rng.randint(2, 5)))
    return KFault(kind, None)


__all__ = ["ACTIVE", "DROP_REQUESTS", "DROP_RESPONSES", "STANDBY", "WEIGHTS", "KFault",
           "KFaultKind", "KStep", "available_kinds", "make_plan"]
