"""``MetadataImage``: the cluster's metadata as replaying records builds it.

One ``apply`` per record type, chosen from a table by the record's class. Replay is strict: a
record that does not fit the image (a partition of an unknown topic, a fence with the wrong
broker epoch) raises ``ImageError`` naming the record, because a log that does not replay is a
bug upstream, never something to paper over. The image is mutable for speed; ``copy`` gives an
independent one (partitions and registrations are immutable values and are shared)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsm.kraft.image.brokers import BrokerRegistration
from fsm.kraft.image.partitions import (
    PartitionImage,
    TopicImage,
    new_partition_image,
    new_partition_images,
)
from fsm.kraft.records.uuid import Uuid, uuid_to_base64
from fsm.kraft.records.values import (
    FENCE_CHANGE_FENCED,
    FENCE_CHANGE_UNFENCED,
    AccessControlRecord,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    DelegationTokenRecord,
    EntityData,
    FailedReplicasRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    QuotaRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    Replicas,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)


class ImageError(ValueError):
    """A record that cannot be replayed onto this image."""

    def __init__(self, record: object, why: str) -> None:
        super().__init__(f"cannot replay {type(record).__name__}: {why} ({record!r})")
        self.record = record


ConfigKey = tuple[int, str]  # (resource type, resource name)
QuotaKey = tuple[tuple[EntityData, ...], str]  # (entity, key)


@dataclass(eq=False, slots=True)
class MetadataImage:
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    topics: dict[Uuid, TopicImage] = field(default_factory=dict)
    topic_ids: dict[str, Uuid] = field(default_factory=dict)
    configs: dict[ConfigKey, dict[str, str]] = field(default_factory=dict)
    features: dict[str, tuple[int, int]] = field(default_factory=dict)
    acls: set[AccessControlRecord] = field(default_factory=set)
    delegation_tokens: dict[str, DelegationTokenRecord] = field(default_factory=dict)
    scram_credentials: dict[str, UserScramCredentialRecord] = field(default_factory=dict)
    failed_replicas: dict[int, FailedReplicasRecord] = field(default_factory=dict)
    quotas: dict[QuotaKey, float] = field(default_factory=dict)
    _lists: dict[Replicas, Replicas] = field(default_factory=dict, repr=False)
    """One tuple per distinct replica list (memory: a million partitions share a few hundred)."""

    # -- replay ---------------------------------------------------------------------------
    def apply(self, record: Any) -> None:
        try:
            handler = _APPLY[type(record)]
        except KeyError:
            raise ImageError(record, "not a metadata record") from None
        handler(self, record)

    def apply_all(self, records: Iterable[Any]) -> None:
        """``apply`` each record in turn (the dispatch inlined: a snapshot is a million)."""
        handlers = _APPLY
        for r in records:
            handler = handlers.get(type(r))
            if handler is None:
                raise ImageError(r, "not a metadata record")
            handler(self, r)

    def apply_partitions(self, topic_id: Uuid, partition_ids: Sequence[int],
                         replicas: Sequence[Replicas], isrs: Sequence[Replicas],
                         removing: Sequence[Replicas], adding: Sequence[Replicas],
                         leaders: Sequence[int], leader_epochs: Sequence[int],
                         partition_epochs: Sequence[int]) -> bool:
        """``apply`` of ``PartitionRecord(partition_ids[k], topic_id, replicas[k], ...)`` for
        every ``k`` in turn, given as columns (equal lengths) -- one topic's partitions as a
        snapshot lists them, with no record built (a snapshot loader reads them so,
        ``adapters.raft_log.snapshot_image``). False, and the image unchanged, if the topic is
        unknown (``apply`` would raise ``ImageError`` on the first record)."""
        t = self.topics.get(topic_id)
        if t is None:
            return False
        intern = self._lists.setdefault
        t.partitions.update(zip(partition_ids, new_partition_images(
            list(map(intern, replicas, replicas)), list(map(intern, isrs, isrs)), removing,
            adding, leaders, leader_epochs, partition_epochs), strict=True))
        return True

    # -- reading --------------------------------------------------------------------------
    def topic(self, name: str) -> TopicImage | None:
        tid = self.topic_ids.get(name)
        return None if tid is None else self.topics[tid]

    def partition(self, topic_id: Uuid, partition_id: int) -> PartitionImage | None:
        t = self.topics.get(topic_id)
        return None if t is None else t.partitions.get(partition_id)

    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())

    def copy(self) -> MetadataImage:
        return MetadataImage(
            dict(self.brokers), {k: t.copy() for k, t in self.topics.items()},
            dict(self.topic_ids), {k: dict(v) for k, v in self.configs.items()},
            dict(self.features), set(self.acls), dict(self.delegation_tokens),
            dict(self.scram_credentials), dict(self.failed_replicas), dict(self.quotas),
            self._lists)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataImage):
            return NotImplemented
        return (self.brokers == other.brokers and self.topic_ids == other.topic_ids
                and {k: (t.name, t.partitions) for k, t in self.topics.items()}
                == {k: (t.name, t.partitions) for k, t in other.topics.items()}
                and self.configs == other.configs and self.features == other.features
                and self.acls == other.acls and self.delegation_tokens == other.delegation_tokens
                and self.scram_credentials == other.scram_credentials
                and self.failed_replicas == other.failed_replicas and self.quotas == other.quotas)

    __hash__ = None  # type: ignore[assignment]

    # -- helpers for the handlers -----------------------------------------------------------
    def _list(self, replicas: Replicas) -> Replicas:
        return self._lists.setdefault(replicas, replicas)

    def _registered(self, record: object, broker_id: int, epoch: int) -> BrokerRegistration:
        reg = self.brokers.get(broker_id)
        if reg is None:
            raise ImageError(record, f"broker {broker_id} is not registered")
        if reg.epoch != epoch:
            raise ImageError(record, f"broker {broker_id} has epoch {reg.epoch}, not {epoch}")
        return reg


# -- one handler per record type ------------------------------------------------------------
def _register(img: MetadataImage, r: RegisterBrokerRecord) -> None:
    old = img.brokers.get(r.broker_id)
    if old is not None and r.broker_epoch <= old.epoch:
        raise ImageError(r, f"epoch {r.broker_epoch} is not above broker {r.broker_id}'s "
                            f"current epoch {old.epoch}")
    img.brokers[r.broker_id] = BrokerRegistration.of(r)


def _unregister(img: MetadataImage, r: UnregisterBrokerRecord) -> None:
    img._registered(r, r.broker_id, r.broker_epoch)
    del img.brokers[r.broker_id]


def _topic(img: MetadataImage, r: TopicRecord) -> None:
    if r.topic_id in img.topics:
        raise ImageError(r, f"topic id {uuid_to_base64(r.topic_id)} exists")
    if r.name in img.topic_ids:
        raise ImageError(r, f"topic name {r.name!r} exists")
    img.topics[r.topic_id] = TopicImage(r.name, r.topic_id)
    img.topic_ids[r.name] = r.topic_id


def _partition(img: MetadataImage, r: PartitionRecord) -> None:
    t = img.topics.get(r.topic_id)
    if t is None:
        raise ImageError(r, "unknown topic id")
    lists = img._lists
    replicas = lists.setdefault(r.replicas, r.replicas)
    isr = lists.setdefault(r.isr, r.isr)
    t.partitions[r.partition_id] = new_partition_image(
        replicas, isr, r.removing_replicas, r.adding_replicas, r.leader, r.leader_epoch,
        r.partition_epoch)


def _partition_change(img: MetadataImage, r: PartitionChangeRecord) -> None:
    t = img.topics.get(r.topic_id)
    p = None if t is None else t.partitions.get(r.partition_id)
    if t is None or p is None:
        raise ImageError(r, "unknown partition")
    t.partitions[r.partition_id] = p.merge(r, img._list)


def _config(img: MetadataImage, r: ConfigRecord) -> None:
    key = (r.resource_type, r.resource_name)
    if r.value is None:
        entries = img.configs.get(key)
        if entries is not None:
            entries.pop(r.name, None)
            if not entries:
                del img.configs[key]
    else:
        img.configs.setdefault(key, {})[r.name] = r.value


def _fence(img: MetadataImage, r: FenceBrokerRecord) -> None:
    img.brokers[r.id] = img._registered(r, r.id, r.epoch).fence()


def _unfence(img: MetadataImage, r: UnfenceBrokerRecord) -> None:
    img.brokers[r.id] = img._registered(r, r.id, r.epoch).unfence()


def _registration_change(img: MetadataImage, r: BrokerRegistrationChangeRecord) -> None:
    reg = img._registered(r, r.broker_id, r.broker_epoch)
    if r.fenced == FENCE_CHANGE_FENCED:
        reg = reg.fence()
    elif r.fenced == FENCE_CHANGE_UNFENCED:
        reg = reg.unfence()
    if r.in_controlled_shutdown == 1:
        reg = reg.enter_controlled_shutdown()
    img.brokers[r.broker_id] = reg


def _remove_topic(img: MetadataImage, r: RemoveTopicRecord) -> None:
    t = img.topics.pop(r.topic_id, None)
    if t is None:
        raise ImageError(r, "unknown topic id")
    del img.topic_ids[t.name]
    img.configs.pop((2, t.name), None)


def _acl(img: MetadataImage, r: AccessControlRecord) -> None:
    img.acls.add(r)


def _token(img: MetadataImage, r: DelegationTokenRecord) -> None:
    img.delegation_tokens[r.token_id] = r


def _scram(img: MetadataImage, r: UserScramCredentialRecord) -> None:
    img.scram_credentials[r.user_name] = r


def _feature(img: MetadataImage, r: FeatureLevelRecord) -> None:
    img.features[r.name] = (r.min_feature_level, r.max_feature_level)


def _failed(img: MetadataImage, r: FailedReplicasRecord) -> None:
    img.failed_replicas[r.broker_id] = r


def _quota(img: MetadataImage, r: QuotaRecord) -> None:
    key = (r.entity, r.key)
    if r.remove:
        img.quotas.pop(key, None)
    else:
        img.quotas[key] = r.value


_APPLY: dict[type, Callable[[MetadataImage, Any], None]] = {
    RegisterBrokerRecord: _register, UnregisterBrokerRecord: _unregister, TopicRecord: _topic,
    PartitionRecord: _partition, ConfigRecord: _config, PartitionChangeRecord: _partition_change,
    AccessControlRecord: _acl, FenceBrokerRecord: _fence, UnfenceBrokerRecord: _unfence,
    RemoveTopicRecord: _remove_topic, DelegationTokenRecord: _token,
    UserScramCredentialRecord: _scram, FeatureLevelRecord: _feature,
    FailedReplicasRecord: _failed, QuotaRecord: _quota,
    BrokerRegistrationChangeRecord: _registration_change,
}
"""Record class -> its replay: the one dispatch, consulted by ``MetadataImage.apply``."""
