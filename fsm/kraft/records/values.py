"""The metadata records as values: one frozen dataclass per record type.

Types 0-14 are seed 004's; 17 (``BrokerRegistrationChangeRecord``) is the released record
that carries a registered broker's fenced and controlled-shutdown flags (KIP-841), which seed
004 kept as soft state but the image keeps (issue 23). Where the released schema differs from
the seed's draft we follow the release, because the dump-log JSON and the bytes must match
Kafka's: ``TopicRecord.name``, ``FenceBrokerRecord.id``/``epoch``, ``PartitionRecord`` carries
``partition_epoch``, ``RegisterBrokerRecord`` carries ``fenced`` (v0) and
``in_controlled_shutdown`` (v1), ``ConfigRecord.value`` is nullable (null deletes the key).

Field names are Kafka's in snake_case; Kafka's JSON name is the camelCase of each. Integer
widths (int8 ... int64, uint16) and which fields are tagged are declared beside each class in
``SCHEMA`` (see ``fsm.kraft.records.schema``, written with the codec); the values themselves are plain Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from fsm.kraft.records.uuid import Uuid

NO_LEADER = -1
"""``leader: -1``: the partition has no leader."""

LEADER_UNCHANGED = -2
"""``PartitionChangeRecord.leader`` default: the leader did not change."""

Replicas = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    name: str
    host: str
    port: int
    security_protocol: int = 0  # Kafka's SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL


@dataclass(frozen=True, slots=True)
class BrokerFeature:
    name: str
    min_supported_version: int
    max_supported_version: int


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    TYPE: ClassVar[int] = 0
    broker_id: int
    incarnation_id: Uuid
    broker_epoch: int
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False  # version 1+


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord:
    TYPE: ClassVar[int] = 1
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class TopicRecord:
    TYPE: ClassVar[int] = 2
    name: str
    topic_id: Uuid


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    TYPE: ClassVar[int] = 3
    partition_id: int
    topic_id: Uuid
    replicas: Replicas
    isr: Replicas
    removing_replicas: Replicas = ()
    adding_replicas: Replicas = ()
    leader: int = NO_LEADER
    leader_epoch: int = 0
    partition_epoch: int = 0


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each named slot of the frozen slotted dataclass ``cls``, checked to
    be every field of it, in order (a builder that skips one would leave it unset)."""
    if names != tuple(f.name for f in fields(cls)):
        raise AssertionError(f"{cls.__name__}: the builder's fields {names} are not its own")
    return tuple(cls.__dict__[n].__set__ for n in names)


_PR = _slot_setters(PartitionRecord, ("partition_id", "topic_id", "replicas", "isr",
                                      "removing_replicas", "adding_replicas", "leader",
                                      "leader_epoch", "partition_epoch"))


def new_partition_record(partition_id: int, topic_id: Uuid, replicas: Replicas, isr: Replicas,
                         removing_replicas: Replicas, adding_replicas: Replicas, leader: int,
                         leader_epoch: int, partition_epoch: int, *,
                         _new: Callable[[type], Any] = object.__new__,
                         _s: tuple[Callable[[Any, Any], None], ...] = _PR) -> PartitionRecord:
    """``PartitionRecord(...)`` with every field given, ~2.5x cheaper: the frozen
    dataclass's ``__init__`` calls ``object.__setattr__`` by name per field; this sets the
    slots through their descriptors. Same value, as immutable (``__setattr__`` still
    refuses); for the decoder's hot path, which has already checked every field."""
    self = _new(PartitionRecord)
    _s[0](self, partition_id)
    _s[1](self, topic_id)
    _s[2](self, replicas)
    _s[3](self, isr)
    _s[4](self, removing_replicas)
    _s[5](self, adding_replicas)
    _s[6](self, leader)
    _s[7](self, leader_epoch)
    _s[8](self, partition_epoch)
    return self  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    TYPE: ClassVar[int] = 4
    resource_type: int  # 2 TOPIC, 4 BROKER (Kafka's ConfigResource.Type)
    resource_name: str
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """Only what changed: ``None`` (or ``LEADER_UNCHANGED``) means unchanged."""

    TYPE: ClassVar[int] = 5
    partition_id: int
    topic_id: Uuid
    isr: Replicas | None = None  # tag 0
    leader: int = LEADER_UNCHANGED  # tag 1
    replicas: Replicas | None = None  # tag 2
    removing_replicas: Replicas | None = None  # tag 3
    adding_replicas: Replicas | None = None  # tag 4


