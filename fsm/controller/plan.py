"""A plan: what one handler decided, before it is written (transient, never snapshotted).

``writes`` holds at most one partition state write per partition: later decisions in the
same event read the planned value (``Controller._current``) and replace the write, keeping
the expected version of the znode as read. ``followups`` are small tuples turned into
requests once the writes committed:

* ``("stop", broker, tp, delete)`` -- StopReplica;
* ``("reply", broker, correlation)`` -- answer a controlled shutdown (remaining leaderships);
* ``("full",)`` -- failover: LeaderAndIsr for all its replicas and UpdateMetadata for every
  partition to every live broker;
* ``("join", broker)`` -- the same for one joining broker;
* ``("um-everyone",)`` -- UpdateMetadata with the live brokers to every live broker;
* ``("deleting", topic)`` -- UpdateMetadata announcing the topic's partitions with leader -2;
* ``("online", tp)`` -- move the partition's new replicas to OnlineReplica once written.

Conditional (reassignment phases, ``fsm.controller.reassignment``): applied only for what
committed, carried into the retry round when the partition is decided once more, dropped
(the reassignment stays in flight) otherwise:

* ``("expand", tp, rs)`` -- RS into memory once the topic znode write committed;
* ``("expanded", tp)`` -- added replicas NewReplica once the leader-epoch bump committed;
* ``("complete", tp)`` -- switch to the target once the completion state write committed
  (the topic znode and ``/admin/reassign_partitions`` are written in the next round).
"""

from __future__ import annotations

from fsm.controller.records import Decision
from fsm.effects import ZkOp
from fsm.values import TopicPartition


class Plan:
    __slots__ = ("writes", "ops", "followups")

    def __init__(self) -> None:
        self.writes: dict[TopicPartition, Decision] = {}
        self.ops: list[ZkOp] = []
        self.followups: list[tuple] = []

    def empty(self) -> bool:
        return not (self.writes or self.ops or self.followups)
