"""The live audit: read a cluster's ZooKeeper state in bulk, check the snapshot invariants.

Three layers, each usable alone:

- ``read_zk_state(client)`` -> ``ZkState``: every znode the controller reads on failover
  (controller, epoch, brokers, topics, partition states, admin requests, notifications), fetched
  with ``multi_read`` in three round trips' worth of batches, decoded with the codecs. A znode
  that does not decode is kept as a ``ZnodeDecodeError`` in ``ZkState.decode_errors`` and left
  out of the rest; reading goes on. ``adapters.admin.topics`` (describe) uses the same reader.
- ``view_from_zookeeper(client)`` / ``view_from_state(state)`` -> the invariant catalogue's
  ``GlobalView`` with the parts a live audit can see (ZooKeeper data); the controllers' and
  brokers' parts are absent.
- ``audit(client)`` / ``audit_state(state)`` -> ``list[AuditViolation]``: one ``znode-decodes``
  violation per undecodable znode, the catalogue's ``check_state(view)``, the catalogue's
  quiescent invariants a snapshot can still check (``VIEW_CHECKS``: a leader is a registered
  broker or -1), and the checks over ``ZkState`` that need zxids, which ``GlobalView`` lacks
  (``STATE_CHECKS``: ``/controller`` created by the multi that bumped ``/controller_epoch``).

Extension point (brokers' metadata over the wire, a later issue): pass ``sources`` to
``audit``/``audit_state``. A ``ViewSource`` is called with the ``ZkState`` and returns fields of
``GlobalView`` to fill in -- typically ``{"brokers": (BrokerView(..., metadata=MetadataView(...)),
...)}`` built from MetadataResponses of the registered brokers' endpoints (``state.brokers``);
the catalogue's broker invariants then apply with no change here. ``checks`` adds checks of
their own (``Source``: ``ZkState -> list[Violation]``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError

from adapters.zookeeper.codec import decode
from adapters.zookeeper.codec.errors import ZnodeDecodeError
from adapters.zookeeper.codec.values import LogDirEventZnode, broker_info
from adapters.zookeeper.multi_read import children_many, read_many
from fsm import zk_paths
from fsm.values import (
    BrokerInfo,
    PartitionStateZk,
    TopicAssignment,
    TopicPartition,
)
from fsm.znodes import (
    ControllerZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)
from invariants import Violation, by_name, check_state
from invariants.registry import Invariant
from invariants.view import GlobalView, PartitionStateView, ZkView

ZNODE_DECODES = "znode-decodes"
"""The audit's own check: every znode of Kafka's layout holds what Kafka writes there."""


# ---------------------------------------------------------------- the snapshot


@dataclass(frozen=True)
class ZkState:
    """One bulk read of the cluster's znodes (not atomic: ZooKeeper has no snapshot reads)."""

    controller: ControllerZnode | None = None
    controller_czxid: int | None = None
    """czxid of ``/controller``: the zxid of the election ``multi``."""
    controller_epoch: int | None = None
    controller_epoch_version: int | None = None
    """``/controller_epoch``'s znode version: the fencing token."""
    controller_epoch_mzxid: int | None = None
    """mzxid of ``/controller_epoch``: the zxid of the multi that last incremented it."""
    broker_ids: tuple[int, ...] = ()
    """Every registered broker id (children of ``/brokers/ids``), decodable or not."""
    brokers: Mapping[int, BrokerInfo] = field(default_factory=dict)
    """The registrations that decoded; ``epoch`` is the znode's czxid."""
    broker_epochs: Mapping[int, int] = field(default_factory=dict)
    """Every registered broker's epoch (czxid), its registration decodable or not."""
    topic_names: tuple[str, ...] = ()
    """Every topic read (children of ``/brokers/topics``, or the topics asked for that exist)."""
    topics: Mapping[str, TopicAssignment] = field(default_factory=dict)
    partition_states: Mapping[TopicPartition, PartitionStateZk] = field(default_factory=dict)
    partition_czxids: Mapping[TopicPartition, int] = field(default_factory=dict)
    topics_to_delete: frozenset[str] = frozenset()
    reassignment: ReassignmentZnode | None = None
    preferred_election: PreferredElectionZnode | None = None
    isr_changes: Mapping[str, IsrChangeZnode] = field(default_factory=dict)
    log_dir_events: Mapping[str, LogDirEventZnode] = field(default_factory=dict)
    decode_errors: tuple[ZnodeDecodeError, ...] = ()

    def error_for(self, path: str) -> ZnodeDecodeError | None:
        return next((e for e in self.decode_errors if e.path == path), None)


