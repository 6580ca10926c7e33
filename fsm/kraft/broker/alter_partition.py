"""The leader's ISR changes (AlterPartition, API 56), at most one in flight per partition.

Each ``IsrChangeWanted`` of an ``IsrChangesWanted`` from the replication layer (one or
several; those sendable go out as one request) becomes a wish, remembered with the leader
epoch it was made in. A wish is sent when nothing is in flight for its partition, as an
``AlterPartitionItem`` carrying the leader epoch and partition epoch this broker holds (the
image's, or a newer AlterPartition answer's); a wish made while one is in flight waits, and
a later wish replaces it. A wish is dropped, never sent, once the broker no longer leads the
partition in the epoch it was made in, or when it asks for the ISR the partition already has.

The answer:

* success: the result's leader, ISR and epochs are what the controller committed (it may
  differ from what was asked: seed 004's reassignment prunes the ISR when it completes); when
  it is still this broker's leadership in the same leader epoch and newer than what the
  broker holds, the broker takes it (``UpdateIsr``) without waiting for the record;
* FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_ID (or any other error of the
  partition): the broker's view is stale. The wish and any queued one are dropped; the
  metadata will say what happened and the replication layer asks again if it still wants a
  change. Never resent with the stale epochs;
* a request-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH...), a missing result, or a lost
  request (``ControllerUnreachable``): the wish goes back in the queue (unless a newer one is
  there) and is sent again at the next ``HeartbeatDue``, rebuilt from the epochs held then.

Wishes wait while the broker has no broker epoch (re-registering).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fsm.errors import ErrorCode
from fsm.kraft.broker.effects import KRaftBrokerEffect, SendToController
from fsm.kraft.broker.events import IsrChangesWanted, IsrChangeWanted, PartitionKey
from fsm.kraft.broker.replicas import LocalReplica, Role, reconcile
from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller.requests import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResult,
)
from fsm.kraft.records.values import Replicas

if TYPE_CHECKING:
    from fsm.kraft.broker.core import KRaftBroker

S = KRaftBrokerState
_LEADING = frozenset({S.RECOVERY, S.RUNNING, S.PENDING_CONTROLLED_SHUTDOWN})


@dataclass(frozen=True, slots=True)
class Wish:
    new_isr: Replicas
    leader_epoch: int


def isr_changes_wanted(core: KRaftBroker, ev: IsrChangesWanted) -> list[KRaftBrokerEffect]:
    """Each change a wish (or ignored, alone); those sendable go in one request."""
    changes = ev.changes
    if not isinstance(changes, tuple) or \
            not all(isinstance(c, IsrChangeWanted) for c in changes):
        return core._ignore("IsrChangesWanted: not a tuple of IsrChangeWanted")
    keys = [key for c in changes if (key := _wish(core, c)) is not None]
    return _send(core, keys)


def _wish(core: KRaftBroker, ev: IsrChangeWanted) -> PartitionKey | None:
    """Remember the wish (replacing a queued one); its partition, or None if ignored."""
    key = (ev.topic_id, ev.partition_id)
    have = core._replicas.get(key)
    if core._state not in _LEADING or have is None or have.role is not Role.LEADER:
        core._ignore("IsrChangeWanted: not the leader")
        return None
    isr = ev.new_isr
    if not isinstance(isr, tuple) or not isr or len(set(isr)) != len(isr) \
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in isr):
        core._ignore(f"IsrChangeWanted: malformed ISR {isr!r}")
        return None
    core._alter_wanted[key] = Wish(isr, have.leader_epoch)
    return key


def answered(core: KRaftBroker, request: AlterPartitionRequest,
             response: AlterPartitionResponse) -> list[KRaftBrokerEffect]:
    items = _ours(core, request)
    if not items:
        return core._ignore("AlterPartition answer")
    results = {(r.topic_id, r.partition_id): r for r in response.partitions}
    effects: list[KRaftBrokerEffect] = []
    accepted = []
    for key, item in items:
        result = None if response.error != ErrorCode.NONE else results.get(key)
        if result is None:
            core._alter_wanted.setdefault(key, Wish(item.new_isr, item.leader_epoch))
        elif result.error == ErrorCode.NONE:
            effects += _accepted(core, key, result)
            accepted.append(key)
        else:
            core._alter_wanted.pop(key, None)
            core._notes.append(f"AlterPartition {key}: error {result.error!r}; "
                               f"waiting for metadata")
    return effects + _send(core, accepted)


def lost(core: KRaftBroker, request: AlterPartitionRequest) -> list[KRaftBrokerEffect]:
    items = _ours(core, request)
    if not items:
        return core._ignore("lost AlterPartition")
    for key, item in items:
        core._alter_wanted.setdefault(key, Wish(item.new_isr, item.leader_epoch))
    return []


def retry(core: KRaftBroker) -> list[KRaftBrokerEffect]:
    """The queued wishes, sent again (``HeartbeatDue``)."""
    if not core._alter_wanted or core._epoch is None:
        return []
    return _send(core, sorted(core._alter_wanted))


def forget_stale(core: KRaftBroker, keys: Iterable[PartitionKey]) -> None:
    """After replay: drop the queued wishes of partitions no longer led in their epoch."""
    if not core._alter_wanted:  # the usual case: nothing queued to look at
        return
    for key in keys:
        wish = core._alter_wanted.get(key)
        if wish is not None and not _leads(core._replicas.get(key), wish.leader_epoch):
            del core._alter_wanted[key]


def _ours(core: KRaftBroker,
          request: AlterPartitionRequest) -> list[tuple[PartitionKey, AlterPartitionItem]]:
    """The items of ``request`` still in flight (clearing them), in request order."""
    out = []
    for item in request.partitions:
        key = (item.topic_id, item.partition_id)
        if core._alter_inflight.get(key) == request:
            del core._alter_inflight[key]
            out.append((key, item))
    return out


def _leads(have: LocalReplica | None, leader_epoch: int) -> bool:
    return have is not None and have.role is Role.LEADER and have.leader_epoch == leader_epoch


def _accepted(core: KRaftBroker, key: PartitionKey,
              result: AlterPartitionResult) -> list[KRaftBrokerEffect]:
    have = core._replicas.get(key)
    if result.leader_id != core.config.broker_id or not _leads(have, result.leader_epoch):
        return []  # the leadership moved on: the metadata will tell
    assert have is not None
    want = LocalReplica(Role.LEADER, result.leader_id, result.leader_epoch,
                        result.partition_epoch, result.isr)
    return reconcile(core._replicas, key, want)


def _send(core: KRaftBroker, keys: Iterable[PartitionKey]) -> list[KRaftBrokerEffect]:
    if core._epoch is None:
        return []
    items = []
    for key in keys:
        wish = core._alter_wanted.get(key)
        if wish is None or key in core._alter_inflight:
            continue
        have = core._replicas.get(key)
        del core._alter_wanted[key]
        if not _leads(have, wish.leader_epoch):
            continue
        assert have is not None
        if wish.new_isr == have.isr:
            continue
        items.append(AlterPartitionItem(key[0], key[1], have.leader_epoch, wish.new_isr,
                                        have.partition_epoch))
    if not items:
        return []
    request = AlterPartitionRequest(core.config.broker_id, core._epoch, tuple(items))
    for item in items:
        core._alter_inflight[(item.topic_id, item.partition_id)] = request
    return [SendToController(request)]
