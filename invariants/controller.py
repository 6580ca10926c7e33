"""Controller election: who may act as the controller, and with which epoch."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import STATE, invariant
from invariants.view import GlobalView


def _active(view: GlobalView) -> list[int]:
    return [c.broker_id for c in view.controllers or () if c.up and c.active]


def two_controllers_active(view: GlobalView) -> bool:
    """Two or more running candidates believe they are the active controller."""
    return len(_active(view)) > 1


def a_controller_active(view: GlobalView) -> bool:
    """A running candidate is active and ZooKeeper's ``/controller_epoch`` is known."""
    return view.zk is not None and view.zk.controller_epoch is not None \
        and bool(_active(view))


@invariant(STATE, "seed 000 'controller leader election'; KAFKA-6082 (zombie controller)",
           premise=two_controllers_active)
def one_active_controller_per_epoch(view: GlobalView) -> Iterator[str]:
    """At most one running controller candidate is active with any given controller epoch.

    The controller epoch is what brokers (stale-epoch rejection) and ZooKeeper (the
    ``/controller_epoch`` version check of every controller write) use to tell the current
    controller from a zombie. Two active controllers sharing an epoch could not be told
    apart: both would pass every fence and could issue conflicting decisions. A zombie with
    an *older* epoch may still believe it is active for a while (it learns of its session
    expiry later); that is allowed, its writes and requests are fenced.
    """
    seen: dict[int, int] = {}
    for c in view.controllers or ():
        if not (c.up and c.active):
            continue
        if c.epoch in seen:
            yield f"controllers {seen[c.epoch]} and {c.broker_id} are both active with epoch {c.epoch}"
        else:
            seen[c.epoch] = c.broker_id


@invariant(STATE, "seed 000 'controller leader election'; Kafka's /controller_epoch znode",
           premise=a_controller_active)
def active_controller_epoch_not_ahead_of_zookeeper(view: GlobalView) -> Iterator[str]:
    """No active controller holds an epoch higher than ``/controller_epoch``, and the
    controller ``/controller`` names, when active, holds exactly that epoch.

    A candidate becomes controller only by the ``multi`` that creates ``/controller`` and sets
    ``/controller_epoch`` to epoch+1; its epoch therefore comes from ZooKeeper. An epoch ahead
    of ZooKeeper means a controller acts without having won the election; the named owner at
    an older epoch means it did not take the epoch its own election wrote.
    """
    zk = view.zk
    if zk is None or zk.controller_epoch is None:
        return
    for c in view.controllers or ():
        if not (c.up and c.active):
            continue
        if c.epoch > zk.controller_epoch:
            yield (f"controller {c.broker_id} is active with epoch {c.epoch} but "
                   f"/controller_epoch is {zk.controller_epoch}")
        elif c.broker_id == zk.controller and c.epoch != zk.controller_epoch:
            yield (f"controller {c.broker_id} owns /controller with epoch {c.epoch} but "
                   f"/controller_epoch is {zk.controller_epoch}")
