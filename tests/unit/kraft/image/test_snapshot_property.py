"""Snapshots, as a property over random valid logs: replaying ``snapshot_records(image)`` gives
an equal image, the snapshot is canonical (the snapshot of the rebuilt image is the same list)
and smallest (one record per entity of the image, no record that only changes or removes)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.kraft.image import MetadataImage, image_from_records, snapshot_records
from fsm.kraft.records.values import (
    AccessControlRecord,
    ConfigRecord,
    DelegationTokenRecord,
    FailedReplicasRecord,
    FeatureLevelRecord,
    PartitionRecord,
    QuotaRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UserScramCredentialRecord,
)

from .strategies import valid_logs


def entity_of(record: Any) -> tuple[Any, ...]:
    """The one entity a snapshot record describes; a record that only changes or removes
    something (PartitionChange, Fence, Unfence, BrokerRegistrationChange, RemoveTopic,
    UnregisterBroker, a quota removal, a config deletion) has no place in a snapshot."""
    match record:
        case FeatureLevelRecord():
            return ("feature", record.name)
        case RegisterBrokerRecord():
            return ("broker", record.broker_id)
        case TopicRecord():
            return ("topic", record.topic_id)
        case PartitionRecord():
            return ("partition", record.topic_id, record.partition_id)
        case ConfigRecord(value=str()):
            return ("config", record.resource_type, record.resource_name, record.name)
        case AccessControlRecord():
            return ("acl", record)
        case DelegationTokenRecord():
            return ("token", record.token_id)
        case UserScramCredentialRecord():
            return ("scram", record.user_name)
        case FailedReplicasRecord():
            return ("failed", record.broker_id)
        case QuotaRecord(remove=False):
            return ("quota", record.entity, record.key)
    raise AssertionError(f"not a snapshot record: {record!r}")


def entity_count(image: MetadataImage) -> int:
    return (len(image.features) + len(image.brokers) + len(image.topics)
            + image.partition_count() + sum(len(c) for c in image.configs.values())
            + len(image.acls) + len(image.delegation_tokens) + len(image.scram_credentials)
            + len(image.failed_replicas) + len(image.quotas))


@settings(max_examples=300, deadline=None)
@given(valid_logs())
def test_a_snapshot_rebuilds_the_image_and_is_canonical_and_smallest(log: list[Any]) -> None:
    image = image_from_records(log)
    snapshot = snapshot_records(image)
    rebuilt = image_from_records(snapshot)
    assert rebuilt == image
    assert snapshot_records(rebuilt) == snapshot
    entities = [entity_of(r) for r in snapshot]
    assert len(set(entities)) == len(entities), "two records describe one entity"
    assert len(snapshot) == entity_count(image)
    topic_names = [r.name for r in snapshot if isinstance(r, TopicRecord)]
    assert len(set(topic_names)) == len(topic_names)


@settings(max_examples=200, deadline=None)
@given(valid_logs(), st.data())
def test_replay_goes_on_from_a_snapshot_as_from_the_log(log: list[Any], data: Any) -> None:
    """A replica that loads a snapshot of a prefix and replays the rest ends where one that
    replayed the whole log ends: the snapshot keeps everything later records depend on
    (broker epochs, leader and partition epochs, names)."""
    cut = data.draw(st.integers(0, len(log)))
    from_snapshot = image_from_records(snapshot_records(image_from_records(log[:cut])))
    from_snapshot.apply_all(log[cut:])
    assert from_snapshot == image_from_records(log)


@settings(max_examples=200, deadline=None)
@given(valid_logs(), st.data())
def test_a_copy_goes_its_own_way(log: list[Any], data: Any) -> None:
    """Replaying the rest of the log onto a copy leaves the original as it was, and the
    copy ends where replaying the whole log ends."""
    cut = data.draw(st.integers(0, len(log)))
    original = image_from_records(log[:cut])
    before = snapshot_records(original)
    copy = original.copy()
    assert copy == original
    copy.apply_all(log[cut:])
    assert snapshot_records(original) == before
    assert original == image_from_records(log[:cut])
    assert copy == image_from_records(log)
