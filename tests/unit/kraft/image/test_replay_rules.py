"""Replay rules of the metadata image, one test per rule, each failing on the wrong rule."""

from __future__ import annotations

from typing import Any

import pytest

from fsm.kraft.image import (
    ImageError,
    MetadataImage,
    PartitionImage,
    image_from_records,
    membership_of,
    snapshot_records,
)
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    NO_LEADER,
    AccessControlRecord,
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    CredentialInfo,
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
    TopicRecord,
    TopicWithFailures,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)

T1, T2 = uuid_of(1), uuid_of(2)
TOPIC, BROKER = 2, 4  # ConfigRecord resource types


def register(broker_id: int, epoch: int, *, fenced: bool = True,
             in_controlled_shutdown: bool = False, incarnation: int = 0) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id, uuid_of(100 + incarnation), epoch,
                                (BrokerEndpoint("PLAINTEXT", f"h{broker_id}", 9092),), (),
                                None, fenced, in_controlled_shutdown)


def cluster() -> MetadataImage:
    """Brokers 1-3 (epochs 10-12, 1 and 2 unfenced), topic "t" (T1) with partition 0 led by 1
    (leader epoch 4, partition epoch 7), topic "u" (T2) with partition 0 and a topic config
    each, a broker config."""
    return image_from_records([
        register(1, 10, fenced=False), register(2, 11, fenced=False), register(3, 12),
        TopicRecord("t", T1),
        PartitionRecord(0, T1, (1, 2, 3), (1, 2), leader=1, leader_epoch=4, partition_epoch=7),
        TopicRecord("u", T2), PartitionRecord(0, T2, (2, 3), (2, 3), leader=2),
        ConfigRecord(TOPIC, "t", "retention.ms", "1"), ConfigRecord(TOPIC, "u", "retention.ms", "2"),
        ConfigRecord(BROKER, "1", "log.dirs", "/d"),
    ])


def partition(image: MetadataImage, topic_id: bytes = T1, pid: int = 0) -> PartitionImage:
    p = image.partition(topic_id, pid)
    assert p is not None
    return p


# -- partitions: epochs and fields ----------------------------------------------------------
def test_an_isr_only_change_bumps_the_partition_epoch_but_not_the_leader_epoch() -> None:
    """KAFKA-15021: bumping the leader epoch on an ISR-only change fenced followers' fetches."""
    image = cluster()
    image.apply(PartitionChangeRecord(0, T1, isr=(1,)))
    p = partition(image)
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1,), 1, 4, 8)


def test_every_change_bumps_the_partition_epoch() -> None:
    image = cluster()
    for n, change in enumerate([PartitionChangeRecord(0, T1, replicas=(1, 2, 3, 4)),
                                PartitionChangeRecord(0, T1, adding_replicas=(4,)),
                                PartitionChangeRecord(0, T1, adding_replicas=()),
                                PartitionChangeRecord(0, T1)], start=1):
        image.apply(change)
        assert partition(image).partition_epoch == 7 + n
        assert partition(image).leader_epoch == 4


def test_a_change_that_carries_a_leader_bumps_both_epochs() -> None:
    image = cluster()
    image.apply(PartitionChangeRecord(0, T1, isr=(2,), leader=2))
    p = partition(image)
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((2,), 2, 5, 8)
    image.apply(PartitionChangeRecord(0, T1, leader=2))  # the same leader, carried: a new epoch
    assert (partition(image).leader_epoch, partition(image).partition_epoch) == (6, 9)


def test_leader_minus_one_means_no_leader() -> None:
    image = cluster()
    image.apply(PartitionChangeRecord(0, T1, isr=(), leader=NO_LEADER))
    p = partition(image)
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (NO_LEADER, (), 5, 8)
    image.apply(PartitionChangeRecord(0, T1, isr=(3,), leader=3))
    assert (partition(image).leader, partition(image).leader_epoch) == (3, 6)


