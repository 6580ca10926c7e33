"""ControllerBrokerRequestBatch: one batch of requests per event.

Per round at most one LeaderAndIsr, one UpdateMetadata and two StopReplica (delete
false, then true) per live broker, each stamped with the controller's id and epoch and
the target broker's epoch. Partitions of a topic being deleted are announced with leader
-2 (``LEADER_DURING_DELETE``), and a broker that gets LeaderAndIsr for all its replicas (it
joined, or a new controller took over) gets none for them: their deletion goes on with
StopReplica, and a LeaderAndIsr would start, on a broker's new incarnation, a replica the
deletion may already count as deleted (its previous incarnation answered) -- found by
``kcontrol check deletion --random --seed 3``, transcript ``restart_during_deletion.txt``. Every list is sorted, so the output does not depend on
the order in which the state was built.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING

from fsm.effects import SendRequest
from fsm.request_builders import new_leader_and_isr_partition, new_update_metadata_partition
from fsm.requests import (
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import LEADER_DURING_DELETE, TopicPartition

_leader_of = attrgetter("leader")

if TYPE_CHECKING:
    from fsm.controller.context import ControllerContext


class RequestBatch:
    """Partition sets are dicts used as ordered sets (``d[tp] = None``): commits arrive in
    sorted order, so the ``sorted`` in ``finish`` meets sorted (runs of) input. LeaderAndIsr
    targets are grouped by the replica tuple (one dict operation per partition, not one
    per replica); ``finish`` splits them per broker."""

    __slots__ = ("lai", "lai_full", "um", "um_all_partitions_to", "um_everyone", "stop")

    def __init__(self) -> None:
        self.lai: dict[tuple[int, ...], dict[TopicPartition, None]] = {}  # brokers -> tps
        self.lai_full: set[int] = set()  # brokers that get LeaderAndIsr for all their replicas
        self.um: dict[TopicPartition, None] = {}  # partitions announced to every live broker
        self.um_all_partitions_to: set[int] = set()  # brokers that get every partition
        self.um_everyone = False  # send UpdateMetadata (live brokers) even without partitions
        self.stop: dict[tuple[int, bool], set[TopicPartition]] = {}

    def leader_and_isr(self, tp: TopicPartition, brokers: tuple[int, ...]) -> None:
        s = self.lai.get(brokers)
        if s is None:
            self.lai[brokers] = {tp: None}
        else:
            s[tp] = None

    def announce(self, tp: TopicPartition) -> None:
        """UpdateMetadata for ``tp`` to every live broker."""
        self.um[tp] = None

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
        states = ctx.states
        assignment = ctx.assignment
        to_delete = ctx.to_delete
        out: list[SendRequest] = []
        brokers = tuple(live[b] for b in sorted(live))

        # LeaderAndIsr: each broker's partitions as groups (the dicts of ``lai``, and for the
        # brokers of ``lai_full`` the partitions of each replica tuple they are in), each
        # partition's entry built once, shared by all its brokers.
        per_broker: dict[int, list[Iterable[TopicPartition]]] = {}
        for reps, tps in self.lai.items():
            for b in reps:
                per_broker.setdefault(b, []).append(tps)
        if self.lai_full:
            for reps, tps in _by_replicas(assignment, to_delete).items():
                for b in dict.fromkeys(reps):
                    if b in self.lai_full:
                        per_broker.setdefault(b, []).append(tps)
        wanted: dict[TopicPartition, None] = {}
        seen: set[int] = set()  # groups are shared by their brokers: each taken once
        for b, groups in per_broker.items():
            if b in live:
                for tps in groups:
                    if id(tps) not in seen:
                        seen.add(id(tps))
                        wanted.update(dict.fromkeys(tps))
        lai_parts: dict[TopicPartition, LeaderAndIsrPartition] = {}
        um_all = bool(self.um or self.um_all_partitions_to or self.um_everyone)
        offline_of: dict[tuple[int, ...], tuple[int, ...]] = {}

        def build(tps: Iterable[TopicPartition], um: bool
                  ) -> tuple[UpdateMetadataPartition, ...]:
            """UpdateMetadata entries for ``tps`` (when ``um``), and the LeaderAndIsr entries
            of the wanted ones among them, in one pass (one lookup per partition)."""
            parts = []
            append = parts.append
            for tp in tps:
                st = states.get(tp)
                replicas = assignment.get(tp)
                if st is None or replicas is None:
                    continue
                li = st.leader_and_isr
                if tp in wanted and tp not in lai_parts:
                    lai_parts[tp] = new_leader_and_isr_partition(
                        tp[0], tp[1], li.controller_epoch, li.leader, li.leader_epoch, li.isr,
                        st.version, replicas)
                if um:
                    offline = offline_of.get(replicas)
                    if offline is None:
                        offline = offline_of[replicas] = tuple(
                            r for r in replicas if r not in live)
                    append(new_update_metadata_partition(
                        tp[0], tp[1], li.controller_epoch,
                        LEADER_DURING_DELETE if tp[0] in to_delete else li.leader,
                        li.leader_epoch, li.isr, st.version, replicas, offline))
            return tuple(parts)

        common = build(sorted(self.um), True) if um_all and self.um else ()
        # UpdateMetadata with every partition, for the live brokers of um_all_partitions_to
        # (failover, a broker that joined): built before the rest of the LeaderAndIsr
        # entries, so the one pass builds those too.
        full: tuple[UpdateMetadataPartition, ...] | None = None
        if um_all and not self.um_all_partitions_to.isdisjoint(live):
            if len(self.um) == len(states) and self.um.keys() == states.keys():
                full = common  # every partition is announced anyway
            else:
                full = build(sorted(states), True)
        build([tp for tp in wanted if tp not in lai_parts], False)
        for b in sorted(per_broker):
            if b not in live:
                continue
            groups = per_broker[b]
            tps = groups[0] if len(groups) == 1 else dict.fromkeys(chain.from_iterable(groups))
            parts = tuple(filter(None, map(lai_parts.get, sorted(tps))))
            if not parts:
                continue
            leaders = sorted(set(map(_leader_of, parts)).intersection(live))
            out.append(SendRequest(b, LeaderAndIsrRequest(
                controller_id, epoch, live[b].epoch, parts,
                tuple(live[x] for x in leaders))))

        # UpdateMetadata: one tuple of entries shared by every broker it goes to.
        if um_all:
            for b in sorted(live):
                parts = full if b in self.um_all_partitions_to else common  # type: ignore[assignment]
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


def _by_replicas(assignment: dict[TopicPartition, tuple[int, ...]], to_delete: set[str]
                 ) -> dict[tuple[int, ...], list[TopicPartition]]:
    """The partitions (not of a topic being deleted) of each replica tuple, in the
    assignment's order: one pass over the partitions, where asking every broker of a full
    LeaderAndIsr for its own took one pass per broker (30 over 1,000,000 partitions)."""
    out: dict[tuple[int, ...], list[TopicPartition]] = {}
    get = out.get
    for tp, reps in assignment.items():
        if to_delete and tp[0] in to_delete:
            continue
        group = get(reps)
        if group is None:
            out[reps] = [tp]
        else:
            group.append(tp)
    return out
