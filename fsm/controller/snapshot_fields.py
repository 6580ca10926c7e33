"""The layout of ``Controller.snapshot()``, field by field (``fsm.snapshot_fields``).

The producers are ``Controller.snapshot`` (``ControllerSnapshotFields``),
``ControllerContext.snapshot`` (``ContextFields`` and the values of its dicts) and
``records.encode_round`` (``RoundFields``, ``DecisionFields``); a round's ops and their data
are ``(class name, *fields)`` in the declaration order of the op's and the data's dataclass
(``records._encode_op``), so those classes name their fields themselves. A round's
followups (``plan``) are small tuples whose first field names their kind:
``FOLLOWUP_FIELDS``. The snapshots stay plain tuples; these classes only name positions.
"""

from __future__ import annotations

from typing import NamedTuple

from fsm.snapshot_fields import BrokerInfoFields, positions


class ControllerSnapshotFields(NamedTuple):
    """``Controller.snapshot()``."""

    active: bool
    loaded: bool  # the cluster was loaded since it became active
    epoch: int
    fence_version: int  # the znode version of /controller_epoch its writes check
    seen: tuple[int, int]  # /controller_epoch's value and version as last read
    session: str  # the ``ZkClientState`` value
    round: tuple | None  # ``RoundFields``: the write it awaits, or None
    last_token: int
    context: tuple  # ``ContextFields``


class RoundFields(NamedTuple):
    """``records.encode_round``: a ``Round``."""

    token: int
    kind: str  # "election" | "partitions"
    decisions: tuple  # ``DecisionFields`` each
    ops: tuple  # ``(op class name, *op fields)`` each, the data ``(class name, *fields)``
    followups: tuple  # ``(kind, ...)`` each: ``FOLLOWUP_FIELDS``
    retry: bool
    election: tuple[int, int]  # (epoch, epoch_version) read before the attempt


class DecisionFields(NamedTuple):
    """One decision of a round: a partition and its ``Decision``, the ``LeaderAndIsr``
    flattened in."""

    tp: tuple[str, int]
    kind: str  # ``records.INIT``, ``OFFLINE``, ``SHUTDOWN`` (``arg``: the broker) ...
    arg: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    expected_version: int
    create: bool


class ContextFields(NamedTuple):
    """``ControllerContext.snapshot()``: each dict a tuple of ``(key, value)`` sorted by key,
    each set a sorted tuple."""

    live: tuple  # ``BrokerInfoFields`` each, by broker id
    shutting_down: tuple[int, ...]
    topics: tuple  # ``(topic, partition count)``
    assignment: tuple  # ``(tp, replicas)``
    states: tuple  # ``(tp, PartitionStateFields)``
    partition_states: tuple  # ``(tp, PartitionState value)``
    replica_states: tuple  # ``(tp, ((broker, ReplicaState value), ...))``
    reassignments: tuple  # ``(tp, target replicas)``
    to_delete: tuple[str, ...]
    ineligible: tuple[str, ...]
    owed: tuple  # ``(tp, OwedFields)``


class PartitionStateFields(NamedTuple):
    """A ``PartitionStateZk`` in ``ContextFields.states``."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    version: int  # the partition state znode's version


class OwedFields(NamedTuple):
    """A decision owed for a partition (``ContextFields.owed``): given up after a write
    failed twice, decided again on the next event once ``due``."""

    kind: str
    arg: int  # the broker for a "shutdown" decision
    due: bool


FOLLOWUP_FIELDS: dict[str, tuple[str, ...]] = {
    "stop": ("kind", "broker", "tp", "delete"),
    "reply": ("kind", "broker", "correlation"),
    "join": ("kind", "broker"),
    "um-everyone": ("kind",),
    "deleting": ("kind", "topic"),
    "full": ("kind",),
    "online": ("kind", "tp"),
    "expand": ("kind", "tp", "replicas"),
    "expanded": ("kind", "tp"),
    "complete": ("kind", "tp"),
}
"""The fields of a round's followups by kind (``plan``; ``correlation``: the
ControlledShutdown's, the broker epoch)."""

CONTROLLER = positions(ControllerSnapshotFields)
ROUND = positions(RoundFields)
DECISION = positions(DecisionFields)
CONTEXT = positions(ContextFields)
PARTITION_STATE = positions(PartitionStateFields)
OWED = positions(OwedFields)

__all__ = [
    "CONTEXT", "CONTROLLER", "DECISION", "FOLLOWUP_FIELDS", "OWED", "PARTITION_STATE", "ROUND",
    "BrokerInfoFields", "ContextFields", "ControllerSnapshotFields", "DecisionFields",
    "OwedFields", "PartitionStateFields", "RoundFields",
]