class _Decoder:
    def __init__(self) -> None:
        self.errors: list[ZnodeDecodeError] = []

    def value(self, path: str, result: Any) -> tuple[Any, Any] | None:
        """(decoded value, stat) or None for a missing or undecodable znode."""
        if isinstance(result, NoNodeError):
            return None
        if isinstance(result, KazooException):
            raise result
        data, stat = result
        try:
            return decode(path, data), stat
        except ZnodeDecodeError as exc:
            self.errors.append(exc)
            return None

    def children(self, path: str, result: Any) -> list[str]:
        if isinstance(result, NoNodeError):
            return []
        if isinstance(result, KazooException):
            raise result
        return sorted(result)


def read_zk_state(
    client: KazooClient,
    topics: Iterable[str] | None = None,
    *,
    notifications: bool = True,
    timeout: float | None = 30.0,
) -> ZkState:
    """Read the cluster's znodes in bulk. ``topics`` limits topic reads to those names (missing
    ones are left out of ``topic_names``); ``notifications=False`` skips the ISR-change and
    log-dir notification queues. Connection problems raise kazoo's exceptions."""
    d = _Decoder()
    roots = read_many(
        client,
        [
            zk_paths.CONTROLLER,
            zk_paths.CONTROLLER_EPOCH,
            zk_paths.REASSIGN_PARTITIONS,
            zk_paths.PREFERRED_REPLICA_ELECTION,
        ],
        timeout=timeout,
    )
    parents = [zk_paths.BROKER_IDS, zk_paths.TOPICS, zk_paths.DELETE_TOPICS]
    if notifications:
        parents += [zk_paths.ISR_CHANGE_NOTIFICATION, zk_paths.LOG_DIR_EVENT_NOTIFICATION]
    kids = {p: d.children(p, r) for p, r in children_many(client, parents, timeout=timeout).items()}

    controller = d.value(zk_paths.CONTROLLER, roots[zk_paths.CONTROLLER])
    epoch = d.value(zk_paths.CONTROLLER_EPOCH, roots[zk_paths.CONTROLLER_EPOCH])
    reassign = d.value(zk_paths.REASSIGN_PARTITIONS, roots[zk_paths.REASSIGN_PARTITIONS])
    preferred = d.value(
        zk_paths.PREFERRED_REPLICA_ELECTION, roots[zk_paths.PREFERRED_REPLICA_ELECTION]
    )

    names = kids[zk_paths.TOPICS]
    if topics is not None:
        present = set(names)
        names = [t for t in dict.fromkeys(topics) if t in present]
    broker_paths = [f"{zk_paths.BROKER_IDS}/{c}" for c in kids[zk_paths.BROKER_IDS]]
    isr_paths = [zk_paths.isr_change(c) for c in kids.get(zk_paths.ISR_CHANGE_NOTIFICATION, [])]
    log_dir_paths = [
        f"{zk_paths.LOG_DIR_EVENT_NOTIFICATION}/{c}"
        for c in kids.get(zk_paths.LOG_DIR_EVENT_NOTIFICATION, [])
    ]
    topic_paths = [zk_paths.topic(t) for t in names]
    data = read_many(
        client,
        broker_paths + topic_paths + isr_paths + log_dir_paths,
        expected_znode_bytes=4096,
        timeout=timeout,
    )
    partition_kids = children_many(client, [zk_paths.partitions(t) for t in names], timeout=timeout)

    broker_ids: list[int] = []
    brokers: dict[int, BrokerInfo] = {}
    broker_epochs: dict[int, int] = {}
    for path in broker_paths:
        child = path.rsplit("/", 1)[1]
        if child.isascii() and child.isdigit():
            broker_ids.append(int(child))
            if isinstance(data[path], tuple):
                broker_epochs[int(child)] = data[path][1].czxid
        got = d.value(path, data[path])
        if got is not None:
            brokers[got[0].broker_id] = broker_info(got[0], got[1].czxid)

    assignments: dict[str, TopicAssignment] = {}
    for t in names:
        got = d.value(zk_paths.topic(t), data[zk_paths.topic(t)])
        if got is not None:
            assignments[t] = got[0]

    state_paths: dict[str, TopicPartition] = {}
    for t in names:
        for child in d.children(zk_paths.partitions(t), partition_kids[zk_paths.partitions(t)]):
            if child.isascii() and child.isdigit() and (child == "0" or child[0] != "0"):
                state_paths[zk_paths.partition_state(t, int(child))] = (t, int(child))
            else:
                d.errors.append(
                    ZnodeDecodeError(f"{zk_paths.partitions(t)}/{child}", "is not a partition id")
                )
    states: dict[TopicPartition, PartitionStateZk] = {}
    czxids: dict[TopicPartition, int] = {}
    for path, result in read_many(client, list(state_paths), timeout=timeout).items():
        got = d.value(path, result)
        if got is not None:
            states[state_paths[path]] = PartitionStateZk(got[0], got[1].version)
            czxids[state_paths[path]] = got[1].czxid

    isr_changes = {p: v for p in isr_paths if (v := _only(d.value(p, data[p]))) is not None}
    log_dirs = {p: v for p in log_dir_paths if (v := _only(d.value(p, data[p]))) is not None}
    return ZkState(
        controller=controller[0] if controller else None,
        controller_czxid=controller[1].czxid if controller else None,
        controller_epoch=epoch[0].epoch if epoch else None,
        controller_epoch_version=epoch[1].version if epoch else None,
        controller_epoch_mzxid=epoch[1].mzxid if epoch else None,
        broker_ids=tuple(sorted(broker_ids)),
        brokers=brokers,
        broker_epochs=broker_epochs,
        topic_names=tuple(names),
        topics=assignments,
        partition_states=dict(sorted(states.items())),
        partition_czxids=czxids,
        topics_to_delete=frozenset(kids[zk_paths.DELETE_TOPICS]),
        reassignment=reassign[0] if reassign else None,
        preferred_election=preferred[0] if preferred else None,
        isr_changes=isr_changes,
        log_dir_events=log_dirs,
        decode_errors=tuple(d.errors),
    )


