"""CreateTopics, DeleteTopics and CreatePartitions.

Validation is per topic, as Kafka answers it: a bad name (INVALID_TOPIC_EXCEPTION), a name
that exists or will once uncommitted records commit (TOPIC_ALREADY_EXISTS), a name twice in
one request (INVALID_REQUEST), a bad count (INVALID_PARTITIONS), a factor above the usable
brokers (INVALID_REPLICATION_FACTOR), a manual assignment naming an unregistered broker, a
broker twice, or gaps in the partition ids (INVALID_REPLICA_ASSIGNMENT). A new partition's
ISR is its usable replicas and its leader the first of them; the topic id comes from the
request (the shell draws it). Deletion is one ``RemoveTopicRecord`` per topic, allowed during
a reassignment, which ends with the topic."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.placement import place, start_of
from fsm.kraft.records.uuid import ZERO_UUID, Uuid
from fsm.kraft.records.values import (
    NO_LEADER,
    ConfigRecord,
    PartitionRecord,
    RemoveTopicRecord,
    Replicas,
    TopicRecord,
)

if TYPE_CHECKING:
    from collections.abc import Hashable

    from fsm.kraft.controller.quorum_controller import QuorumController

TOPIC_RESOURCE = 2
"""Kafka's ConfigResource type of a topic."""

_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249


class _Refused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _check_name(name: str) -> None:
    if not name or name in (".", "..") or len(name) > MAX_NAME_LENGTH \
            or not _LEGAL.fullmatch(name):
        raise _Refused(ErrorCode.INVALID_TOPIC_EXCEPTION, f"illegal topic name {name!r}")


def usable_racks(ctl: QuorumController) -> dict[int, str | None]:
    return {b: reg.rack for b, reg in ctl.image.brokers.items() if ctl.usable(b)}


def _check_manual(ctl: QuorumController, lists: list[Replicas]) -> None:
    for i, replicas in enumerate(lists):
        if not replicas or len(set(replicas)) != len(replicas):
            raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"partition {i}: replicas {list(replicas)} are empty or repeat")
        unknown = [b for b in replicas if b not in ctl.image.brokers]
        if unknown:
            raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"partition {i}: brokers {unknown} are not registered")
        if not any(ctl.usable(b) for b in replicas):
            raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"partition {i}: every replica is fenced or shutting down")


def _placed(ctl: QuorumController, topic_id: Uuid, count: int, factor: int,
            first: int = 0) -> list[Replicas]:
    if count < 1:
        raise _Refused(ErrorCode.INVALID_PARTITIONS, f"{count} partitions")
    racks = usable_racks(ctl)
    if factor < 1 or factor > len(racks):
        raise _Refused(ErrorCode.INVALID_REPLICATION_FACTOR,
                       f"replication factor {factor} with {len(racks)} usable brokers")
    return place(racks, count, factor, start_of(topic_id, len(racks)), first)


def new_partition(ctl: QuorumController, topic_id: Uuid, pid: int,
                  replicas: Replicas) -> PartitionRecord:
    isr = tuple(b for b in replicas if ctl.usable(b))
    return PartitionRecord(pid, topic_id, replicas, isr, (), (), isr[0] if isr else NO_LEADER,
                           0, 0)


def _topic_records(ctl: QuorumController, t: rq.CreatableTopic, topic_id: Uuid) -> list[Any]:
    _check_name(t.name)
    if t.name in ctl.image.topic_ids:
        raise _Refused(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {t.name!r} already exists")
    if topic_id == ZERO_UUID or topic_id in ctl.image.topics:
        raise _Refused(ErrorCode.INVALID_REQUEST, "the topic id is zero or in use")
    if t.assignments:
        ids = sorted(p for p, _ in t.assignments)
        if ids != list(range(len(ids))):
            raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"partition ids {ids} are not 0..{len(ids) - 1}")
        lists = [r for _, r in sorted(t.assignments)]
        _check_manual(ctl, lists)
    else:
        count = ctl.config.default_num_partitions if t.num_partitions == -1 else t.num_partitions
        factor = (min(ctl.config.default_replication_factor, len(usable_racks(ctl)))
                  if t.replication_factor == -1 else t.replication_factor)
        lists = _placed(ctl, topic_id, count, factor)
    if len(lists) + len(t.configs) + 1 > ctl.config.max_records_per_batch:
        raise _Refused(ErrorCode.INVALID_PARTITIONS, f"{len(lists)} partitions are more than "
                       f"one batch of {ctl.config.max_records_per_batch} records")
    return ([TopicRecord(t.name, topic_id)]
            + [new_partition(ctl, topic_id, i, r) for i, r in enumerate(lists)]
            + [ConfigRecord(TOPIC_RESOURCE, t.name, k, v) for k, v in t.configs])


