"""AlterPartition (a leader's ISR change), AlterPartitionReassignments,
ListPartitionReassignments and ElectLeaders.

AlterPartition is checked against the partition as the controller has it: the sender must
be the leader, with the current leader epoch (else FENCED_LEADER_EPOCH) and the current
partition epoch (else INVALID_UPDATE_VERSION); a replica added to the ISR must be usable
(else INELIGIBLE_REPLICA). The controller may answer another ISR than the one asked for, to
finish a reassignment (seed 004). ListPartitionReassignments reads the committed image:
nothing uncommitted is visible."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsm.errors import ErrorCode
from fsm.kraft.controller import partition_change as pc
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.values import NO_LEADER

if TYPE_CHECKING:
    from collections.abc import Hashable

    from fsm.kraft.controller.quorum_controller import QuorumController
    from fsm.kraft.image.partitions import PartitionImage


def _result(item: rq.AlterPartitionItem, error: ErrorCode,
            p: PartitionImage | None = None) -> rq.AlterPartitionResult:
    if p is None:
        return rq.AlterPartitionResult(item.topic_id, item.partition_id, error)
    return rq.AlterPartitionResult(item.topic_id, item.partition_id, error, p.leader,
                                   p.leader_epoch, p.isr, p.partition_epoch)


def _alter_one(ctl: QuorumController, broker: int, item: rq.AlterPartitionItem
               ) -> tuple[rq.AlterPartitionResult, Any]:
    t = ctl.image.topics.get(item.topic_id)
    if t is None:
        return _result(item, ErrorCode.UNKNOWN_TOPIC_ID), None
    p = t.partitions.get(item.partition_id)
    if p is None:
        return _result(item, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), None
    if p.leader != broker:
        return _result(item, ErrorCode.NOT_LEADER_OR_FOLLOWER), None
    if item.leader_epoch != p.leader_epoch:
        return _result(item, ErrorCode.FENCED_LEADER_EPOCH), None
    if item.partition_epoch != p.partition_epoch:
        return _result(item, ErrorCode.INVALID_UPDATE_VERSION), None
    isr = item.new_isr
    if broker not in isr or len(set(isr)) != len(isr):
        return _result(item, ErrorCode.INVALID_REQUEST), None
    if any(b not in p.replicas or (b not in p.isr and not ctl.usable(b)) for b in isr):
        return _result(item, ErrorCode.INELIGIBLE_REPLICA), None
    new_isr, leader, replicas = pc.target_isr(p, isr, ctl.usable)
    done = replicas is not None
    rec = pc.change(item.topic_id, item.partition_id, p, isr=new_isr, leader=leader,
                    replicas=replicas, adding=() if done else None,
                    removing=() if done else None)
    after = p if rec is None else p.merge(rec)
    return _result(item, ErrorCode.NONE, after), rec


def alter_partition(ctl: QuorumController, token: Hashable, r: rq.AlterPartitionRequest) -> None:
    reg = ctl.image.brokers.get(r.broker_id)
    if reg is None or reg.epoch != r.broker_epoch:
        ctl.reply(token, rq.AlterPartitionResponse(ErrorCode.STALE_BROKER_EPOCH))
        return
    results, records = [], []
    for item in r.partitions:
        result, rec = _alter_one(ctl, r.broker_id, item)
        results.append(result)
        if rec is not None:
            records.append(rec)
    ctl.append(records, f"alter partition from broker {r.broker_id}")
    ctl.reply(token, rq.AlterPartitionResponse(ErrorCode.NONE, tuple(results)))


def alter_reassignments(ctl: QuorumController, token: Hashable,
                        r: rq.AlterPartitionReassignmentsRequest) -> None:
    results, records = [], []
    for item in r.partitions:
        tid = ctl.image.topic_ids.get(item.topic)
        p = None if tid is None else ctl.image.topics[tid].partitions.get(item.partition_id)
        if tid is None or p is None:
            results.append(rq.ReassignablePartitionResult(
                item.topic, item.partition_id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        try:
            if item.replicas is None:
                if not p.reassigning:
                    results.append(rq.ReassignablePartitionResult(
                        item.topic, item.partition_id, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS))
                    continue
                rec = pc.cancel(tid, item.partition_id, p, ctl.usable)
            else:
                target = item.replicas
                unknown = [b for b in target if b not in ctl.image.brokers]
                if not target or len(set(target)) != len(target) or unknown:
                    results.append(rq.ReassignablePartitionResult(
                        item.topic, item.partition_id, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        f"replicas {list(target)}: empty, repeated or unregistered"))
                    continue
                rec = pc.reassign(tid, item.partition_id, p, target, ctl.usable)
        except pc.EmptyIsr as empty:
            results.append(rq.ReassignablePartitionResult(
                item.topic, item.partition_id, ErrorCode.INVALID_REPLICA_ASSIGNMENT, str(empty)))
            continue
        if rec is not None:
            records.append(rec)
        results.append(rq.ReassignablePartitionResult(item.topic, item.partition_id,
                                                      ErrorCode.NONE))
    ctl.append(records, "alter partition reassignments")
    ctl.reply(token, rq.AlterPartitionReassignmentsResponse(ErrorCode.NONE, tuple(results)))


def list_reassignments(ctl: QuorumController, token: Hashable,
                       r: rq.ListPartitionReassignmentsRequest) -> None:
    image = ctl.committed
    wanted = None if r.partitions is None else set(r.partitions)
    out = []
    for name in sorted(image.topic_ids):
        t = image.topics[image.topic_ids[name]]
        for pid in sorted(t.partitions):
            p = t.partitions[pid]
            if p.reassigning and (wanted is None or (name, pid) in wanted):
                out.append(rq.OngoingReassignment(name, pid, p.replicas, p.adding_replicas,
                                                  p.removing_replicas))
    ctl.respond_now(token, rq.ListPartitionReassignmentsResponse(ErrorCode.NONE, tuple(out)))


def _elect_one(ctl: QuorumController, name: str, pid: int, p: PartitionImage,
               election_type: int) -> tuple[ErrorCode, Any]:
    tid = ctl.image.topic_ids[name]
    if election_type == rq.PREFERRED:
        preferred = p.replicas[0]
        if p.leader == preferred:
            return ErrorCode.ELECTION_NOT_NEEDED, None
        if preferred not in p.isr or not ctl.usable(preferred):
            return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, None
        return ErrorCode.NONE, pc.change(tid, pid, p, leader=preferred)
    if p.leader != NO_LEADER:
        return ErrorCode.ELECTION_NOT_NEEDED, None
    clean = pc.elect(p.replicas, p.isr, ctl.usable)
    if clean != NO_LEADER:
        return ErrorCode.NONE, pc.change(tid, pid, p, leader=clean)
    unclean = next((b for b in p.target_replicas() if ctl.usable(b)), NO_LEADER)
    if unclean == NO_LEADER:
        return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, None
    return ErrorCode.NONE, pc.change(tid, pid, p, leader=unclean, isr=(unclean,))


def elect_leaders(ctl: QuorumController, token: Hashable, r: rq.ElectLeadersRequest) -> None:
    if r.election_type not in (rq.PREFERRED, rq.UNCLEAN):
        ctl.reply(token, rq.ElectLeadersResponse(ErrorCode.INVALID_REQUEST))
        return
    every = r.partitions is None
    wanted = ([(n, pid) for n in sorted(ctl.image.topic_ids)
               for pid in sorted(ctl.image.topics[ctl.image.topic_ids[n]].partitions)]
              if r.partitions is None else list(r.partitions))
    results, records = [], []
    for name, pid in wanted:
        t = ctl.image.topic(name)
        p = None if t is None else t.partitions.get(pid)
        if p is None:
            results.append(rq.ElectionResult(name, pid, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        error, rec = _elect_one(ctl, name, pid, p, r.election_type)
        if rec is not None:
            records.append(rec)
        if not every or error == ErrorCode.NONE:
            results.append(rq.ElectionResult(name, pid, error))
    ctl.append(records, "elect leaders")
    ctl.reply(token, rq.ElectLeadersResponse(ErrorCode.NONE, tuple(results)))