def _only(got: tuple[Any, Any] | None) -> Any:
    return got[0] if got is not None else None


# ---------------------------------------------------------------- the GlobalView


def view_from_state(state: ZkState, **parts: Any) -> GlobalView:
    """The catalogue's ``GlobalView`` of ``state``: ZooKeeper's part only (controllers' and
    brokers' in-memory state are ``None``: a live audit cannot see them; ``pending`` is None:
    unknown, so quiescent invariants are not checked). ``parts`` overrides fields of the view
    (the extension point for brokers' metadata read over the wire)."""
    zk = ZkView(
        controller=state.controller.broker_id if state.controller else None,
        controller_epoch=state.controller_epoch,
        controller_epoch_version=state.controller_epoch_version,
        brokers=tuple(
            sorted(
                {
                    **{b: 0 for b in state.broker_ids},
                    **state.broker_epochs,
                    **{b: info.epoch for b, info in state.brokers.items()},
                }.items()
            )
        ),
        assignments=tuple(
            sorted(
                ((t, p), replicas)
                for t, assignment in state.topics.items()
                for p, replicas in assignment.partitions
            )
        ),
        partitions=tuple(
            (
                tp,
                PartitionStateView(
                    leader=s.leader_and_isr.leader,
                    leader_epoch=s.leader_and_isr.leader_epoch,
                    isr=s.leader_and_isr.isr,
                    controller_epoch=s.leader_and_isr.controller_epoch,
                    version=s.version,
                    czxid=state.partition_czxids.get(tp, 0),
                ),
            )
            for tp, s in sorted(state.partition_states.items())
        ),
        topics_pending_deletion=tuple(sorted(state.topics_to_delete)),
        reassignments_pending=tuple(
            sorted(state.reassignment.partitions) if state.reassignment else ()
        ),
        isr_change_notifications=tuple(sorted(state.isr_changes)),
    )
    return GlobalView(**{"zk": zk, "controllers": None, "brokers": None, **parts})


def view_from_zookeeper(client: KazooClient) -> GlobalView:
    """One bulk read of ``client``'s cluster as a ``GlobalView`` (undecodable znodes left out;
    use ``read_zk_state`` + ``audit_state`` to see them)."""
    return view_from_state(read_zk_state(client))


# ---------------------------------------------------------------- checks beyond check_state


