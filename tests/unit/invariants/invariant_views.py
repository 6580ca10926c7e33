"""Hand-built ``GlobalView``s: one healthy cluster and small edits of it."""

from __future__ import annotations

from dataclasses import replace

from invariants.view import (
    FOLLOWER,
    LEADER,
    AppliedView,
    BrokerView,
    ControllerView,
    GlobalView,
    MetadataPartitionView,
    MetadataView,
    PartitionStateView,
    ReplicaView,
    ZkView,
)

TP = ("t", 0)
EPOCHS = {1: 10, 2: 11, 3: 12}
CE = 3  # controller epoch
LE = 2  # leader epoch of t-0
VERSION = 5  # state znode version of t-0
ISR = (1, 2, 3)


def state(leader: int = 1, leader_epoch: int = LE, isr: tuple[int, ...] = ISR,
          version: int = VERSION, controller_epoch: int = CE, czxid: int = 40
          ) -> PartitionStateView:
    return PartitionStateView(leader, leader_epoch, isr, controller_epoch, version, czxid)


def zk(**changes: object) -> ZkView:
    base = ZkView(
        controller=1, controller_epoch=CE, controller_epoch_version=CE,
        brokers=tuple(sorted(EPOCHS.items())),
        assignments=((TP, (1, 2, 3)),),
        partitions=((TP, state()),),
    )
    return replace(base, **changes)


def replica(b: int, leader: int = 1, leader_epoch: int = LE, isr: tuple[int, ...] = ISR,
            version: int = VERSION, fenced: bool = False, role: str | None = None
            ) -> ReplicaView:
    role = role or (LEADER if b == leader else FOLLOWER)
    return ReplicaView(role, leader, leader_epoch, isr, version, fenced)


def metadata(leader: int = 1, leader_epoch: int = LE, isr: tuple[int, ...] = ISR,
             live: tuple[tuple[int, int], ...] | None = None, controller: int | None = 1
             ) -> MetadataView:
    return MetadataView(controller, tuple(sorted(EPOCHS.items())) if live is None else live,
                        ((TP, MetadataPartitionView(leader, leader_epoch, isr, (1, 2, 3))),))


def broker(b: int, **changes: object) -> BrokerView:
    base = BrokerView(b, True, "RUNNING", EPOCHS[b], CE, ((TP, replica(b)),), metadata(),
                      AppliedView(CE, EPOCHS[b], CE))
    return replace(base, **changes)


def healthy(**changes: object) -> GlobalView:
    base = GlobalView(
        zk=zk(),
        controllers=(ControllerView(1, True, True, CE, live=(1, 2, 3)),
                     ControllerView(2, True, False, 0, live=()),
                     ControllerView(3, True, False, 0, live=())),
        brokers=(broker(1), broker(2), broker(3)),
        pending=False,
        reassign_targets=(),
    )
    return replace(base, **changes)


def with_broker(view: GlobalView, b: int, **changes: object) -> GlobalView:
    brokers = tuple(replace(x, **changes) if x.broker_id == b else x for x in view.brokers or ())
    return replace(view, brokers=brokers)


def with_zk(view: GlobalView, **changes: object) -> GlobalView:
    assert view.zk is not None
    return replace(view, zk=replace(view.zk, **changes))


def with_controller(view: GlobalView, b: int, **changes: object) -> GlobalView:
    controllers = tuple(replace(x, **changes) if x.broker_id == b else x
                        for x in view.controllers or ())
    return replace(view, controllers=controllers)