_PCR = _slot_setters(PartitionChangeRecord, ("partition_id", "topic_id", "isr", "leader",
                                             "replicas", "removing_replicas",
                                             "adding_replicas"))


def new_partition_change_record(partition_id: int, topic_id: Uuid, isr: Replicas | None,
                                leader: int, *,
                                _new: Callable[[type], Any] = object.__new__,
                                _s: tuple[Callable[[Any, Any], None], ...] = _PCR
                                ) -> PartitionChangeRecord:
    """``PartitionChangeRecord(partition_id, topic_id, isr, leader)`` (no reassignment
    field), set through the slots' descriptors as ``new_partition_record`` does: the
    decoder's fast path for a broker replaying 10,000 leadership and ISR changes."""
    self = _new(PartitionChangeRecord)
    _s[0](self, partition_id)
    _s[1](self, topic_id)
    _s[2](self, isr)
    _s[3](self, leader)
    _s[4](self, None)
    _s[5](self, None)
    _s[6](self, None)
    return self  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class AccessControlRecord:
    TYPE: ClassVar[int] = 6
    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class FenceBrokerRecord:
    TYPE: ClassVar[int] = 7
    id: int
    epoch: int


@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord:
    TYPE: ClassVar[int] = 8
    id: int
    epoch: int


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    TYPE: ClassVar[int] = 9
    topic_id: Uuid


@dataclass(frozen=True, slots=True)
class DelegationTokenRecord:
    TYPE: ClassVar[int] = 10
    owner: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int
    token_id: str


@dataclass(frozen=True, slots=True)
class CredentialInfo:
    mechanism: int
    salt: bytes
    salted_password: bytes
    iterations: int


@dataclass(frozen=True, slots=True)
class UserScramCredentialRecord:
    TYPE: ClassVar[int] = 11
    user_name: str
    credential_infos: tuple[CredentialInfo, ...]


@dataclass(frozen=True, slots=True)
class FeatureLevelRecord:
    TYPE: ClassVar[int] = 12
    name: str
    min_feature_level: int
    max_feature_level: int


@dataclass(frozen=True, slots=True)
class TopicWithFailures:
    topic_id: Uuid
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FailedReplicasRecord:
    TYPE: ClassVar[int] = 13
    broker_id: int
    topics: tuple[TopicWithFailures, ...]


@dataclass(frozen=True, slots=True)
class EntityData:
    entity_type: str
    entity_name: str | None


@dataclass(frozen=True, slots=True)
class QuotaRecord:
    TYPE: ClassVar[int] = 14
    entity: tuple[EntityData, ...]
    key: str
    value: float
    remove: bool


FENCE_CHANGE_NONE, FENCE_CHANGE_FENCED, FENCE_CHANGE_UNFENCED = 0, 1, -1


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    """A registered broker's flags changed. ``fenced``: 1 fenced, -1 unfenced, 0 unchanged;
    ``in_controlled_shutdown`` (version 1): 1 entered controlled shutdown, 0 unchanged."""

    TYPE: ClassVar[int] = 17
    broker_id: int
    broker_epoch: int
    fenced: int = FENCE_CHANGE_NONE  # tag 0
    in_controlled_shutdown: int = 0  # tag 1, version 1+


MetadataRecord = (
    RegisterBrokerRecord | UnregisterBrokerRecord | TopicRecord | PartitionRecord | ConfigRecord
    | PartitionChangeRecord | AccessControlRecord | FenceBrokerRecord | UnfenceBrokerRecord
    | RemoveTopicRecord | DelegationTokenRecord | UserScramCredentialRecord | FeatureLevelRecord
    | FailedReplicasRecord | QuotaRecord | BrokerRegistrationChangeRecord
)

RECORD_CLASSES: dict[int, type] = {cls.TYPE: cls for cls in (
    RegisterBrokerRecord, UnregisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord,
    PartitionChangeRecord, AccessControlRecord, FenceBrokerRecord, UnfenceBrokerRecord,
    RemoveTopicRecord, DelegationTokenRecord, UserScramCredentialRecord, FeatureLevelRecord,
    FailedReplicasRecord, QuotaRecord, BrokerRegistrationChangeRecord,
)}
"""Record type number -> class: the one table the codec, the JSON form and the image use."""