VIEW_CHECKS: tuple[Invariant, ...] = (by_name("leader_is_registered_or_none"),)
"""Catalogue invariants the audit runs besides ``check_state``: quiescent ones that a snapshot
can check although it cannot tell whether something is in flight (each says, in its
documentation, what a one-off violation may mean)."""


def controller_elected_with_epoch(state: ZkState) -> list[Violation]:
    """``/controller`` and ``/controller_epoch`` agree: the controller won by the one ``multi``
    that created ``/controller`` and incremented ``/controller_epoch``, so ``/controller``'s
    czxid is ``/controller_epoch``'s mzxid; and ``/controller`` never exists without
    ``/controller_epoch``.

    Kept here, over ``ZkState``, rather than in the invariant catalogue: it compares zxids
    (``/controller``'s czxid, ``/controller_epoch``'s mzxid), and ``GlobalView``'s ``ZkView``
    holds no zxids -- nor does the model checker's in-memory ZooKeeper give its znodes
    ZooKeeper's zxids to put there -- so it cannot be a predicate over ``GlobalView`` yet."""
    name = "controller_elected_with_epoch"
    if state.controller is None:
        return []
    who = f"/controller: broker {state.controller.broker_id}"
    if state.controller_epoch is None:
        return [Violation(name, f"{who} is controller but /controller_epoch is missing")]
    if state.controller_czxid != state.controller_epoch_mzxid:
        return [
            Violation(
                name,
                f"{who} was created at zxid {_hex(state.controller_czxid)} but "
                f"/controller_epoch (epoch {state.controller_epoch}) was last set at zxid "
                f"{_hex(state.controller_epoch_mzxid)}: the election did not increment the "
                "epoch in the same multi",
            )
        ]
    return []


def _hex(zxid: int | None) -> str:
    return "none" if zxid is None else f"0x{zxid:x}"


STATE_CHECKS: tuple[Callable[[ZkState], list[Violation]], ...] = (controller_elected_with_epoch,)
"""Checks that need more than ``GlobalView`` holds (zxids)."""


# ---------------------------------------------------------------- the audit


@dataclass(frozen=True, slots=True)
class AuditViolation:
    """One row of the audit: the invariant, the entity (``t-0``, a znode path, ``/controller``)
    and the detail."""

    invariant: str
    entity: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"invariant": self.invariant, "entity": self.entity, "detail": self.detail}


_ENTITY = re.compile(
    r"(?P<entity>/\S*|[A-Za-z0-9._-]+-[0-9]+|broker [0-9]+|controllers?"
    r" [0-9]+): (?P<rest>.*)"
)


def _row(v: Violation) -> AuditViolation:
    m = _ENTITY.fullmatch(v.detail)
    if m:
        return AuditViolation(v.invariant, m["entity"], m["rest"])
    return AuditViolation(v.invariant, "-", v.detail)


Source = Callable[[ZkState], list[Violation]]
"""An extra check run with the snapshot."""

ViewSource = Callable[[ZkState], Mapping[str, Any]]
"""More of the cluster for the view: ``GlobalView`` field name -> value (e.g. ``brokers``)."""


def audit_state(
    state: ZkState, checks: Sequence[Source] = (), sources: Sequence[ViewSource] = ()
) -> list[AuditViolation]:
    """Every violation in ``state``: undecodable znodes (``znode-decodes``), the catalogue's
    state invariants over the view (``view_from_state`` plus what ``sources`` add), the
    catalogue's ``VIEW_CHECKS``, the zxid checks (``STATE_CHECKS``), then ``checks``."""
    rows = [AuditViolation(ZNODE_DECODES, e.path, e.reason) for e in state.decode_errors]
    parts: dict[str, Any] = {}
    for source in sources:
        parts.update(source(state))
    view = view_from_state(state, **parts)
    found = list(check_state(view))
    for inv in VIEW_CHECKS:
        found += inv.check(view)
    for check in (*STATE_CHECKS, *checks):
        found += check(state)
    return rows + [_row(v) for v in found]


def audit(
    client: KazooClient, checks: Sequence[Source] = (), sources: Sequence[ViewSource] = ()
) -> tuple[ZkState, list[AuditViolation]]:
    """Read ``client``'s cluster (bulk) and audit it."""
    state = read_zk_state(client)
    return state, audit_state(state, checks, sources)