def test_none_fields_are_unchanged_and_empty_lists_are_not_none() -> None:
    image = cluster()
    image.apply(PartitionChangeRecord(0, T1, replicas=(1, 2, 3, 4), adding_replicas=(4,),
                                      removing_replicas=(3,)))
    p = partition(image)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas, p.leader) == \
        ((1, 2, 3, 4), (1, 2), (4,), (3,), 1)
    image.apply(PartitionChangeRecord(0, T1, isr=(1, 2, 4)))
    p = partition(image)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas, p.leader) == \
        ((1, 2, 3, 4), (1, 2, 4), (4,), (3,), 1)
    image.apply(PartitionChangeRecord(0, T1, replicas=(1, 2, 4), adding_replicas=(),
                                      removing_replicas=()))
    p = partition(image)
    assert (p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == \
        ((1, 2, 4), (1, 2, 4), (), ())
    assert not p.reassigning


def test_a_change_touches_only_its_partition() -> None:
    image = cluster()
    image.apply(PartitionRecord(1, T1, (3, 1), (3, 1), leader=3))
    other, neighbour = partition(image, T2), partition(image, T1, 1)
    image.apply(PartitionChangeRecord(0, T1, isr=(1,), leader=1))
    assert partition(image, T2) == other and partition(image, T1, 1) == neighbour


# -- brokers ------------------------------------------------------------------------------
def test_fencing_ends_a_controlled_shutdown() -> None:
    for fence in (FenceBrokerRecord(1, 10), BrokerRegistrationChangeRecord(1, 10, fenced=1)):
        image = cluster()
        image.apply(BrokerRegistrationChangeRecord(1, 10, in_controlled_shutdown=1))
        assert membership_of(image.brokers[1]) == "controlled_shutdown"
        image.apply(fence)
        b = image.brokers[1]
        assert (b.fenced, b.in_controlled_shutdown, membership_of(b)) == (True, False, "fenced")
        image.apply(UnfenceBrokerRecord(1, 10))
        assert membership_of(image.brokers[1]) == "active"


def test_a_fenced_broker_does_not_enter_controlled_shutdown() -> None:
    """Fenced wins, in every order a registration change can say it; otherwise the image holds
    a state (fenced and in controlled shutdown) that its snapshot does not rebuild."""
    for changes in ([BrokerRegistrationChangeRecord(3, 12, in_controlled_shutdown=1)],
                    [BrokerRegistrationChangeRecord(1, 10, fenced=1, in_controlled_shutdown=1)],
                    [FenceBrokerRecord(1, 10),
                     BrokerRegistrationChangeRecord(1, 10, in_controlled_shutdown=1)]):
        image = cluster()
        image.apply_all(changes)
        fenced = [b for b in image.brokers.values() if b.fenced]
        assert fenced and not any(b.in_controlled_shutdown for b in fenced)
        assert image_from_records(snapshot_records(image)) == image


def test_an_unfencing_change_may_enter_controlled_shutdown_at_once() -> None:
    image = cluster()
    image.apply(BrokerRegistrationChangeRecord(3, 12, fenced=-1, in_controlled_shutdown=1))
    assert membership_of(image.brokers[3]) == "controlled_shutdown"
    assert image_from_records(snapshot_records(image)) == image


def test_registration_flags_are_read_as_registered() -> None:
    image = image_from_records([register(1, 5, fenced=False, in_controlled_shutdown=True),
                                register(2, 6, fenced=True, in_controlled_shutdown=True)])
    assert membership_of(image.brokers[1]) == "controlled_shutdown"
    assert membership_of(image.brokers[2]) == "fenced"
    assert not image.brokers[2].in_controlled_shutdown


def test_re_registration_needs_a_higher_epoch() -> None:
    for epoch in (9, 10):
        image = cluster()
        before = image.copy()
        with pytest.raises(ImageError, match="RegisterBrokerRecord"):
            image.apply(register(1, epoch, incarnation=1))
        assert image == before
    image = cluster()
    image.apply(register(1, 13, incarnation=1))
    b = image.brokers[1]
    assert (b.epoch, b.incarnation_id, b.fenced) == (13, uuid_of(101), True)
    with pytest.raises(ImageError, match="FenceBrokerRecord"):
        image.apply(FenceBrokerRecord(1, 10))  # the old epoch is gone


def test_unregister_drops_the_broker_and_allows_a_new_registration() -> None:
    image = cluster()
    image.apply(UnregisterBrokerRecord(3, 12))
    assert 3 not in image.brokers and membership_of(image.brokers.get(3)) == "unregistered"
    image.apply(register(3, 2))
    assert image.brokers[3].epoch == 2


# -- topics and configs ---------------------------------------------------------------------
def test_remove_topic_drops_the_topic_its_name_and_its_configs() -> None:
    image = cluster()
    image.apply(RemoveTopicRecord(T1))
    assert T1 not in image.topics and image.topic("t") is None and "t" not in image.topic_ids
    assert image.partition(T1, 0) is None
    assert (TOPIC, "t") not in image.configs
    assert image.configs == {(TOPIC, "u"): {"retention.ms": "2"}, (BROKER, "1"): {"log.dirs": "/d"}}
    assert image.topic("u") is not None and image.partition_count() == 1
    image.apply(TopicRecord("t", uuid_of(3)))  # the name is free again
    assert image.topic_ids["t"] == uuid_of(3) and not image.topics[uuid_of(3)].partitions


def test_a_config_value_none_deletes_the_key() -> None:
    image = cluster()
    image.apply(ConfigRecord(TOPIC, "t", "cleanup.policy", "compact"))
    image.apply(ConfigRecord(TOPIC, "t", "retention.ms", None))
    assert image.configs[(TOPIC, "t")] == {"cleanup.policy": "compact"}
    image.apply(ConfigRecord(TOPIC, "t", "cleanup.policy", None))
    image.apply(ConfigRecord(TOPIC, "t", "never.set", None))
    assert (TOPIC, "t") not in image.configs
    reference = cluster()
    del reference.configs[(TOPIC, "t")]
    assert image == reference
    image.apply(ConfigRecord(BROKER, "1", "log.dirs", "/e"))
    assert image.configs[(BROKER, "1")] == {"log.dirs": "/e"}


# -- strict replay --------------------------------------------------------------------------
@pytest.mark.parametrize("record", [
    PartitionRecord(0, uuid_of(9), (1,), (1,), leader=1),
    PartitionChangeRecord(0, uuid_of(9), isr=(1,)),
    PartitionChangeRecord(5, T1, isr=(1,)),
    FenceBrokerRecord(1, 11),
    FenceBrokerRecord(7, 1),
    UnfenceBrokerRecord(3, 13),
    BrokerRegistrationChangeRecord(2, 10, fenced=1),
    TopicRecord("t", uuid_of(9)),
    TopicRecord("new", T2),
    UnregisterBrokerRecord(7, 1),
    UnregisterBrokerRecord(1, 9),
    RemoveTopicRecord(uuid_of(9)),
    register(2, 11),
    BrokerEndpoint("PLAINTEXT", "h", 1),  # a value, not a record
    "TopicRecord",
], ids=lambda r: type(r).__name__)
def test_a_record_that_does_not_fit_raises_an_image_error_naming_it(record: Any) -> None:
    image = cluster()
    before = snapshot_records(image)
    with pytest.raises(ImageError) as info:
        image.apply(record)
    assert info.value.record is record
    assert type(record).__name__ in str(info.value) and repr(record) in str(info.value)
    assert snapshot_records(image) == before, "a refused record changes nothing"


# -- copy and equality ----------------------------------------------------------------------
def every_kind_of_change() -> list[Any]:
    return [
        register(4, 20), FenceBrokerRecord(1, 10), UnfenceBrokerRecord(3, 12),
        BrokerRegistrationChangeRecord(2, 11, in_controlled_shutdown=1),
        UnregisterBrokerRecord(3, 12), TopicRecord("v", uuid_of(5)),
        PartitionRecord(1, T1, (2, 1), (2, 1), leader=2),
        PartitionChangeRecord(0, T1, isr=(1,), leader=1), RemoveTopicRecord(T2),
        ConfigRecord(TOPIC, "t", "retention.ms", "9"), ConfigRecord(BROKER, "1", "log.dirs", None),
        FeatureLevelRecord("metadata.version", 1, 7),
        AccessControlRecord(2, "t", 3, "User:alice", "*", 3, 3),
        DelegationTokenRecord("alice", ("bob",), 1, 3, 2, "tok"),
        UserScramCredentialRecord("alice", (CredentialInfo(1, b"s", b"p", 4096),)),
        FailedReplicasRecord(1, (TopicWithFailures(T1, (0,)),)),
        QuotaRecord((EntityData("user", "alice"),), "producer_byte_rate", 1e6, False),
    ]


def test_a_copy_is_independent() -> None:
    original, reference = cluster(), cluster()
    copy = original.copy()
    copy.apply_all(every_kind_of_change())
    copy.configs[(TOPIC, "t")]["direct"] = "x"
    copy.topics[T1].partitions[9] = PartitionImage((1,), (1,))
    copy.brokers.clear()
    assert original == reference
    assert snapshot_records(original) == snapshot_records(reference)
    copy2 = original.copy()
    original.apply_all(every_kind_of_change())  # and the other way round
    assert copy2 == reference


@pytest.mark.parametrize("change", every_kind_of_change(), ids=lambda r: type(r).__name__)
def test_equality_sees_every_kind_of_change(change: Any) -> None:
    """The property tests lean on ``==``: it must notice a change in any part of the image."""
    changed = cluster()
    changed.apply(change)
    assert changed != cluster()
    assert image_from_records(snapshot_records(changed)) == changed
