"""ControllerBrokerRequestBatch: one batch of requests per event.

Per round at most one LeaderAndIsr, one UpdateMetadata and two StopReplica (delete
false, then true) per live broker, each stamped with the controller's id and epoch and
the target broker's epoch. Partitions of a topic being deleted are announced with leader
-2 (``LEADER_DURING_DELETE``). Every list is sorted, so the output does not depend on
the order in which the state was built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.effects import SendRequest
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import LEADER_DURING_DELETE, TopicPartition

if TYPE_CHECKING:
    from fsm.controller.context import ControllerContext


class RequestBatch:
    __slots__ = ("lai", "lai_full", "um", "um_all_partitions_to", "um_everyone", "stop")

    def __init__(self) -> None:
        self.lai: dict[int, set[TopicPartition]] = {}
        self.lai_full: set[int] = set()  # brokers that get LeaderAndIsr for all their replicas
        self.um: set[TopicPartition] = set()  # partitions announced to every live broker
        self.um_all_partitions_to: set[int] = set()  # brokers that get every partition
        self.um_everyone = False  # send UpdateMetadata (live brokers) even without partitions
        self.stop: dict[tuple[int, bool], set[TopicPartition]] = {}

    def leader_and_isr(self, tp: TopicPartition, brokers: tuple[int, ...]) -> None:
        for b in brokers:
            s = self.lai.get(b)
            if s is None:
                self.lai[b] = {tp}
            else:
                s.add(tp)

    def stop_replica(self, broker: int, tp: TopicPartition, delete: bool) -> None:
        self.stop.setdefault((broker, delete), set()).add(tp)

    def empty(self) -> bool:
        return not (self.lai or self.lai_full or self.um or self.um_all_partitions_to
                    or self.um_everyone or self.stop)

    def finish(self, ctx: ControllerContext, controller_id: int,
               epoch: int) -> list[SendRequest]:
        if self.empty():
            return []
        live = ctx.live
        out: list[SendRequest] = []
        lai_cache: dict[TopicPartition, LeaderAndIsrPartition] = {}
        um_cache: dict[TopicPartition, UpdateMetadataPartition] = {}
        brokers = tuple(live[b] for b in sorted(live))

        def lai_part(tp: TopicPartition) -> LeaderAndIsrPartition | None:
            part = lai_cache.get(tp)
            if part is None:
                st = ctx.states.get(tp)
                replicas = ctx.assignment.get(tp)
                if st is None or replicas is None:
                    return None
                li = st.leader_and_isr
                part = LeaderAndIsrPartition(tp[0], tp[1], li.controller_epoch, li.leader,
                                             li.leader_epoch, li.isr, st.version, replicas)
                lai_cache[tp] = part
            return part

        def um_part(tp: TopicPartition) -> UpdateMetadataPartition | None:
            part = um_cache.get(tp)
            if part is None:
                st = ctx.states.get(tp)
                replicas = ctx.assignment.get(tp)
                if st is None or replicas is None:
                    return None
                li = st.leader_and_isr
                leader = LEADER_DURING_DELETE if tp[0] in ctx.to_delete else li.leader
                offline = tuple(r for r in replicas if r not in live)
                part = UpdateMetadataPartition(tp[0], tp[1], li.controller_epoch, leader,
                                               li.leader_epoch, li.isr, st.version, replicas,
                                               offline)
                um_cache[tp] = part
            return part

        targets = sorted(set(self.lai) | self.lai_full)
        for b in targets:
            if b not in live:
                continue
            tps = set(self.lai.get(b, ()))
            if b in self.lai_full:
                tps.update(tp for tp, reps in ctx.assignment.items() if b in reps)
            parts = [p for p in (lai_part(tp) for tp in sorted(tps)) if p is not None]
            if not parts:
                continue
            leaders = sorted({p.leader for p in parts if p.leader in live})
            out.append(SendRequest(b, LeaderAndIsrRequest(
                controller_id, epoch, live[b].epoch, tuple(parts),
                tuple(live[x] for x in leaders))))
        if self.um or self.um_all_partitions_to or self.um_everyone:
            common = tuple(p for p in (um_part(tp) for tp in sorted(self.um)) if p is not None)
            full: tuple[UpdateMetadataPartition, ...] | None = None
            for b in sorted(live):
                if b in self.um_all_partitions_to:
                    if full is None:
                        full = tuple(p for p in (um_part(tp) for tp in sorted(ctx.states))
                                     if p is not None)
                    parts = full
                else:
                    parts = common
                if not parts and not self.um_everyone:
                    continue
                out.append(SendRequest(b, UpdateMetadataRequest(
                    controller_id, epoch, live[b].epoch, parts, brokers)))
        for (b, delete) in sorted(self.stop):
            if b not in live:
                continue
            out.append(SendRequest(b, StopReplicaRequest(
                controller_id, epoch, live[b].epoch, delete, tuple(sorted(self.stop[(b, delete)])))))
        return out