def create_topics(ctl: QuorumController, token: Hashable, r: rq.CreateTopicsRequest) -> None:
    names = [t.name for t in r.topics]
    results = []
    for i, t in enumerate(r.topics):
        topic_id = r.new_topic_ids[i] if i < len(r.new_topic_ids) else ZERO_UUID
        try:
            if names.count(t.name) > 1:
                raise _Refused(ErrorCode.INVALID_REQUEST, f"topic {t.name!r} is named twice")
            records = _topic_records(ctl, t, topic_id)
        except _Refused as refused:
            results.append(rq.CreatableTopicResult(t.name, ZERO_UUID, refused.error,
                                                   refused.message))
            continue
        parts = [x for x in records if isinstance(x, PartitionRecord)]
        if not r.validate_only:
            ctl.append(records, f"create topic {t.name}")
        results.append(rq.CreatableTopicResult(t.name, topic_id, ErrorCode.NONE, None,
                                               len(parts), len(parts[0].replicas)))
    ctl.reply(token, rq.CreateTopicsResponse(tuple(results)))


def delete_topics(ctl: QuorumController, token: Hashable, r: rq.DeleteTopicsRequest) -> None:
    results = []
    for name in r.names:
        tid = ctl.image.topic_ids.get(name)
        if tid is None:
            results.append(rq.DeletableTopicResult(name, ZERO_UUID,
                                                   ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        ctl.append([RemoveTopicRecord(tid)], f"delete topic {name}")
        results.append(rq.DeletableTopicResult(name, tid, ErrorCode.NONE))
    for tid in r.topic_ids:
        t = ctl.image.topics.get(tid)
        if t is None:
            results.append(rq.DeletableTopicResult(None, tid, ErrorCode.UNKNOWN_TOPIC_ID))
            continue
        ctl.append([RemoveTopicRecord(tid)], f"delete topic {t.name}")
        results.append(rq.DeletableTopicResult(t.name, tid, ErrorCode.NONE))
    ctl.reply(token, rq.DeleteTopicsResponse(tuple(results)))


def create_partitions(ctl: QuorumController, token: Hashable,
                      r: rq.CreatePartitionsRequest) -> None:
    results = []
    for t in r.topics:
        topic = ctl.image.topic(t.name)
        try:
            if topic is None:
                raise _Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {t.name!r}")
            have = len(topic.partitions)
            if t.count <= have:
                raise _Refused(ErrorCode.INVALID_PARTITIONS,
                               f"topic {t.name!r} has {have} partitions; {t.count} adds none")
            if t.count - have > ctl.config.max_records_per_batch:
                raise _Refused(ErrorCode.INVALID_PARTITIONS, "more than one batch of records")
            factor = len(topic.partitions[0].target_replicas())
            if t.assignments is not None:
                lists = list(t.assignments)
                if len(lists) != t.count - have or any(len(x) != factor for x in lists):
                    raise _Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                   f"{len(lists)} assignments of factor {factor} expected "
                                   f"{t.count - have}")
                _check_manual(ctl, lists)
            else:
                lists = _placed(ctl, topic.topic_id, t.count - have, factor, have)
        except _Refused as refused:
            results.append(rq.CreatePartitionsTopicResult(t.name, refused.error, refused.message))
            continue
        if not r.validate_only:
            ctl.append([new_partition(ctl, topic.topic_id, have + i, x)
                        for i, x in enumerate(lists)], f"create partitions of {t.name}")
        results.append(rq.CreatePartitionsTopicResult(t.name, ErrorCode.NONE))
    ctl.reply(token, rq.CreatePartitionsResponse(tuple(results)))
